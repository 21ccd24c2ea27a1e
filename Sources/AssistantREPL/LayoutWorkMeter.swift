import Synchronization

/// Counts the work the REPL's text handling does, in code points visited, so tests can bound
/// it per character of input without timing anything: a layout that re-measures or copies
/// what it already laid out shows up as a count that grows faster than its input.
///
/// Off unless a test binds `current` for the task; then the sanitiser, the width measurement
/// and the line layout each add the code points they visited.
final class LayoutWorkMeter: Sendable {
    private let units = Atomic<Int>(0)

    /// The meter of the running task, if a test installed one.
    @TaskLocal static var current: LayoutWorkMeter?

    init() {}

    /// Code points visited so far.
    var count: Int { units.load(ordering: .relaxed) }

    /// Adds `amount` code points to the running task's meter, if it has one.
    static func record(_ amount: Int) {
        guard amount > 0, let meter = current else { return }
        meter.units.add(amount, ordering: .relaxed)
    }
}
