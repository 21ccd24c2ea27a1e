import Foundation
import ShoppingAssistant

/// Deterministic UUIDs: 00000000-0000-4000-8000-000000000001, … for tests, transcript replay
/// and demo-store sessions, whose output must be the same on every run.
public final class SequentialUUIDGenerator: Sendable {
    private let sequence = SequentialUUIDs()

    /// Starts at `…000000000001`; one generator per engine keeps thread and message IDs stable
    /// between runs.
    public init() {}

    /// The next UUID in sequence; pass `generator.next` as the engine's `uuid`. Thread-safe.
    public func next() -> UUID {
        sequence.next()
    }
}
