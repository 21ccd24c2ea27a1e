import ShoppingAssistant

/// One request the demo store handled, for the REPL's request log.
public struct DemoRequestRecord: Sendable, Hashable, CustomStringConvertible {
    /// Which service the request was addressed to.
    public enum Service: String, Sendable, Hashable {
        /// Gravity, the Shopping API, a tracking host, or none of them (an unknown path, answered 404).
        case gravity, shopping, tracking, unknown
    }

    /// How the request ended.
    public enum Outcome: Sendable, Hashable {
        /// Still waiting (a slow reply, a reply timeout).
        case pending
        /// Answered with this HTTP status.
        case status(Int)
        /// Ended without a response: the transport error or cancellation, described.
        case failed(String)
    }

    /// 1-based position in the log.
    public let sequence: Int
    /// The service.
    public let service: Service
    /// `GET` or `POST`.
    public let method: String
    /// The URL path with its query, without scheme and host.
    public let path: String
    /// How the request ended (so far).
    public internal(set) var outcome: Outcome

    /// The HTTP status, if the request was answered.
    public var status: Int? {
        if case .status(let status) = outcome { return status }
        return nil
    }

    /// One line: `#3 POST /v2/choose → 200`.
    public var description: String {
        let result: String
        switch outcome {
        case .pending: result = "pending"
        case .status(let status): result = String(status)
        case .failed(let reason): result = reason
        }
        return "#\(sequence) \(method) \(path) → \(result)"
    }
}

/// An event received on Gravity `/event` — a lifecycle event (AN1), a typed or a custom event
/// of the host (B10) — as the REPL's analytics log shows it.
public struct DemoGravityEvent: Sendable, Hashable {
    /// The event type, e.g. `chat_message_send`, `purchase-v1`.
    public let type: String
    /// The human-readable name, if sent.
    public let name: String?
    /// The event properties; non-string values are kept in their JSON spelling.
    public let customProps: [String: String]
    /// The `user.uid` the event was sent under, if any (AN3).
    public let uid: String?
    /// The typed event's own fields as received (`value`, `productId`, `cart`, …; B10); empty
    /// for a custom event.
    public let fields: [String: JSONValue]
    /// The request's `device.permission` (B11), if it had one.
    public let permission: String?

    /// Creates a record (the store creates them; tests compare against them).
    package init(
        type: String, name: String?, customProps: [String: String], uid: String?, fields: [String: JSONValue] = [:],
        permission: String? = nil
    ) {
        self.type = type
        self.name = name
        self.customProps = customProps
        self.uid = uid
        self.fields = fields
        self.permission = permission
    }
}

/// A rating received on `POST /v1/feedback` (D11).
public struct DemoFeedbackRecord: Sendable, Hashable {
    /// The dialog.
    public let threadId: String
    /// The rated assistant message.
    public let messageId: String
    /// The rating user.
    public let resourceId: String
    /// `like` or `dislike`.
    public let rating: String

    /// Creates a record (the store creates them; tests compare against them).
    package init(threadId: String, messageId: String, resourceId: String, rating: String) {
        self.threadId = threadId
        self.messageId = messageId
        self.resourceId = resourceId
        self.rating = rating
    }
}
