/// The tasks an engine has started and that have not ended: what a shutdown waits for (H2).
///
/// Each task takes itself out as it ends, synchronously, so keeping the list costs no extra
/// hop to the actor. Host callbacks are listed apart: they run the host's code, which the
/// engine cannot end, and they hold the engine only weakly.
final class EngineTasks: Sendable {
    enum Kind: Sendable, Hashable {
        /// A request's task: cancelled by a shutdown.
        case request
        /// A host callback: the host's own.
        case hostCallback
        /// Anything else the engine runs: the ticker, a cancelled caller's event.
        case engine
    }

    private struct State {
        var next: UInt64 = 0
        var running: [UInt64: (kind: Kind, task: Task<Void, Never>)] = [:]
    }

    private let state = Locked(State())

    /// Starts `body` as a task of `kind`, counted by `activity` if there is one.
    func start(_ kind: Kind, activity: ActivityMonitor?, _ body: @escaping @Sendable () async -> Void) -> Task<
        Void, Never
    > {
        state.withLock { state in
            state.next += 1
            let key = state.next
            let run: @Sendable () async -> Void = {
                await EngineTasks.$current.withValue(key, operation: body)
                self.ended(key)
            }
            let task = activity.map { $0.spawn(run) } ?? Task(operation: run)
            state.running[key] = (kind, task)  // under the lock: the task cannot end before this
            return task
        }
    }

    /// How many tasks are running, host callbacks included.
    var count: Int { state.withLock { $0.running.count } }

    /// The kinds of the tasks running, for a test that finds one left.
    var kinds: [Kind] { state.withLock { $0.running.values.map(\.kind) } }

    /// The engine task the calling code runs in, if any (and the tasks it starts).
    @TaskLocal private static var current: UInt64?

    /// Suspends until every task but host callbacks — and the one the caller runs in: a
    /// presenter performed by a request's own task may shut the engine down — has ended (or
    /// the calling task is cancelled).
    func waitForEngineTasks() async {
        let caller = Self.current
        while true {
            let running = state.withLock { state in
                state.running.filter { $0.key != caller && $0.value.kind != .hostCallback }.map(\.value.task)
            }
            guard let task = running.first else { return }
            await task.value
            if Task.isCancelled { return }
        }
    }

    private func ended(_ key: UInt64) {
        state.withLock { _ = $0.running.removeValue(forKey: key) }
    }
}
