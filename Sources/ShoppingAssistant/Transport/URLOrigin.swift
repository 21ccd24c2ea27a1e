import Foundation

/// A URL's origin — scheme, host and port, the default port filled in, compared exactly — as
/// credentials are scoped: the Gravity key goes only to Gravity's origin, and a redirect to
/// another origin leaves the request's credentials behind (wire.md).
struct URLOrigin: Hashable, Sendable {
    let scheme: String
    let host: String
    let port: Int

    /// `nil` for a URL without a scheme or host, which is no origin at all.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        self.scheme = scheme
        self.host = host
        port = url.port ?? (scheme == "https" ? 443 : 80)
    }
}
