import Foundation

/// One HTTP request as the engine's clients build it. The transport moves it as is.
public struct HTTPRequest: Sendable, Hashable {
    /// The methods the engine uses: `GET` for tracking URLs and history, `POST` for the rest.
    public enum Method: String, Sendable, Hashable {
        /// A request without a body; a transport must send none.
        case get = "GET"
        /// A request with a JSON body.
        case post = "POST"
    }

    /// The bound used when a request names none: the largest answer any endpoint expects (a
    /// reply with its products), so that no transport ever holds an unbounded body.
    public static let defaultMaximumResponseBytes = 8 * 1024 * 1024

    /// Send it as given: the clients chose it per endpoint (wire.md).
    public var method: Method
    /// The absolute URL, built from the configured base URLs or taken from server data (tracking);
    /// a transport must not rewrite it.
    public var url: URL
    /// Header names as the client wrote them; lookups through `header(_:)` ignore case.
    public var headers: [String: String]
    /// The exact bytes to send; a retry sends the same bytes again (D6).
    public var body: Data?
    /// The largest response body the caller will read, after content decoding. A transport
    /// that streams (`CurlTransport`, `URLSessionTransport`) stops the transfer once the body
    /// passes it and throws `HTTPResponseTooLarge`, so a hostile 50 MB answer never sits in
    /// memory whole.
    public var maximumResponseBytes: Int
    /// Which redirects the transport may follow for this request; none unless the client says so.
    public var redirectPolicy: HTTPRedirectPolicy

    /// For a host's own transport tests; the engine's clients build every request it sends.
    public init(
        method: Method, url: URL, headers: [String: String] = [:], body: Data? = nil,
        maximumResponseBytes: Int = HTTPRequest.defaultMaximumResponseBytes,
        redirectPolicy: HTTPRedirectPolicy = .never
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.maximumResponseBytes = maximumResponseBytes
        self.redirectPolicy = redirectPolicy
    }

    /// The value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { HTTPFieldName.matches($0.key, name) }?.value
    }
}

/// Which `3xx` answers a transport may follow for one request. A redirect that is not followed
/// is returned as the response, so the client reports its status like any other.
///
/// Whatever the policy, a followed redirect keeps the method and the body (only `307` and
/// `308` are followed for a request with a body, since `301`–`303` would turn it into a `GET`
/// without it), and `Authorization` and `Cookie` never travel to another origin.
public enum HTTPRedirectPolicy: Sendable, Hashable {
    /// A `3xx` is the answer. The default: nothing is sent anywhere the client did not name.
    case never
    /// Follow redirects that stay on the request's origin (scheme, host and port), at most
    /// `limit` in a row. For the services the engine was configured with: their requests
    /// never reach a host that was not configured, and the Gravity key stays with Gravity.
    case sameOrigin(limit: Int)
    /// Follow redirects that keep the scheme, to any host, at most `limit` in a row. For
    /// tracking URLs, which name third-party hosts anyway and carry no credentials.
    case sameScheme(limit: Int)
}

/// One HTTP response: status, headers and the whole body.
public struct HTTPResponse: Sendable, Hashable {
    /// The HTTP status; the clients map it to `AssistantError` codes (wire.md § Errors).
    public var status: Int
    /// Response headers as received; the clients read them through `header(_:)` (`Retry-After`).
    public var headers: [String: String]
    /// The body after content decoding, at most the request's `maximumResponseBytes`.
    public var body: Data

    /// What a transport returns for any answer, error statuses included: only a failure to get an
    /// answer is thrown.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { HTTPFieldName.matches($0.key, name) }?.value
    }
}

/// Why a transport could not produce a response. The distinction between "nothing reached
/// the server" and "the request may have reached it" drives history reconciliation (D5).
public enum HTTPTransportError: Error, Sendable, Hashable {
    /// The connection could not be made (refused, DNS, TLS): the server saw nothing.
    case cannotConnect(String)
    /// The connection broke after the request was (or may have been) sent.
    case connectionLost(String)
    /// The transport's own deadline passed after the request was sent.
    case timedOut
}

/// The server answered, but with a body larger than `HTTPRequest.maximumResponseBytes`; the
/// transfer was stopped there. The clients report it as `invalid_response` for a `2xx` and by
/// the status otherwise (wire.md § Errors). A separate type rather than an `HTTPTransportError`
/// case, because the answer did arrive: nothing about the connection is uncertain.
public struct HTTPResponseTooLarge: Error, Sendable, Hashable, CustomStringConvertible {
    /// The status of the answer that was cut off.
    public var status: Int
    /// The bound it passed, in bytes.
    public var limit: Int

    /// Thrown by a transport that stopped reading at the request's bound.
    public init(status: Int, limit: Int) {
        self.status = status
        self.limit = limit
    }

    /// For logs: the status and the bound.
    public var description: String { "HTTP \(status) answer larger than \(limit) bytes" }
}

/// The engine's only network boundary. Implementations: `CurlTransport` (product
/// `ShoppingAssistantCurl`, the one to pick on Linux), `URLSessionTransport` (portable), the
/// demo store, scripted test transports and the transcript replayer.
///
/// Implementations must honour task cancellation by throwing `CancellationError`, so that a
/// cancelled preparation reports `.cancelled` and not a network error (P4). They must wait
/// for the network by suspending, never by blocking the calling thread: lifecycle events and
/// tracking URLs of every engine in the process are sent from one serial queue, which a
/// blocked `send` would hold up (B13). Where the runtime has `Task.immediate` (Linux; Apple
/// platforms from version 26), a message's or a Gravity call's `send` starts on the engine's
/// own thread, before the engine call that made the request returns, and runs there until it
/// first suspends: a blocking `send` would hold up the engine itself. Elsewhere it starts on a
/// thread of its own, just after. Either way it may call the engine back; such a call waits
/// for the engine like any other (H1).
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns whatever the server answered, 4xx and 5xx included. Throws
    /// `HTTPTransportError` when there is no answer (telling "nothing sent" from "maybe
    /// sent", D5), `HTTPResponseTooLarge`, or `CancellationError` when the task is cancelled (P4).
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
