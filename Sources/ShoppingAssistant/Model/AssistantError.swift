/// An engine error. `message` is a diagnostic for logs and developers, never text for the
/// shopper; hosts decide what to show from `code` (ER).
public struct AssistantError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error codes of wire.md § Errors, with their wire spelling as raw values.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidConfiguration = "invalid_configuration"
        case unauthorized
        case timeout
        case network
        case server
        case rateLimited = "rate_limited"
        case invalidResponse = "invalid_response"
        case messageConflict = "message_conflict"
        case historyUnavailable = "history_unavailable"
    }

    public var code: Code
    public var message: String
    public var httpStatus: Int?

    public init(code: Code, message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    public var description: String {
        if let httpStatus { return "\(code.rawValue) (HTTP \(httpStatus)): \(message)" }
        return "\(code.rawValue): \(message)"
    }
}
