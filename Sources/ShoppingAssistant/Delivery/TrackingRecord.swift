import Foundation

/// One entry of the analytics log, for inspection (REPL `:log`, tests).
public struct TrackingRecord: Sendable, Hashable, CustomStringConvertible {
    /// The channel a record went through, so a test can tell lifecycle events from tracking URLs.
    public enum Kind: String, Sendable, Hashable {
        /// A lifecycle event through Gravity `/event` (AN1).
        case event
        /// A tracking URL request (AN5, AN7).
        case url
    }

    /// Which channel delivered it.
    public let kind: Kind
    /// The event type, or the tracking URL.
    public let name: String
    /// The SDK-managed `user.uid` the record was sent as (AN3); `nil` for a manual user.
    public let uid: String?
    /// The app's own id (`user.custom`) the record was sent as, for a manual user (B3, AN3).
    public let customUserId: String?
    /// The event's `customProps`; empty for a tracking URL.
    public let properties: [String: String]
    /// `nil` on success, else the error code.
    public let failure: String?
    /// When an event was raised (`eventTime` on the wire, DL6); `nil` for a tracking URL.
    public let eventTime: String?
    /// Whether this attempt was a later one, from the queue (DL2), not the first.
    public let deferred: Bool

    init(
        kind: Kind, name: String, uid: String?, customUserId: String?, properties: [String: String], failure: String?,
        eventTime: String? = nil, deferred: Bool = false
    ) {
        self.kind = kind
        self.name = name
        self.uid = uid
        self.customUserId = customUserId
        self.properties = properties
        self.failure = failure
        self.eventTime = eventTime
        self.deferred = deferred
    }

    /// Records compare by what they report; when it was sent and from where is not compared.
    public static func == (lhs: TrackingRecord, rhs: TrackingRecord) -> Bool {
        lhs.kind == rhs.kind && lhs.name == rhs.name && lhs.uid == rhs.uid && lhs.customUserId == rhs.customUserId
            && lhs.properties == rhs.properties && lhs.failure == rhs.failure
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(name)
        hasher.combine(uid)
        hasher.combine(customUserId)
        hasher.combine(properties)
        hasher.combine(failure)
    }

    /// One line: kind, name, user and properties sorted by key, and the failure if any.
    public var description: String {
        let props = properties.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let outcome = failure.map { " FAILED \($0)" } ?? ""
        let user = customUserId.map { "custom=\($0)" } ?? "uid=\(uid ?? "-")"
        return "\(kind.rawValue) \(name) \(user)\(props.isEmpty ? "" : " " + props)\(outcome)"
    }
}
