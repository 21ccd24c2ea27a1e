/// A one-time signal: `wait()` parks until `fire()` (or the waiting task is cancelled). Whoever
/// fires it first wakes every waiter, counted runnable again first (replay quiescence), so a
/// race between pieces of work — the first to finish fires — needs no task group whose
/// implicit wake-ups an activity monitor could not see.
final class OneTimeSignal: Sendable {
    private struct State: WaitingState {
        var fired = false
        var waiters = ParkedCallers<Void, Void>()
    }

    private let state = Locked(State())
    private let activity: ActivityMonitor?

    init(activity: ActivityMonitor?) {
        self.activity = activity
    }

    func fire() {
        let waiters = state.withLock { state -> [ParkedCallers<Void, Void>.Waiter] in
            guard !state.fired else { return [] }
            state.fired = true
            return state.waiters.takeAll()
        }
        for waiter in waiters {
            activity?.begin()
            waiter.resume(returning: ())
        }
    }

    func wait() async {
        await state.wait(cancelled: (), activity: activity) { $0.fired ? .proceed(()) : .park(()) }
    }
}
