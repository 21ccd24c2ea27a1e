/// Fixed-argument wrappers around libcurl, described in include/CLibcurlShim.h.

#include "CLibcurlShim.h"

// The type an option takes is encoded in its number (curl.h: CURLOPTTYPE_*).
static int option_is_long(CURLoption option) { return option < CURLOPTTYPE_OBJECTPOINT; }
static int option_is_pointer(CURLoption option) {
    return option >= CURLOPTTYPE_OBJECTPOINT && option < CURLOPTTYPE_FUNCTIONPOINT;
}
static int option_is_off_t(CURLoption option) {
    return option >= CURLOPTTYPE_OFF_T && option < CURLOPTTYPE_BLOB;
}

CURLcode cst_easy_set_long(CURL *easy, CURLoption option, long value) {
    if (!option_is_long(option)) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(easy, option, value);
}

CURLcode cst_easy_set_off_t(CURL *easy, CURLoption option, curl_off_t value) {
    if (!option_is_off_t(option)) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(easy, option, value);
}

CURLcode cst_easy_set_string(CURL *easy, CURLoption option, const char *value) {
    if (!option_is_pointer(option) || option == CURLOPT_HTTPHEADER) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(easy, option, value);
}

CURLcode cst_easy_set_pointer(CURL *easy, CURLoption option, const void *value) {
    if (!option_is_pointer(option) || option == CURLOPT_HTTPHEADER) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(easy, option, value);
}

CURLcode cst_easy_set_list(CURL *easy, CURLoption option, struct curl_slist *list) {
    if (option != CURLOPT_HTTPHEADER) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(easy, option, list);
}

CURLcode cst_easy_set_data_function(CURL *easy, CURLoption option, cst_data_function function) {
    if (option != CURLOPT_WRITEFUNCTION && option != CURLOPT_HEADERFUNCTION) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(easy, option, function);
}

CURLcode cst_easy_set_prereq_function(CURL *easy, cst_prereq_function function) {
    return curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, function);
}

CURLcode cst_easy_get_long(CURL *easy, CURLINFO info, long *value) {
    if ((info & CURLINFO_TYPEMASK) != CURLINFO_LONG) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_getinfo(easy, info, value);
}

CURLcode cst_easy_get_off_t(CURL *easy, CURLINFO info, curl_off_t *value) {
    if ((info & CURLINFO_TYPEMASK) != CURLINFO_OFF_T) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_getinfo(easy, info, value);
}

CURLcode cst_easy_get_private(CURL *easy, void **value) {
    char *pointer = NULL;
    CURLcode code = curl_easy_getinfo(easy, CURLINFO_PRIVATE, &pointer);
    *value = pointer;
    return code;
}

CURLMcode cst_multi_set_long(CURLM *multi, CURLMoption option, long value) {
    if (option >= CURLOPTTYPE_OBJECTPOINT) return CURLM_BAD_FUNCTION_ARGUMENT;
    return curl_multi_setopt(multi, option, value);
}

CURLcode cst_message_result(const CURLMsg *message) { return message->data.result; }
