/// Counts the engine's units of work that can make progress right now, so a replay driver
/// can tell "everything is waiting on the clock or the network" from "work is still running"
/// without polling or `Task.yield()` loops.
///
/// The engine counts each task it spawns from the moment it is spawned until it ends. A
/// manual clock and a replaying transport given the same monitor subtract a task while it is
/// parked on them and add it back, synchronously, when they wake it. When the count is zero,
/// nothing will happen until time moves or a response is released: the system is quiescent.
///
/// `package`: only our own replay drivers and test support count work; embedders reach it
/// through `EngineTestBed` in ShoppingAssistantTesting.
package final class ActivityMonitor: Sendable {
    /// What a parked waiter waits for.
    private enum Awaited: Sendable {
        /// No more than this many units can run (a driver waiting for quiescence).
        case busyAtMost(Int)
        /// Nothing else can run: the waiter is the rest of the instant (`yieldUntilOthersIdle`).
        case othersIdle
    }

    private struct State: WaitingState {
        var busy = 0
        /// Tasks spawned through `spawn` that have not ended, parked or not.
        var live = 0
        var waiters = ParkedCallers<Bool, Awaited>()
    }

    private let state = Locked(State())

    package init() {}

    /// Units of work that can run now.
    package var busy: Int { state.withLock { $0.busy } }

    /// Tasks started through `spawn` that have not ended yet, whether they can run or wait:
    /// what is left of an engine after a shutdown (H2).
    package var liveTasks: Int { state.withLock { $0.live } }

    /// A unit of work became runnable (spawned, or woken from a wait).
    package func begin() {
        state.withLock { $0.busy += 1 }
    }

    /// A unit of work ended or parked on the clock or the transport.
    ///
    /// When nothing else can run, the units that yielded to the rest of the instant run first,
    /// counted again: a driver learns the system is quiescent only once they have parked too.
    package func end() {
        let waiters = state.withLock { state -> [ParkedCallers<Bool, Awaited>.Waiter] in
            state.busy -= 1
            var woken: [ParkedCallers<Bool, Awaited>.Waiter] = []
            if state.busy <= 0 {
                woken = state.waiters.take { if case .othersIdle = $0 { true } else { false } }
                state.busy += woken.count
            }
            let busy = state.busy
            return woken + state.waiters.take { if case .busyAtMost(let units) = $0 { busy <= units } else { false } }
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Suspends until no unit of work can run. Returns `false` instead if the waiting task is
    /// cancelled first (a test's time limit), so a wait for quiescence never outlives it.
    @discardableResult
    package func waitUntilIdle() async -> Bool {
        await waitUntil(busyAtMost: 0)
    }

    /// Suspends until no more than `units` units of work can run: a test that holds one
    /// unit on purpose (a store it keeps busy) waits for everything else. `false` if the
    /// waiting task is cancelled first.
    @discardableResult
    package func waitUntil(busyAtMost units: Int) async -> Bool {
        await state.wait(cancelled: false) { $0.busy <= units ? .proceed(true) : .park(.busyAtMost(units)) }
    }

    /// Suspends the calling unit of work, counted, until no other unit can run — the rest of
    /// the instant on virtual time — and counts it again before anyone learns the system is
    /// quiescent. A content window ends so (B16): the calls made at its instant have all come,
    /// whichever task reached the engine first. `false` if the task is cancelled first.
    @discardableResult
    package func yieldUntilOthersIdle() async -> Bool {
        await state.wait(cancelled: false, activity: self) { $0.busy <= 1 ? .proceed(true) : .park(.othersIdle) }
    }

    /// Runs `body` as one unit of work in a new task;
    /// `immediately`, on the calling thread until it first suspends.
    @discardableResult
    package func spawn(
        immediately: Bool = false,
        _ body: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        state.withLock { state in
            state.busy += 1
            state.live += 1
        }
        let run: @Sendable () async -> Void = {
            await body()
            self.state.withLock { $0.live -= 1 }
            self.end()
        }
        return immediately ? Task.startingNow(run) : Task(operation: run)
    }
}
