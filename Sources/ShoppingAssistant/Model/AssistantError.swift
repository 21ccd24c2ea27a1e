/// An engine error. `message` is a diagnostic for logs and developers, never text for the
/// shopper; hosts decide what to show from `code` (ER).
public struct AssistantError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error codes of wire.md § Errors, with their wire spelling as raw values.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A builder or handler is missing (G1), or the assistant campaign is malformed (C4–C6): fix
        /// the integration or the campaign, retrying does not help.
        case invalidConfiguration = "invalid_configuration"
        /// HTTP 401 or 403 from either service, including `IP_NOT_ALLOWED` (S6): a key or network
        /// permission problem, not the shopper's.
        case unauthorized
        /// Preparation passed its timeout (P3) or a reply its 120 s (D3). After a sent message the
        /// outcome is uncertain: the engine checked the history before reporting it (D5).
        case timeout
        /// No connection, DNS, TLS or a connection lost; after a send the user's text is kept for a
        /// retry and never resent on its own (D4).
        case network
        /// HTTP 5xx or another unexpected status; 502/503/504 after sending count as uncertain (D5).
        case server
        /// HTTP 429; `message` keeps the server's `Retry-After`, so a host can wait that long.
        case rateLimited = "rate_limited"
        /// A 2xx whose body the engine cannot decode; `message` says what was wrong with it.
        case invalidResponse = "invalid_response"
        /// HTTP 409 `MESSAGE_ID_CONFLICT`: the ID is taken; the engine neither renames the message
        /// nor overwrites a reply (D8).
        case messageConflict = "message_conflict"
        /// HTTP 404 `SHOPPING_HISTORY_NOT_FOUND`: the history is gone on the server; local messages
        /// are kept (D9).
        case historyUnavailable = "history_unavailable"
    }

    /// What the host decides on: which message to show, whether a retry makes sense.
    public var code: Code
    /// A diagnostic for logs, in English, possibly quoting the server; never show it to the shopper.
    public var message: String
    /// The HTTP status behind the error, when there was an answer; `nil` for timeouts and lost
    /// connections.
    public var httpStatus: Int?
    /// How long a `rateLimited` answer asked the client to wait before sending again: its
    /// `Retry-After` header when that is a number of seconds, so a host can hold a retry back
    /// (an HTTP-date form stays in `message` only). `nil` for every other error.
    public var retryAfter: Duration?

    /// For a host's tests and stand-ins that must fail the way the engine does.
    public init(code: Code, message: String, httpStatus: Int? = nil, retryAfter: Duration? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
    }

    /// `code (HTTP status): message`, for logs.
    public var description: String {
        if let httpStatus { return "\(code.rawValue) (HTTP \(httpStatus)): \(message)" }
        return "\(code.rawValue): \(message)"
    }
}
