/// What each endpoint's requests allow the transport (`HTTPRequest.maximumResponseBytes` and
/// `redirectPolicy`), in one place so the clients set them with one word each.
///
/// Bodies: a reply carries its products and may be large; history holds replies; Gravity
/// answers and the rest are small, and a tracking pixel's body is never read at all.
/// Redirects: the two services' requests stay on the origin they were configured with (the
/// Gravity key never leaves Gravity, the Shopping API never reaches an unconfigured host);
/// tracking URLs may follow a few redirects that keep the scheme.
enum EndpointLimits {
    static let replyBytes = 8 * 1024 * 1024
    static let historyBytes = 8 * 1024 * 1024
    static let chooseBytes = 1024 * 1024
    static let eventBytes = 256 * 1024
    static let feedbackBytes = 64 * 1024
    static let trackingBytes = 64 * 1024

    static let serviceRedirects = HTTPRedirectPolicy.sameOrigin(limit: 3)
    static let trackingRedirects = HTTPRedirectPolicy.sameScheme(limit: 3)
}
