import Foundation

/// How long and how much the engine keeps of what it could not deliver yet (DL4), named as
/// the flutter SDK names it, so an app that moves between the SDKs finds the same knobs.
public struct OfflineQueueSettings: Sendable, Hashable {
    /// Whether requests that fail are kept for later. Off, nothing is queued and nothing is
    /// sent from the queue; what is already in the store waits until it is on again.
    public var enabled: Bool
    /// The most records kept; over it the oldest is dropped (`overflow`).
    public var maxEntries: Int
    /// How old a record may get; an older one is dropped instead of sent (`expired`).
    public var maxAge: Duration

    /// The defaults keep a week of a busy shop's events (500 records, 7 days).
    public init(enabled: Bool = true, maxEntries: Int = 500, maxAge: Duration = .seconds(7 * 24 * 3600)) {
        self.enabled = enabled
        self.maxEntries = max(1, maxEntries)
        self.maxAge = maxAge
    }
}
