/// The engine's deadlines, kept as offsets on its clock, served by one sleeping task.
///
/// A task per deadline would start a task for every message sent (its 120 s reply deadline,
/// D3); one ticker that sleeps until the earliest deadline serves them all, and a new deadline
/// later than that one costs no task at all.
struct EngineTimers: Sendable {
    private struct Deadline: Sendable {
        let id: TimerID
        let at: Duration
        /// Breaks ties: deadlines due together fire in the order they were set.
        let order: UInt64
    }

    private var deadlines: [TimerID: Deadline] = [:]
    private var nextOrder: UInt64 = 0

    var isEmpty: Bool { deadlines.isEmpty }

    /// The earliest deadline, as an offset on the engine's clock.
    var earliest: Duration? { deadlines.values.lazy.map(\.at).min() }

    /// Sets (or moves) deadline `id` to `at`.
    mutating func set(_ id: TimerID, at: Duration) {
        nextOrder += 1
        deadlines[id] = Deadline(id: id, at: at, order: nextOrder)
    }

    /// Drops deadline `id`, if it is set.
    mutating func cancel(_ id: TimerID) {
        deadlines[id] = nil
    }

    /// Removes and returns the deadlines due at `now`, earliest first.
    mutating func takeDue(at now: Duration) -> [TimerID] {
        let due = deadlines.values.filter { $0.at <= now }.sorted { ($0.at, $0.order) < ($1.at, $1.order) }
        for deadline in due { deadlines[deadline.id] = nil }
        return due.map(\.id)
    }
}
