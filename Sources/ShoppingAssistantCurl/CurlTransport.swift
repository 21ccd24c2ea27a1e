import Foundation
import ShoppingAssistant

/// The transport to pick on Linux: HTTP through libcurl directly, with nothing between the
/// engine and the most widely used HTTP client there is.
///
/// `URLSessionTransport` moves the same bytes through swift-corelibs-foundation, which wraps
/// this same libcurl, and on Linux that layer aborts the whole process on some malformed
/// answers (a header block cut short by a dying proxy: `Transfer completed, but there's no
/// response.`), so one bad connection would end a server process hosting many users'
/// engines. It also costs several thread hand-offs and about a kilobyte of heap per request
/// that is never freed. This transport has none of that: a malformed answer of any kind is a
/// `HTTPTransportError`, never a crash.
///
/// How it works: one libcurl multi handle per transport, driven by one thread of its own; each
/// request is an easy handle whose caller waits on a continuation. Connections are kept and
/// reused between requests, and HTTP/2 is used where the server offers it (ALPN over TLS).
/// Easy handles are reused too: reset on the transport's thread once their request is over,
/// so no option, header, body or bound of one request reaches the next (libcurl keeps a
/// handle's TLS session cache across a reset, so a reused handle may resume a TLS session).
///
/// What it enforces, the same as `URLSessionTransport`:
/// - **TLS verification, always**, against the system's CA store; TLS 1.2 at least.
/// - **`http` and `https` only**, for the request and for anything libcurl would follow.
/// - **The redirect policy** (`HTTPRequest.redirectPolicy`): libcurl never follows a redirect;
///   the transport follows the ones the policy allows, with the same rules as every transport
///   of the package (the Gravity key never travels to another origin).
/// - **A bound on the body** (`HTTPRequest.maximumResponseBytes`), counted as the body streams,
///   after content decoding: the transfer stops at the bound, so neither a 50 MB answer nor a
///   gzip bomb is ever held in memory. A declared `Content-Length` over the bound ends it
///   before the body. (Only `gzip` is offered as a content coding.)
/// - **A deadline per request**, covering the whole exchange with its redirects. On the system's
///   clocks (the default) libcurl's own total timeout keeps it, on libcurl's monotonic clock,
///   so a request costs no timer task of its own; on any other clock (a manual clock in tests)
///   a timer on that clock ends the exchange.
///
/// Failures are split as wire.md § Errors says (D5): `cannotConnect` only when libcurl failed
/// before the request could reach a connection (refused, name resolution, TLS), otherwise
/// `connectionLost`. Cancelling the calling task resumes it at once with `CancellationError`
/// and takes the handle out of the multi handle, which closes its connection.
///
/// Add the `ShoppingAssistantCurl` product to depend on it; it needs libcurl's headers to
/// build (`apt-get install libcurl4-openssl-dev`). `ShoppingAssistant` alone does not.
public final class CurlTransport: HTTPTransport, Sendable {
    /// Where requests go through a proxy.
    public enum Proxy: Sendable, Hashable {
        /// As the standard environment says: `http_proxy`, `https_proxy` (or `HTTPS_PROXY`),
        /// `all_proxy` and `no_proxy`, read by libcurl for each request. The default, so a host
        /// behind a proxy works as its other tools do. (The upper-case `HTTP_PROXY` is ignored,
        /// as libcurl does, because CGI servers set it from a request header.)
        case environment
        /// Direct connections, whatever the environment says.
        case none
        /// Every request through the proxy at `url` (`http://`, `https://`, `socks5://`…),
        /// except to hosts that match `bypass`, in `no_proxy` syntax (`example.com`, `.internal`,
        /// `10.0.0.0/8`); the environment is not read.
        case url(URL, bypass: [String] = [])
    }

    /// The total time one exchange may take, redirects included: above every engine timeout
    /// (10 s preparation, 120 s reply), so it only ends calls the engine does not time itself.
    public static let defaultDeadline: Duration = .seconds(130)

    /// At most this many connections to one host at once; more requests wait for one (or share
    /// it, over HTTP/2). A chat needs two or three at the same time.
    public static let defaultMaximumConnectionsPerHost = 8

    private let driver: CurlDriver
    private let deadline: Duration
    private let clock: any Clock<Duration>
    /// The deadline is libcurl's total timeout, not a timer on `clock`: `clock` is one of the
    /// system's, which libcurl's monotonic clock matches.
    private let libcurlKeepsDeadline: Bool
    private let proxy: Proxy

    /// Creates a transport with its own connections and its own thread.
    ///
    /// - Parameters:
    ///   - proxy: Where requests go through a proxy; the standard environment by default.
    ///   - deadline: How long one exchange may take in all before it fails with `.timedOut`.
    ///   - clock: The clock the deadline runs on; a manual clock in tests. On the system's
    ///     clocks libcurl keeps the deadline itself.
    ///   - maximumConnectionsPerHost: How many connections to one host may be open at once.
    public init(
        proxy: Proxy = .environment, deadline: Duration = CurlTransport.defaultDeadline,
        clock: any Clock<Duration> = ContinuousClock(),
        maximumConnectionsPerHost: Int = CurlTransport.defaultMaximumConnectionsPerHost
    ) {
        self.proxy = proxy
        self.deadline = deadline
        self.clock = clock
        libcurlKeepsDeadline = clock.isSystemClock
        driver = CurlDriver(maximumConnectionsPerHost: max(1, maximumConnectionsPerHost))
    }

    deinit {
        // No call is waiting: each holds the transport until it returns. (libcurl may still be
        // finishing with the connection of an answer its caller already has.)
        driver.stop()
    }

    /// Sends the request, follows the redirects its policy allows, and returns whatever
    /// response the server gave, whatever its status.
    ///
    /// - Throws: `HTTPTransportError` when no response arrived or the deadline passed,
    ///   `HTTPResponseTooLarge` when the body passed the request's bound, or
    ///   `CancellationError` when the calling task was cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard libcurlKeepsDeadline else {
            return try await TransportDeadline.run(on: clock, deadline: deadline) {
                try await HTTPRedirectFollowing.follow(request) { try await self.exchange($0, timeout: nil) }
            }
        }
        // Each hop gets what is left of the deadline: the exchange runs in the caller's task,
        // with no task beside it to time it.
        try Task.checkCancellation()
        let started = ContinuousClock.now
        return try await HTTPRedirectFollowing.follow(request) { hop in
            let left = deadline - started.duration(to: .now)
            guard left > .zero else { throw HTTPTransportError.timedOut }
            return try await exchange(hop, timeout: left)
        }
    }

    /// One request on the wire, without redirects; libcurl ends it with `.timedOut` after
    /// `timeout`, if given.
    private func exchange(_ request: HTTPRequest, timeout: Duration?) async throws -> HTTPResponse {
        let driver = self.driver
        let transfer = try CurlTransfer(request, easy: driver.makeHandle(), proxy: proxy, timeout: timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if transfer.attach(continuation) { driver.start(transfer) }
            }
        } onCancel: {
            if transfer.cancel() { driver.remove(transfer) }
        }
    }
}
