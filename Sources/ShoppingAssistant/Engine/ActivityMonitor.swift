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
    private struct State {
        var busy = 0
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var cancelledEarly: Set<UInt64> = []
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
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.busy -= 1
            guard state.busy <= 0 else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Suspends until no unit of work can run. Returns `false` instead if the waiting task is
    /// cancelled first (a test's time limit), so a wait for quiescence never outlives it.
    @discardableResult
    package func waitUntilIdle() async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let outcome = state.withLock { state -> Bool? in
                    if state.cancelledEarly.remove(id) != nil { return false }
                    if state.busy <= 0 { return true }
                    state.waiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            // Not parked yet (or already resumed): the operation sees the mark and returns at once.
            let waiter = state.withLock { state in
                let waiter = state.waiters.removeValue(forKey: id)
                if waiter == nil { state.cancelledEarly.insert(id) }
                return waiter
            }
            waiter?.resume(returning: false)
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
