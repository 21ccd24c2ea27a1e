/// A clock that moves only when its driver says so: the one implementation behind the test
/// library's `ManualClock` and the REPL's virtual time (piped demo sessions, transcript
/// replay), which must not depend on test code.
///
/// Sleepers are kept with their deadlines; `advance(to:)` wakes every sleeper due, earliest
/// first, and `wakeNext()` wakes only the first one due, for a driver that lets each wake-up
/// run to quiescence before the next (two timers with the same deadline then never race).
/// Told an `ActivityMonitor`, it counts a sleeper as parked and a woken one as runnable again.
package final class VirtualClock: Clock, Sendable {
    /// A point on the timeline: the time since the clock was created.
    package struct Instant: InstantProtocol, CustomStringConvertible {
        package var offset: Duration

        package init(offset: Duration) { self.offset = offset }

        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        package var description: String { "t+\(offset)" }
    }

    private struct State: WaitingState {
        var now = Instant(offset: .zero)
        /// Sleepers, each with its deadline; `false` wakes a cancelled one.
        var waiters = ParkedCallers<Bool, Instant>()
    }

    private let state = Locked(State())
    private let sleeperWaiters = Waitlist()
    private let activity: ActivityMonitor?

    /// A clock at `t+0`; `activity` is told when a task parks on it and when one is woken.
    package init(activity: ActivityMonitor? = nil) {
        self.activity = activity
    }

    package var now: Instant { state.withLock { $0.now } }
    package var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are sleeping on this clock right now.
    package var sleeperCount: Int { state.withLock { $0.waiters.count } }

    /// The deadlines of the current sleepers, earliest first.
    package var pendingDeadlines: [Instant] { state.withLock { $0.waiters.tags.sorted() } }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let woken = await state.wait(cancelled: false, activity: activity, parked: { self.sleeperWaiters.recheck() }) {
            deadline <= $0.now ? .proceed(true) : .park(deadline)
        }
        if !woken { throw CancellationError() }
    }

    /// Moves time forward by `duration`, waking every sleeper due, earliest first.
    package func advance(by duration: Duration) {
        let target = state.withLock { $0.now.advanced(by: duration) }
        advance(to: target)
    }

    /// Moves time to `target` (never backwards), waking sleepers in deadline order.
    package func advance(to target: Instant) {
        while wake(upTo: target) {}
        state.withLock { state in
            if state.now < target { state.now = target }
        }
    }

    /// Moves time to the earliest sleeper's deadline and wakes every sleeper due then; false
    /// if nobody sleeps.
    @discardableResult
    package func advanceToNextDeadline() -> Bool {
        guard let deadline = pendingDeadlines.first else { return false }
        advance(to: deadline)
        return true
    }

    /// Wakes the one sleeper that comes first (the earliest deadline; of equal ones, the one
    /// that went to sleep first), moving time to its deadline if that lies ahead and not past
    /// `limit`; false if no sleeper is due by then.
    @discardableResult
    package func wakeNext(notAfter limit: Instant? = nil) -> Bool {
        wake(upTo: limit)
    }

    private func wake(upTo limit: Instant?) -> Bool {
        let next = state.withLock { state -> ParkedCallers<Bool, Instant>.Waiter? in
            guard let sleeper = state.waiters.takeFirst(by: <, where: { tag in limit.map { tag <= $0 } ?? true }) else {
                return nil
            }
            if state.now < sleeper.tag { state.now = sleeper.tag }
            return sleeper
        }
        guard let next else { return false }
        activity?.begin()
        next.resume(returning: true)
        return true
    }

    /// Suspends until at least `count` tasks sleep on this clock; `false` if the waiting task
    /// is cancelled first.
    @discardableResult
    package func waitForSleepers(_ count: Int = 1) async -> Bool {
        await sleeperWaiters.wait { [state] in state.withLock { $0.waiters.count >= count } }
    }
}
