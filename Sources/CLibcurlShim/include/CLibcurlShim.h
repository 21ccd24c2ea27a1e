/// Fixed-argument wrappers around libcurl's variadic calls.
///
/// Swift cannot call C-variadic functions, and `curl_easy_setopt`, `curl_easy_getinfo` and
/// `curl_multi_setopt` take `...`. Each wrapper here passes one argument of one C type, and
/// checks that the option or info asked for takes that type (libcurl encodes it in the
/// number: `CURLOPTTYPE_*`, `CURLINFO_*` masks), returning `CURLE_BAD_FUNCTION_ARGUMENT`
/// otherwise, so a `long` can never be read as a pointer. Only Sources/ShoppingAssistantCurl
/// calls these.
#ifndef CLIBCURL_SHIM_H_WRAPPERS
#define CLIBCURL_SHIM_H_WRAPPERS

#include <curl/curl.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A write or header callback (`CURLOPT_WRITEFUNCTION`, `CURLOPT_HEADERFUNCTION`): returns
/// `count` to go on, anything else to abort the transfer.
typedef size_t (*cst_data_function)(char *bytes, size_t size, size_t count, void *context);

/// A `CURLOPT_PREREQFUNCTION` callback: the connection is up and the request is about to be
/// sent. Returns `CURL_PREREQFUNC_OK`.
typedef int (*cst_prereq_function)(void *context, char *primary_ip, char *local_ip, int primary_port,
                                   int local_port);

/// `curl_easy_setopt(easy, option, value)` for an option of type `long` (`CURLOPTTYPE_LONG`).
CURLcode cst_easy_set_long(CURL *easy, CURLoption option, long value);

/// `curl_easy_setopt(easy, option, value)` for an option of type `curl_off_t`.
CURLcode cst_easy_set_off_t(CURL *easy, CURLoption option, curl_off_t value);

/// `curl_easy_setopt(easy, option, value)` for a string option (`CURLOPTTYPE_STRINGPOINT`):
/// libcurl keeps a copy, so the string need only live for the call.
CURLcode cst_easy_set_string(CURL *easy, CURLoption option, const char *value);

/// `curl_easy_setopt(easy, option, value)` for a pointer libcurl keeps without copying
/// (`CURLOPT_POSTFIELDS`, `CURLOPT_ERRORBUFFER`, `CURLOPT_PRIVATE`, `CURLOPT_*DATA`): the caller
/// keeps it alive until the transfer is over.
CURLcode cst_easy_set_pointer(CURL *easy, CURLoption option, const void *value);

/// `curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list)`, the one list option used; the caller
/// frees the list after the transfer.
CURLcode cst_easy_set_list(CURL *easy, CURLoption option, struct curl_slist *list);

/// `curl_easy_setopt(easy, option, function)` for `CURLOPT_WRITEFUNCTION` or
/// `CURLOPT_HEADERFUNCTION`.
CURLcode cst_easy_set_data_function(CURL *easy, CURLoption option, cst_data_function function);

/// `curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, function)`.
CURLcode cst_easy_set_prereq_function(CURL *easy, cst_prereq_function function);

/// `curl_easy_getinfo(easy, info, &value)` for a `long` info (`CURLINFO_RESPONSE_CODE`).
CURLcode cst_easy_get_long(CURL *easy, CURLINFO info, long *value);

/// `curl_easy_getinfo(easy, info, &value)` for a `curl_off_t` info.
CURLcode cst_easy_get_off_t(CURL *easy, CURLINFO info, curl_off_t *value);

/// `curl_easy_getinfo(easy, CURLINFO_PRIVATE, &value)`.
CURLcode cst_easy_get_private(CURL *easy, void **value);

/// `curl_multi_setopt(multi, option, value)` for an option of type `long`.
CURLMcode cst_multi_set_long(CURLM *multi, CURLMoption option, long value);

/// The result of a finished transfer in a `CURLMSG_DONE` message (a member of a union).
CURLcode cst_message_result(const CURLMsg *message);

#ifdef __cplusplus
}
#endif

#endif
