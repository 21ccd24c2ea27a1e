import Foundation
import ShoppingAssistant

/// The endpoints the demo store answers. Routing looks at the path suffix only, so any base
/// URL (a Gravity proxy, a staging Shopping API) reaches the same handlers.
enum DemoEndpoint: Sendable, Hashable {
    case choose, visit, event
    case messages, history, feedback
    case tracking

    var service: DemoRequestRecord.Service {
        switch self {
        case .choose, .visit, .event: .gravity
        case .messages, .history, .feedback: .shopping
        case .tracking: .tracking
        }
    }

    var method: HTTPRequest.Method {
        switch self {
        case .history, .tracking: .get
        default: .post
        }
    }
}

/// Where a request goes.
struct DemoRoute: Sendable {
    /// The endpoint, or `nil` for an unknown path (404).
    var endpoint: DemoEndpoint?
    /// The thread of a history request.
    var threadId: String?
    /// The path with its query, for the request log.
    var loggedPath: String

    init(_ request: HTTPRequest, trackingHosts: Set<String>) {
        let path = request.url.path(percentEncoded: false)
        let query = request.url.query(percentEncoded: true).map { "?" + $0 } ?? ""
        loggedPath = (path.isEmpty ? "/" : path) + query
        let parts = path.split(separator: "/").map(String.init)
        if parts.count >= 4, parts[parts.count - 1] == "messages", parts[parts.count - 3] == "threads",
            parts[parts.count - 4] == "v1"
        {
            endpoint = .history
            threadId = parts[parts.count - 2]
        } else if path.hasSuffix("/v1/messages") {
            endpoint = .messages
        } else if path.hasSuffix("/v1/feedback") {
            endpoint = .feedback
        } else if path.hasSuffix("/choose") {
            endpoint = .choose
        } else if path.hasSuffix("/visit") {
            endpoint = .visit
        } else if path.hasSuffix("/event") {
            endpoint = .event
        } else if let host = request.url.host(), trackingHosts.contains(host.lowercased()) {
            endpoint = .tracking
        }
    }
}

/// Response builders shared by both services.
enum DemoHTTP {
    static let jsonHeaders = ["Content-Type": "application/json; charset=utf-8"]

    /// A JSON response.
    static func json(_ status: Int, _ body: DemoJSON, headers: [String: String] = [:]) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders.merging(headers) { _, new in new }, body: body.data)
    }

    /// An error response with the wire.md error body.
    static func error(_ status: Int, code: String, message: String, headers: [String: String] = [:])
        -> HTTPResponse
    {
        json(
            status, .object(["error": .object(["code": .string(code), "message": .string(message)])]), headers: headers)
    }

    /// 204 without a body.
    static func noContent() -> HTTPResponse {
        HTTPResponse(status: 204)
    }

    /// 415 unless a POST declares a JSON body (wire.md: every request is `application/json`).
    static func requireJSONContentType(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.method == .post else { return nil }
        let contentType = request.header("Content-Type")?.lowercased() ?? ""
        guard contentType.hasPrefix("application/json") else {
            return error(415, code: "UNSUPPORTED_MEDIA_TYPE", message: "Content-Type must be application/json")
        }
        return nil
    }
}
