import Foundation

/// One HTTP request as the engine's clients build it. The transport moves it as is.
public struct HTTPRequest: Sendable, Hashable {
    public enum Method: String, Sendable, Hashable {
        case get = "GET"
        case post = "POST"
    }

    public var method: Method
    public var url: URL
    /// Header names as the client wrote them; lookups through `header(_:)` ignore case.
    public var headers: [String: String]
    public var body: Data?

    public init(method: Method, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// One HTTP response: status, headers and the whole body.
public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
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

/// The engine's only network boundary. Implementations: `URLSessionTransport`, the demo
/// store, scripted test transports and the transcript replayer.
///
/// Implementations must honour task cancellation by throwing `CancellationError`, so that a
/// cancelled preparation reports `.cancelled` and not a network error (P4).
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
