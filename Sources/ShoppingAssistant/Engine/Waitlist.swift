/// Parks callers until a condition over their owner's state holds, or until their task is
/// cancelled — whichever comes first.
///
/// Every "wait until …" of the package's test support goes through one of these, so a
/// waiter never outlives a cancelled task: a test whose time limit passes is cancelled by the
/// testing library, and its waits return instead of hanging the run.
///
/// The owner calls `recheck()` after every change of the state the conditions read, and never
/// while holding its own lock (conditions take it).
package final class Waitlist: Sendable {
    private struct State: WaitingState {
        var waiters = ParkedCallers<Bool, @Sendable () -> Bool>()
    }

    private let state = Locked(State())

    package init() {}

    /// Returns `true` once `isMet` holds, or `false` if the calling task was cancelled first.
    @discardableResult
    package func wait(until isMet: @escaping @Sendable () -> Bool) async -> Bool {
        if isMet() { return true }
        // The condition is read outside the lock (it takes its owner's): parked first, then
        // checked again, so a change made meanwhile is not missed.
        return await state.wait(cancelled: false, parked: { self.recheck() }) { _ in .park(isMet) }
    }

    /// Wakes every waiter whose condition now holds.
    package func recheck() {
        let waiting = state.withLock { $0.waiters.waiting }
        guard !waiting.isEmpty else { return }
        let met = Set(waiting.filter { $0.tag() }.map(\.ticket))
        guard !met.isEmpty else { return }
        for waiter in state.withLock({ $0.waiters.take(tickets: met) }) { waiter.resume(returning: true) }
    }

    /// How many callers are parked.
    package var count: Int { state.withLock { $0.waiters.count } }
}
