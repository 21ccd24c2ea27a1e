import Foundation
import ShoppingAssistant

/// Deterministic UUIDs: 00000000-0000-4000-8000-000000000001, … for tests, transcript replay
/// and demo-store sessions, whose output must be the same on every run.
public final class SequentialUUIDGenerator: Sendable {
    private let counter = Locked<UInt64>(0)

    /// A generator whose first UUID ends in 1.
    public init() {}

    /// The next UUID in sequence; safe to call from any task.
    public func next() -> UUID {
        let value = counter.withLock { value -> UInt64 in
            value += 1
            return value
        }
        return UUID(uuidString: String(format: "00000000-0000-4000-8000-%012llx", value)) ?? UUID()
    }
}
