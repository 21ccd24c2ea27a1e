import Foundation

/// Deterministic UUIDs — 00000000-0000-4000-8000-000000000001, 2, 3… — for sessions whose
/// output must be the same on every run (piped demo sessions, transcript replay) and, through
/// the test library's `SequentialUUIDGenerator`, for tests.
package final class SequentialUUIDs: Sendable {
    private let counter = Locked<UInt64>(0)

    package init() {}

    /// The next UUID in sequence. Thread-safe.
    package func next() -> UUID {
        let value = counter.withLock { value -> UInt64 in
            value += 1
            return value
        }
        return UUID(uuidString: String(format: "00000000-0000-4000-8000-%012llx", value)) ?? UUID()
    }
}
