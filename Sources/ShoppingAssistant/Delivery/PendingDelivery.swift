import Foundation

/// One record of the delivery queue as an app or a developer inspects it (the REPL's
/// `:queue`): what it is, how old, how often the server failed it, and when it goes next.
public struct PendingDelivery: Sendable, Hashable {
    /// Where a record is on its way.
    public enum Status: String, Sendable, Hashable {
        /// Being written to the store.
        case persisting
        /// Kept, waiting for its first attempt: for a place, or for the session's first
        /// Gravity answer (B8).
        case waiting
        /// Its first attempt is on the wire.
        case sending
        /// Waiting for the drain, after a failure or from an earlier run.
        case queued
        /// The drain is sending it now.
        case draining

        init(_ state: DeliveryMachine.EntryState) {
            switch state {
            case .persisting: self = .persisting
            case .waiting, .held: self = .waiting
            case .firstAttempt: self = .sending
            case .queued: self = .queued
            case .draining: self = .draining
            }
        }
    }

    /// `/event`, `/visit` or a tracking `GET`.
    public let kind: DeliveryRecord.Kind
    /// The event types, or the URL.
    public let label: String
    /// When it was raised, on the wall clock (DL6).
    public let createdAt: Date
    /// Server failures so far (DL3).
    public let attempts: Int
    /// Where it is now.
    public let status: Status
    /// When the drain tries it again, while its lane pauses.
    public let nextAttempt: Date?
}
