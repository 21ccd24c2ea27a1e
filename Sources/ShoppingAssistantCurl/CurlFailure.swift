import CLibcurl
import CLibcurlShim
import ShoppingAssistant

/// Sorts a failed libcurl transfer into "nothing reached the server" and "the request may have
/// reached it" (wire.md § Errors, D5).
///
/// Certain (`cannotConnect`) only when both hold: the code is one libcurl reports before a
/// request can be sent (name resolution, connecting, the TLS handshake and its verification,
/// a URL or protocol refused), and the transfer never reached the point of sending (libcurl's
/// `CURLOPT_PREREQFUNCTION` was not called). Everything else — a reset, an empty or cut-short
/// answer, a malformed status line, header or chunk, a broken gzip stream, an HTTP/0.9 answer —
/// is `connectionLost`: when the transport cannot tell, the engine must reconcile rather than
/// assume the server saw nothing.
enum CurlFailure {
    /// Codes that libcurl reports only before it sends anything.
    static let beforeSending: Set<UInt32> = [
        CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_NOT_BUILT_IN, CURLE_COULDNT_RESOLVE_PROXY,
        CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION,
        CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
        CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CRL_BADFILE,
        CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_PROXY,
        CURLE_SSL_CLIENTCERT, CURLE_QUIC_CONNECT_ERROR,
    ].map(\.rawValue).reduce(into: []) { $0.insert($1) }

    /// `keepsDeadline`: libcurl kept the transport's deadline (`CURLOPT_TIMEOUT_MS`), the only
    /// timeout the transport sets; running out of it is `timedOut` whatever was or was not sent,
    /// as a deadline on any other clock says.
    static func error(code: CURLcode, requestStarted: Bool, keepsDeadline: Bool, message: String) -> any Error {
        let description = "\(message) (libcurl \(code.rawValue))"
        if code == CURLE_OPERATION_TIMEDOUT {
            return requestStarted || keepsDeadline
                ? HTTPTransportError.timedOut : HTTPTransportError.cannotConnect(description)
        }
        if !requestStarted, beforeSending.contains(code.rawValue) {
            return HTTPTransportError.cannotConnect(description)
        }
        return HTTPTransportError.connectionLost(description)
    }
}
