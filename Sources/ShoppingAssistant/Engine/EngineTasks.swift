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
        /// Tasks started at once that ended before they were listed.
        var endedUnlisted: Set<UInt64> = []
    }

    private let state = Locked(State())

    /// Starts `body` as a task of `kind`, counted by `activity` if there is one.
    ///
    /// `immediately`: the task runs on the calling thread until it first suspends (a
    /// request's task: its body is encoded and handed to the transport without waiting for a
    /// thread to take the task up). It is a task all the same: it
    /// waits for the actor like any other, so the caller's ordering cannot wait on it (H1).
    func start(
        _ kind: Kind, immediately: Bool = false, activity: ActivityMonitor?,
        _ body: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        guard immediately else {
            return state.withLock { state in
                state.next += 1
                let task = Self.task(key: state.next, activity: activity, body, ended: ended)
                state.running[state.next] = (kind, task)  // under the lock: the task cannot end before this
                return task
            }
        }
        let key = state.withLock { state in
            state.next += 1
            return state.next
        }
        // Started outside the lock, which it may take before it suspends (when it ends at once).
        let task = Self.task(key: key, immediately: true, activity: activity, body, ended: ended)
        state.withLock { state in
            if state.endedUnlisted.remove(key) == nil { state.running[key] = (kind, task) }
        }
        return task
    }

    private static func task(
        key: UInt64, immediately: Bool = false, activity: ActivityMonitor?,
        _ body: @escaping @Sendable () async -> Void, ended: @escaping @Sendable (UInt64) -> Void
    ) -> Task<Void, Never> {
        let run: @Sendable () async -> Void = {
            await EngineTasks.$current.withValue(key, operation: body)
            ended(key)
        }
        if let activity { return activity.spawn(immediately: immediately, run) }
        return immediately ? Task.startingNow(run) : Task(operation: run)
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
        state.withLock { state in
            if state.running.removeValue(forKey: key) == nil { state.endedUnlisted.insert(key) }
        }
    }
}
