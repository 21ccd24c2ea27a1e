/// Counts the engine's units of work that can make progress right now, so a replay driver
/// can tell "everything is waiting on the clock or the network" from "work is still running"
/// without polling or `Task.yield()` loops.
///
/// The engine counts each task it spawns from the moment it is spawned until it ends. A
/// manual clock and a replaying transport given the same monitor subtract a task while it is
/// parked on them and add it back, synchronously, when they wake it. When the count is zero,
/// nothing will happen until time moves or a response is released: the system is quiescent.
package final class ActivityMonitor: Sendable {
    private struct State {
        var busy = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    package init() {}

    /// Units of work that can run now.
    package var busy: Int { state.withLock { $0.busy } }

    /// A unit of work became runnable (spawned, or woken from a wait).
    package func begin() {
        state.withLock { $0.busy += 1 }
    }

    /// A unit of work ended or parked on the clock or the transport.
    package func end() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.busy -= 1
            guard state.busy <= 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Suspends until no unit of work can run.
    package func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.busy <= 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Runs `body` as one unit of work in a new task.
    @discardableResult
    package func spawn(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        begin()
        return Task {
            await body()
            self.end()
        }
    }
}
