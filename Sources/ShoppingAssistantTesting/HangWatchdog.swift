import Foundation
import ShoppingAssistant

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The last resort behind every hang guard: a thread of its own that ends the test process when
/// a guarded wait has not returned long after its limit.
///
/// A hang guard's timer, and the task that waits for it, need Dispatch and the cooperative pool
/// to run. A process whose pool threads are all blocked (a helper that blocks a global-queue
/// thread per item, a hundred at once) runs neither: a timer never fires, even `Task.sleep`
/// never returns, and the test library's time limit cannot fire either. The run would stall
/// until CI's own timeout killed it and said nothing about why. This thread needs neither: a
/// wait still registered `grace` after its limit means the process can no longer fail a test,
/// so the watchdog says which wait it was and ends the process with status 70.
// Unchecked: every field is read and written under `condition`'s lock.
package final class HangWatchdog: @unchecked Sendable {
    /// The watchdog of every guarded wait of the process (`wallClockWait`).
    package static let shared = HangWatchdog(
        grace: .seconds(Int(ProcessInfo.processInfo.environment[graceVariable] ?? "") ?? 60))

    /// Overrides the grace, in whole seconds: the watchdog's own test sets 0, and someone who
    /// pauses a test in a debugger sets a day, or the watchdog ends the process on resuming.
    package static let graceVariable = "SHOPPING_ASSISTANT_WATCHDOG_GRACE"

    private struct Watch {
        let what: String
        let limit: Duration
        let end: ContinuousClock.Instant
    }

    private let grace: Duration
    private let condition = NSCondition()
    private var watches: [UInt64: Watch] = [:]
    private var nextID: UInt64 = 0
    private var threadStarted = false

    /// A watchdog of its own (the shared one serves every guard of the process); for its tests.
    package init(grace: Duration) { self.grace = grace }

    /// What is watched now, by name.
    package var watchedWaits: [String] {
        condition.lock()
        defer { condition.unlock() }
        return watches.sorted { $0.key < $1.key }.map(\.value.what)
    }

    /// Starts watching a wait of `limit`; `end(_:)` with the returned ID once the wait returned.
    package func begin(_ what: String, limit: Duration) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        nextID += 1
        watches[nextID] = Watch(what: what, limit: limit, end: .now + limit + grace)
        if !threadStarted {
            threadStarted = true
            let thread = Thread { [self] in watch() }
            thread.name = "hang watchdog"
            thread.start()
        }
        condition.signal()
        return nextID
    }

    /// The wait `id` returned.
    package func end(_ id: UInt64) {
        condition.lock()
        watches[id] = nil
        condition.unlock()
    }

    private func watch() {
        condition.lock()
        while true {
            guard let (_, watch) = watches.min(by: { $0.value.end < $1.value.end }) else {
                condition.wait()
                continue
            }
            let left = ContinuousClock.now.duration(to: watch.end)
            guard left <= .zero else {
                let (seconds, attoseconds) = left.components
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) * 1e-18))
                continue
            }
            let message =
                "hang watchdog: \(watch.what) (a wait of \(watch.limit)) has not returned \(grace) after its limit: "
                + "nothing in this process runs any more (are all of Dispatch's threads blocked?); ending it\n"
            _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
            _exit(70)
        }
    }
}
