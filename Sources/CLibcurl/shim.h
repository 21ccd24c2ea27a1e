/// The system libcurl headers, exposed to Swift as the `CLibcurl` module.
///
/// `pkg-config libcurl` gives the include path (`/usr/include/x86_64-linux-gnu` on Debian's
/// multi-arch layout), where `curl/curl.h` declares the easy and multi interfaces.
#ifndef CLIBCURL_SHIM_H
#define CLIBCURL_SHIM_H

#include <curl/curl.h>

#endif
