import Foundation

/// Runs the `DeliveryMachine`: performs what it decides and feeds back what happened. It
/// decides nothing itself.
///
/// The store is written from one serial queue, in the order the machine asked, off the
/// engine's actor and the cooperative threads (a flush to disk blocks); every send is a task
/// of its own with its own deadline (B13), and one task watches every deadline. The engine
/// hands records over synchronously, from its actor, so their order is the order they
/// happened in; it only appends them to an inbox, which the machine takes in that order the
/// next time anything feeds it, so the actor never waits for a send's bookkeeping.
final class Outbox: Sendable {
    /// What an engine gives the outbox to reach the network and its own log.
    struct Wiring: Sendable {
        /// Tracking URLs' calls, and Gravity's (`/event`, `/visit`): each logs as its service.
        var call: WireCall
        var gravityCall: WireCall
        /// The Gravity base URL and key: records go to the base URL configured when they leave
        /// (DL2), and the key only ever to that origin (wire.md).
        var gravityBaseURL: URL
        var apiKey: String
        var clock: any Clock<Duration>
        var wallClock: @Sendable () -> Date
        var activity: ActivityMonitor?
        var eventTimeout: Duration
        var urlTimeout: Duration
        var logCapacity: Int
        var seed: UInt64
        /// Whether the deadline watcher sleeps on to its target once no send keeps a deadline,
        /// as the engine's ticker does on the system's clocks (where a cancelled sleep is kept
        /// until its time anyway), or ends at once (on a test's clock, whose sleepers go).
        var letsWatcherRunOut: Bool
    }

    /// What the log says of a record, kept beside it while the engine lives.
    struct Detail: Sendable {
        var kind: TrackingRecord.Kind
        var name: String
        var user: GravityUser
        var properties: [String: String]
        var eventTime: String?
        /// The identity under which its answer's `user` is taken (B9), `nil` for never.
        var identityEpoch: UInt64?
        /// Sent alone as the session's first request (B8): its end, answered or not, is the
        /// engine's to hear under this number (`setOpenerListener`), not the identity listener.
        var opener: UInt64?
    }

    fileprivate struct State {
        var machine: DeliveryMachine
        var details: [UUID: Detail] = [:]
        /// Host calls waiting for their record's first attempt, and for its persistence.
        var answers: [UUID: CheckedContinuation<Result<HTTPResponse, WireFailure>, Never>] = [:]
        var persistedSignals: [UUID: @Sendable () -> Void] = [:]
        var sends: [UUID: Task<Void, Never>] = [:]
        /// When each send that keeps its own deadline (B13) must end, in nanoseconds of the
        /// outbox's stopwatch, and the same by deadline for the one task that watches them all:
        /// a sleeping task per send would be kept by the runtime, cancelled or not, until its
        /// time, which a burst of impressions turns into megabytes.
        var sendEnds: [UUID: UInt64] = [:]
        var deadlineOrder = IDHeap()
        var watcher: Task<Void, Never>?
        /// The deadline the watcher sleeps until, `nil` when it sleeps for none.
        var watcherTarget: UInt64?
        /// Counts the watchers asked for: one asked before a later one is never listed.
        var watcherGeneration: UInt64 = 0
        /// Sends that finished before they were listed in `sends`.
        var finishedUnlisted: Set<UUID> = []
        /// Sends the machine started that have not finished: counted as the machine decides
        /// them, under this lock, so that the stop knows of one not listed in `sends` yet.
        var sendsUnderWay = 0
        /// Fired when `sendsUnderWay` reaches 0, for a stop that waits for them.
        var sendsOver: OneTimeSignal?
        var pauses: [DeliveryMachine.Lane: Task<Void, Never>] = [:]
        var flushes: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextFlush: UInt64 = 0
        var log: RingBuffer<TrackingRecord>
        var opened = false
        /// What the machine asked of the store, in the order it asked, and whether a turn of the
        /// store's queue that takes it is queued or under way.
        var storeWork: [StoreWork] = []
        var storeTurnQueued = false
        /// Where in `storeWork` removals gather, so that a burst of deliveries shares one write.
        var removalsAt: Int?
    }

    /// One piece of the store's work.
    fileprivate enum StoreWork {
        case append([DeliveryRecord])
        case remove([UUID])
        case updateAttempts(UUID, Int)
        case removeAll
        case sync
    }

    private let state: Locked<State>
    /// Records the engine handed over that the machine has not taken yet.
    private let inbox = Locked(Inbox())

    private struct Inbox {
        var records: [(DeliveryRecord, Detail, DeliveryMachine.Route)] = []
        /// Whether a turn of the store's queue that takes them is queued.
        var turnQueued = false
    }
    private let store: any DeliveryStore
    private let storeQueue = DispatchQueue(label: "shopping-assistant.delivery-store")
    private let wiring: Wiring
    private let logger: AssistantLogger
    private let elapsed: @Sendable () -> Duration
    /// Where tracking URLs may carry the key (wire.md).
    private let gravityOrigin: URLOrigin?
    /// Requests under it log as Gravity's.
    private let gravityPrefix: String
    private let identityAnswered = Locked<IdentityListener?>(nil)
    /// Where a record raised before any identity was known learns who it leaves as (DL7), and
    /// whether it goes as the session's first request (B8); and where that one's end is heard.
    private let ownerSource = Locked<(@Sendable () async -> QueuedOwner?)?>(nil)
    private let openerFinished = Locked<(@Sendable (UInt64, GravityAnsweredUser?, UInt64) -> Void)?>(nil)

    /// Hears an answer's `user`, its epoch, and whether the request went as nobody (`{}`).
    private struct IdentityListener: Sendable {
        let answered: @Sendable (GravityAnsweredUser, UInt64, Bool) -> Void
    }

    init(store: any DeliveryStore, settings: OfflineQueueSettings, wiring: Wiring, logger: AssistantLogger) {
        self.store = store
        self.wiring = wiring
        self.logger = logger
        elapsed = stopwatch(on: wiring.clock)
        gravityOrigin = URLOrigin(wiring.gravityBaseURL)
        gravityPrefix = wiring.gravityBaseURL.absoluteString
        state = Locked(
            State(
                machine: DeliveryMachine(settings: settings, seed: wiring.seed),
                log: RingBuffer(capacity: wiring.logCapacity)))
        store.setWarningHandler { [logger] in logger.log(.error, "delivery store: \($0)") }
    }

    /// Where the answers of records sent for a known identity bring their `user` (B9).
    func setIdentityListener(_ listener: @escaping @Sendable (GravityAnsweredUser, UInt64, Bool) -> Void) {
        identityAnswered.withLock { $0 = IdentityListener(answered: listener) }
    }

    /// Where records raised before any identity was known find the identity they leave as.
    func setOwnerSource(_ source: @escaping @Sendable () async -> QueuedOwner?) {
        ownerSource.withLock { $0 = source }
    }

    /// Where the end of a record sent as the session's first request is heard: its number, the
    /// `user` its answer brought (`nil` when it failed), and the epoch it was sent under.
    func setOpenerListener(_ listener: @escaping @Sendable (UInt64, GravityAnsweredUser?, UInt64) -> Void) {
        openerFinished.withLock { $0 = listener }
    }

    // MARK: - Opening

    /// Reads what earlier engines left and starts delivering it (DL3). Records accepted before
    /// the store is open wait for it: the journal keeps its order.
    func open() {
        activity?.begin()
        storeQueue.async { [self] in
            let loaded: [DeliveryRecord]
            do {
                loaded = try store.open()
            } catch {
                logger.log(.error, "delivery store: cannot be opened (\(error)); earlier records stay where they are")
                loaded = []
            }
            if !loaded.isEmpty { logger.log(.info, "delivery: \(loaded.count) record(s) from an earlier run") }
            perform { $0.machine.loaded(loaded, now: wiring.wallClock()) }
            activity?.end()
        }
    }

    private var activity: ActivityMonitor? { wiring.activity }

    // MARK: - Accepting

    /// Takes records raised by the engine; each is persisted, then sent (DL2). They wait in
    /// the inbox for the machine's next event, or for a turn of the store's queue, whichever
    /// comes first: records handed over while a turn is queued share it.
    func accept(_ records: [(DeliveryRecord, Detail)], route: DeliveryMachine.Route) {
        guard !records.isEmpty else { return }
        let queueTurn = inbox.withLock { inbox -> Bool in
            for (record, detail) in records { inbox.records.append((record, detail, route)) }
            defer { inbox.turnQueued = true }
            return !inbox.turnQueued
        }
        guard queueTurn else { return }
        onStoreQueue { outbox in
            outbox.perform(endingInboxTurn: true) { _ in [] }
        }
    }

    /// Feeds the machine what the engine handed over since it last looked, in that order.
    private func takeInbox(_ shell: inout State, endingTurn: Bool = false) -> [DeliveryMachine.Action] {
        var handed: [(DeliveryRecord, Detail, DeliveryMachine.Route)] = []
        inbox.withLock { inbox in
            if endingTurn { inbox.turnQueued = false }
            swap(&handed, &inbox.records)
        }
        guard !handed.isEmpty, !shell.machine.isStopped else { return [] }
        let now = wiring.wallClock()
        var actions: [DeliveryMachine.Action] = []
        var start = 0
        while start < handed.count {
            let route = handed[start].2
            var end = start
            while end < handed.count, handed[end].2 == route {
                shell.details[handed[end].0.id] = handed[end].1
                end += 1
            }
            actions += shell.machine.accepted(handed[start..<end].map(\.0), route: route, now: now)
            start = end
        }
        return actions
    }

    /// A host call's record: returns its first attempt's answer (retried within the deadline,
    /// DL1); `persisted` runs once it is in the store (DL5), or once the store refused it.
    /// Cancelling the caller ends the attempt; the record then waits for the drain.
    /// `replacing` is the record the call was held as at the session gate (`hold`): `record`'s
    /// bytes replace it under its id. A call whose held record was cleared meanwhile is not
    /// sent (DL8).
    func deliver(
        _ record: DeliveryRecord, detail: Detail, replacing held: UUID? = nil,
        persisted: @escaping @Sendable () -> Void
    ) async -> Result<HTTPResponse, WireFailure> {
        let id = held ?? record.id
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                var cleared = false
                var stopped = false
                perform { shell in
                    guard !shell.machine.isStopped else {
                        stopped = true  // kept for the next engine, never sent by this one
                        return []
                    }
                    let now = wiring.wallClock()
                    let actions: [DeliveryMachine.Action]
                    if let held {
                        guard let released = shell.machine.released(held, as: record, now: now) else {
                            cleared = true
                            return []
                        }
                        actions = released
                    } else {
                        actions = shell.machine.accepted([record], route: .host, now: now)
                    }
                    shell.details[id] = detail
                    shell.answers[id] = continuation
                    shell.persistedSignals[id] = persisted
                    return actions
                }
                if stopped { return continuation.resume(returning: .failure(.cancelled)) }
                if cleared { return continuation.resume(returning: .failure(Self.cleared)) }
                // Parked until the attempt is over: not runnable work, for replay quiescence,
                // once what it started is counted; counted again before it is resumed.
                activity?.end()
            }
        } onCancel: {
            let send = state.withLock { $0.sends[id] }
            send?.cancel()
        }
    }

    /// A host call's record while the call waits at the session gate (B8): kept, never sent;
    /// `persisted` runs once it is in the store (DL5). The call goes later through `deliver`
    /// replacing it, or is withdrawn.
    func hold(_ record: DeliveryRecord, detail: Detail, persisted: @escaping @Sendable () -> Void) {
        perform { shell in
            shell.details[record.id] = detail
            shell.persistedSignals[record.id] = persisted
            return shell.machine.heldAtGate(record, now: wiring.wallClock())
        }
    }

    /// The call held as `id` will never go: its record leaves the store.
    func withdrawHeld(_ id: UUID) {
        perform { shell in
            shell.details[id] = nil
            shell.persistedSignals[id] = nil
            return shell.machine.heldWithdrawn(id, now: wiring.wallClock())
        }
    }

    // MARK: - Controls (DL8)

    /// One fresh attempt now; returns when the drain stops.
    func flushQueue() async { await flush(.queue) }

    /// Returns once every record accepted so far has had its first attempt.
    func flushFirstAttempts() async { await flush(.firstAttempts) }

    private func flush(_ kind: DeliveryMachine.FlushKind) async {
        await withCheckedContinuation { continuation in
            perform { shell in
                shell.nextFlush += 1
                shell.flushes[shell.nextFlush] = continuation
                return shell.machine.flushRequested(shell.nextFlush, kind: kind, now: wiring.wallClock())
            }
            // Parked, as above; a flush over at once was counted again first, so the count
            // never passes through zero while this task still runs.
            activity?.end()
        }
    }

    /// Forgets every record, in the store too; returns once the store is empty.
    func clear() async {
        // A send under way took its record's detail when it started.
        let unanswered = performTakingUnanswered { shell in
            shell.details = [:]
            return shell.machine.cleared(now: wiring.wallClock())
        }
        answer(unanswered, with: Self.cleared)
        await withCheckedContinuation { continuation in storeQueue.async { continuation.resume() } }
    }

    /// What a host call, or a send, whose record was cleared (DL8) ends with: nothing is lost
    /// that the app did not ask to lose, and nothing cleared is tried again.
    private static let cleared = WireFailure.failed(
        AssistantError(code: .network, message: "the queue was cleared"), uncertain: false)

    /// New limits or on/off at run time (DL4).
    func setSettings(_ settings: OfflineQueueSettings) {
        perform { $0.machine.settingsChanged(settings, now: wiring.wallClock()) }
    }

    var settings: OfflineQueueSettings { state.withLock { $0.machine.settings } }

    /// Another request of the engine succeeded: a network pause ends (DL3).
    func requestSucceeded() {
        perform { $0.machine.requestSucceeded(now: wiring.wallClock()) }
    }

    /// Records in the store.
    var pendingCount: Int { read { $0.machine.pendingCount } }

    /// The queue as it is now, oldest first, for the REPL's `:queue`.
    var entries: [PendingDelivery] {
        read { shell in
            shell.machine.snapshot.map { entry in
                PendingDelivery(
                    kind: entry.record.kind, label: entry.record.label, createdAt: entry.record.createdAt,
                    attempts: entry.record.attempts, status: PendingDelivery.Status(entry.state),
                    nextAttempt: entry.state == .queued ? shell.machine.pauseEnd(of: entry.lane) : nil)
            }
        }
    }

    var log: [TrackingRecord] { state.withLock { Array($0.log) } }

    /// Whether the engine has stopped the outbox: for tests.
    var isStopped: Bool { state.withLock { $0.machine.isStopped } }

    /// Records whose log detail is kept: only those the machine still holds.
    var detailCount: Int { read { $0.details.count } }

    /// The records the bookkeeping kept per record has room for, the machine's included: for
    /// tests that a drained burst gave its storage back.
    var storageCapacity: Int {
        read { shell in
            shell.details.capacity + shell.answers.capacity + shell.persistedSignals.capacity + shell.sends.capacity
                + shell.sendEnds.capacity + shell.finishedUnlisted.capacity + shell.deadlineOrder.capacity
                + shell.machine.storageCapacity
        }
    }

    /// Nothing more starts; sends under way are cancelled and their records stay in the store
    /// for the next engine (DL8); every flush returns. Returns once the store has taken every
    /// write asked before and is closed, so that the next engine on it reads what this one
    /// left, not a delivered record whose removal was still queued.
    ///
    /// A cancelled send may still end in a success its transport had already seen; the stop
    /// waits for the sends to end, until `deadline` fires, so that such a record is removed
    /// before the close and never sent again (DL5). A transport that ignores cancellation is
    /// not waited for past it.
    func stop(waitingForSendsUntil deadline: OneTimeSignal? = nil) async {
        // The stop takes the inbox first, and with the queue off that starts sends: they are
        // listed after it, so that they are cancelled too.
        let unanswered = performTakingUnanswered { $0.machine.stopped() }
        // Kept for the next engine, never sent by this one.
        answer(unanswered, with: .cancelled)
        let (tasks, sendsOver) = state.withLock { shell -> ([Task<Void, Never>], OneTimeSignal?) in
            let tasks = Array(shell.sends.values) + Array(shell.pauses.values) + (shell.watcher.map { [$0] } ?? [])
            // A send decided but not listed yet is cancelled as it is listed (`send`), and counted.
            guard deadline != nil, shell.sendsUnderWay > 0 else { return (tasks, nil) }
            shell.sendsOver = OneTimeSignal(activity: activity)
            return (tasks, shell.sendsOver)
        }
        for task in tasks { task.cancel() }
        if let deadline, let sendsOver {
            let bound = spawn {
                await deadline.wait()
                sendsOver.fire()
            }
            await sendsOver.wait()
            bound.cancel()
        }
        // The close is work under way until it resumes the caller, who then counts as before;
        // the caller itself is parked meanwhile, as a flush's is.
        activity?.begin()
        await withCheckedContinuation { continuation in
            storeQueue.async { [store, logger] in
                // Removals of sends that ended after the machine stopped are flushed too.
                do { try store.sync() } catch { logger.log(.error, "delivery store: \(error)") }
                store.close()
                continuation.resume()
            }
            activity?.end()
        }
    }

    // MARK: - Performing

    /// Feeds the machine an event under the lock (with the shell's bookkeeping at hand) and
    /// performs what it returns: the store's work is queued before the lock is let go, so the
    /// store meets it in the order the machine decided it whichever thread decided it; the
    /// rest runs outside the lock.
    private func perform(endingInboxTurn: Bool = false, _ event: (inout State) -> [DeliveryMachine.Action]) {
        run(
            state.withLock { shell in
                queueStoreWork(takeInbox(&shell, endingTurn: endingInboxTurn) + event(&shell), &shell)
            })
    }

    /// Performs an event after which no record is sent that is not on the wire already (a
    /// clear, the stop) and takes the host calls that were waiting for a first attempt that
    /// will never come: their record was being written, or waited for a place.
    private func performTakingUnanswered(
        _ event: (inout State) -> [DeliveryMachine.Action]
    ) -> [CheckedContinuation<Result<HTTPResponse, WireFailure>, Never>] {
        var unanswered: [CheckedContinuation<Result<HTTPResponse, WireFailure>, Never>] = []
        perform { shell in
            let actions = event(&shell)
            for id in Array(shell.answers.keys) where shell.sends[id] == nil {
                if let answer = shell.answers.removeValue(forKey: id) { unanswered.append(answer) }
                shell.persistedSignals[id] = nil
            }
            return actions
        }
        return unanswered
    }

    private func answer(
        _ calls: [CheckedContinuation<Result<HTTPResponse, WireFailure>, Never>], with failure: WireFailure
    ) {
        for call in calls {
            activity?.begin()
            call.resume(returning: .failure(failure))
        }
    }

    /// Reads the machine once it has taken the inbox, as if records were taken when handed.
    private func read<Value>(_ body: (State) -> Value) -> Value {
        perform { _ in [] }
        return state.withLock { body($0) }
    }

    /// Lists what the machine asked of the store, under the state lock, in the order it asked,
    /// for a turn of the store's queue to take; returns the rest. A drop's removal is listed
    /// here and the drop itself left for `run`.
    private func queueStoreWork(_ actions: [DeliveryMachine.Action], _ shell: inout State) -> Performing {
        var rest = Performing()
        var dropped = false
        for action in actions {
            switch action {
            case .persist(let records):
                shell.storeWork.append(.append(records))
                shell.removalsAt = nil  // a removal asked later goes after it
            case .remove(let ids): shell.listRemoval(ids)
            case .updateAttempts(let id, let attempts):
                shell.storeWork.append(.updateAttempts(id, attempts))
                shell.removalsAt = nil  // a removal asked later goes after it
            case .removeAll:
                shell.storeWork.append(.removeAll)
                shell.removalsAt = nil
            case .sync:
                // A removal asked later may still join those before it: it is flushed sooner.
                shell.storeWork.append(.sync)
            case .drop(let record, _, let detail, let inStore):
                if inStore { shell.listRemoval([record.id]) }
                // Forgotten here, under the lock already held: an overflow drops records by
                // the thousand.
                shell.details[record.id] = nil
                shell.persistedSignals[record.id] = nil  // dropped before it was written
                if let answer = shell.answers.removeValue(forKey: record.id) { rest.failed.append((answer, detail)) }
                dropped = true
                rest.actions.append(action)
            case .send:
                shell.sendsUnderWay += 1
                rest.actions.append(action)
            case .pause, .finishFlushes, .log:
                rest.actions.append(action)
            }
        }
        if dropped { shell.releaseSpareCapacity() }
        // The turn is queued under the lock too, so that a close or a marker queued after this
        // event is queued after it.
        if !shell.storeWork.isEmpty, !shell.storeTurnQueued {
            shell.storeTurnQueued = true
            onStoreQueue { $0.storeTurn() }
        }
        return rest
    }

    /// Does the store's work, oldest first, until none is left: what the machine asks meanwhile
    /// joins this turn. Runs on the store's queue only.
    private func storeTurn() {
        while true {
            let work = state.withLock { shell -> [StoreWork] in
                guard !shell.storeWork.isEmpty else {
                    shell.storeTurnQueued = false
                    return []
                }
                defer {
                    shell.storeWork = []
                    shell.removalsAt = nil
                }
                return shell.storeWork
            }
            guard !work.isEmpty else { return }
            for item in work { write(item) }
        }
    }

    private func write(_ work: StoreWork) {
        switch work {
        case .append(let records):
            var failure: String?
            do { try store.append(records) } catch { failure = "\(error)" }
            let signals = state.withLock { shell -> [@Sendable () -> Void] in
                guard !shell.persistedSignals.isEmpty else { return [] }  // no host call waits
                defer { shell.releaseSpareCapacity() }
                return records.compactMap { shell.persistedSignals.removeValue(forKey: $0.id) }
            }
            for signal in signals { signal() }
            perform { $0.machine.persisted(failure: failure, now: wiring.wallClock()) }
        case .remove(let ids):
            do { try store.remove(ids) } catch { logger.log(.error, "delivery store: \(error)") }
        case .updateAttempts(let id, let attempts):
            do { try store.updateAttempts(of: id, to: attempts) } catch {
                logger.log(.error, "delivery store: \(error)")
            }
        case .removeAll:
            do { try store.removeAll() } catch { logger.log(.error, "delivery store: cannot be emptied (\(error))") }
        case .sync:
            do { try store.sync() } catch { logger.log(.error, "delivery store: \(error)") }
        }
    }

    /// What an event leaves to do outside the state lock: the machine's actions but the store's
    /// work, and the host calls whose record was dropped, to be answered with the reason.
    private struct Performing {
        var actions: [DeliveryMachine.Action] = []
        var failed: [(CheckedContinuation<Result<HTTPResponse, WireFailure>, Never>, String)] = []

        /// The work before the flushes that end, and those flushes with the answers to dropped
        /// calls, in the order `run` would have performed them in one.
        func splitAtFinishedFlushes() -> (Performing, Performing) {
            var first = Performing()
            var last = Performing(failed: failed)
            for action in actions {
                if case .finishFlushes = action { last.actions.append(action) } else { first.actions.append(action) }
            }
            return (first, last)
        }
    }

    /// Performs what is not the store's work, outside the state lock.
    private func run(_ performing: Performing) {
        defer {
            // After the drops' log lines, which come before the callers' own accounts.
            for (waiting, detail) in performing.failed {
                activity?.begin()
                waiting.resume(
                    returning: .failure(
                        .failed(AssistantError(code: .network, message: "dropped: \(detail)"), uncertain: false)))
            }
        }
        for action in performing.actions {
            switch action {
            case .send(let record, let route):
                send(record, route: route)
            case .drop(let record, let reason, let detail, _):
                logger.log(
                    .error, "delivery: \(record.kind.rawValue) \(record.label) dropped (\(reason.rawValue)): \(detail)")
            case .pause(let lane, let duration, let generation):
                let clock = wiring.clock
                let task = spawn { [weak self] in
                    do { try await clock.sleep(for: duration) } catch { return }
                    guard let self else { return }
                    self.perform { $0.machine.pauseEnded(lane, generation: generation, now: self.wiring.wallClock()) }
                }
                let ended = state.withLock { shell -> [Task<Void, Never>] in
                    // One asked just as the engine stopped is not left to sleep on (H2).
                    guard !shell.machine.isStopped else { return [task] + (shell.pauses[lane].map { [$0] } ?? []) }
                    defer { shell.pauses[lane] = task }
                    return shell.pauses[lane].map { [$0] } ?? []
                }
                for pause in ended { pause.cancel() }
            case .finishFlushes(let ids):
                let waiting = state.withLock { shell in ids.compactMap { shell.flushes.removeValue(forKey: $0) } }
                for continuation in waiting {
                    activity?.begin()
                    continuation.resume()
                }
            case .log(let level, let line):
                logger.log(level, line)
            case .persist, .remove, .updateAttempts, .removeAll, .sync:
                // The store's work, queued under the lock by `queueStoreWork`.
                assertionFailure("store work reached run: \(action)")
            }
        }
    }

    /// Store work in the order it was asked for, counted as work under way, so that a replay
    /// or a test that waits for quiet sees the store as it will stay.
    private func onStoreQueue(_ work: @escaping @Sendable (Outbox) -> Void) {
        activity?.begin()
        storeQueue.async { [self] in
            work(self)
            activity?.end()
        }
    }

    // MARK: - Sending

    private func send(_ record: DeliveryRecord, route: DeliveryMachine.Route?) {
        let kept = state.withLock { $0.details[record.id] }
        let built = request(for: record)
        let timeout = record.kind == .tracking ? wiring.urlTimeout : wiring.eventTimeout
        let delivery = route != .host
        // A host call's request was built as it left; the others may have waited since.
        let ownerless = route != .host && record.kind != .tracking && record.owner == nil
        let task = spawn { [self] in
            var (request, detail) = (built, kept)
            if ownerless {
                switch await owned(record) {
                case .asKept:
                    break
                case .withheld:
                    return finish(record, detail: detail, route: route, .failure(.cancelled))
                case .owned(let body, let user, let epoch, let opener):
                    request?.body = body
                    detail = detail ?? Self.detail(ofKept: record)
                    detail?.user = user
                    detail?.identityEpoch = epoch
                    detail?.opener = opener
                }
                // DL8: cleared while it waited to learn its owner, it goes no more.
                guard state.withLock({ $0.machine.holds(record.id) }) else {
                    return finish(record, detail: detail, route: route, .failure(Self.cleared))
                }
            }
            let result = await TrackerDeliveryScope.$isActive.withValue(delivery) { [request] in
                await attempt(request, of: record.id, retrying: route != nil, timeout: timeout)
            }
            finish(record, detail: detail, route: route, result)
        }
        // A send may be over before it is listed here: it then left a mark instead. One listed
        // after a stop collected the sends to cancel is cancelled here.
        let (alreadyOver, stopped) = state.withLock { shell -> (Bool, Bool) in
            if shell.finishedUnlisted.remove(record.id) != nil { return (true, false) }
            shell.sends[record.id] = task
            return (false, shell.machine.isStopped)
        }
        if stopped { task.cancel() }
        // A host call's own deadline is the engine's (B13); the others' is kept here.
        guard delivery, !alreadyOver, !stopped else { return }
        let end = Self.nanoseconds(elapsed() + timeout)
        let generation = state.withLock { shell -> UInt64? in
            guard shell.sends[record.id] != nil else { return nil }  // already finished
            shell.sendEnds[record.id] = end
            shell.deadlineOrder.insert(record.id, key: end)
            if let target = shell.watcherTarget, target <= end { return nil }
            shell.watcherTarget = end
            shell.watcherGeneration += 1
            return shell.watcherGeneration
        }
        if let generation { startWatcher(until: end, generation: generation) }
    }

    /// A watcher for the deadline now first; the one before it, sleeping for a later one, ends.
    private func startWatcher(until target: UInt64, generation: UInt64) {
        let task = spawn { [weak self] in await self?.watchDeadlines(startedFor: target) }
        let letsWatcherRunOut = wiring.letsWatcherRunOut
        let ended = state.withLock { shell -> [Task<Void, Never>] in
            // A later watcher was asked for meanwhile, for a sooner deadline: it is the one. One
            // asked just as the engine stopped ends at once (H2).
            guard generation == shell.watcherGeneration, !shell.machine.isStopped else { return [task] }
            // Every send may have ended before the watcher was listed; it then ends too, as a
            // listed one would have.
            let orphaned = shell.sendEnds.isEmpty && !letsWatcherRunOut
            defer { shell.watcher = orphaned ? nil : task }
            return (shell.watcher.map { [$0] } ?? []) + (orphaned ? [task] : [])
        }
        for watcher in ended { watcher.cancel() }
    }

    /// Sleeps until the first deadline of a send under way, cancels the sends whose deadline
    /// has passed, and again, until no send keeps a deadline; a send that ended before its
    /// deadline is simply passed over. Where the watcher is left to run out, it sleeps at least
    /// until the deadline it was started for, as if it had been asleep before the sends ended.
    private func watchDeadlines(startedFor target: UInt64) async {
        let runsOut = wiring.letsWatcherRunOut
        while !Task.isCancelled {
            let now = Self.nanoseconds(elapsed())
            let (next, expired) = state.withLock { shell -> (UInt64?, [Task<Void, Never>]) in
                var expired: [Task<Void, Never>] = []
                while let top = shell.deadlineOrder.top, top.key <= now || shell.sendEnds[top.id] != top.key {
                    shell.deadlineOrder.removeTop()
                    guard shell.sendEnds[top.id] == top.key else { continue }  // ended, or sent again since
                    shell.sendEnds[top.id] = nil
                    if let send = shell.sends[top.id] { expired.append(send) }
                }
                shell.watcherTarget = shell.deadlineOrder.top?.key ?? (runsOut && target > now ? target : nil)
                return (shell.watcherTarget, expired)
            }
            for send in expired { send.cancel() }
            guard let next else { return }
            do { try await wiring.clock.sleep(for: .nanoseconds(next - now)) } catch { return }
        }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let parts = duration.components
        return UInt64(max(0, parts.seconds)) * 1_000_000_000 + UInt64(max(0, parts.attoseconds)) / 1_000_000_000
    }

    /// The request a record stands for, to the Gravity base URL configured now (DL2); the key
    /// only for the Gravity origin (wire.md).
    private func request(for record: DeliveryRecord) -> HTTPRequest? {
        switch record.kind {
        case .event, .visit:
            return HTTPRequest(
                method: .post, url: EndpointURLs.url(wiring.gravityBaseURL, record.target),
                headers: ["Content-Type": "application/json", "Authorization": "Bearer \(wiring.apiKey)"],
                body: record.body, maximumResponseBytes: EndpointLimits.eventBytes,
                redirectPolicy: EndpointLimits.serviceRedirects)
        case .tracking:
            guard HTTPURLValidator.isValid(record.target), let url = URL(string: record.target) else { return nil }
            var headers: [String: String] = [:]
            if let gravityOrigin, URLOrigin(url) == gravityOrigin {
                headers["Authorization"] = "Bearer \(wiring.apiKey)"
            }
            return HTTPRequest(
                method: .get, url: url, headers: headers, maximumResponseBytes: EndpointLimits.trackingBytes,
                redirectPolicy: EndpointLimits.trackingRedirects)
        }
    }

    /// What the log says of a record an earlier engine kept: its label, owner and `eventTime`
    /// as written (DL6); its answer is never adopted (DL7), unless it was raised before any
    /// identity was known (`owned`).
    static func detail(ofKept record: DeliveryRecord) -> Detail {
        var eventTime: String?
        if let body = record.body, let json = WireJSON.decode(body), case .array(let items)? = json["data"],
            let time = items.first?["eventTime"]?.stringValue
        {
            eventTime = time
        }
        return Detail(
            kind: record.kind == .tracking ? .url : .event, name: record.label, user: GravityUser(uid: record.owner),
            properties: [:], eventTime: eventTime, identityEpoch: nil)
    }

    /// One attempt, or for a first attempt as many as DL1 allows within `timeout`, the same
    /// request every time, while the machine still holds the record (a cleared one goes no more).
    private func attempt(_ request: HTTPRequest?, of id: UUID, retrying: Bool, timeout: Duration) async -> Result<
        HTTPResponse, WireFailure
    > {
        guard let request else {
            return .failure(
                .failed(AssistantError(code: .invalidResponse, message: "not a valid URL"), uncertain: false))
        }
        let start = elapsed()
        var failed = 0
        while true {
            let call = request.url.absoluteString.hasPrefix(gravityPrefix) ? wiring.gravityCall : wiring.call
            let result = await call.perform(request)
            guard case .failure(let failure) = result else { return result }
            failed += 1
            guard retrying, !Task.isCancelled,
                let pause = RetrySchedule.pause(
                    afterFailed: failed, FailureClass(failure), elapsed: elapsed() - start, deadline: timeout)
            else { return result }
            do { try await wiring.clock.sleep(for: pause) } catch { return result }
            guard state.withLock({ $0.machine.mayRetry(id) }) else { return result }
        }
    }

    /// A record raised before any identity was known, as it leaves (DL7): as the identity the
    /// engine knows, which may mean waiting for the session's first request (B8); with nobody
    /// known it goes as kept, alone, as that first request (`opener`), and its answer opens
    /// the profile.
    private func owned(_ record: DeliveryRecord) async -> Owned {
        // A body that cannot take a user goes as kept, and never as the session's first request.
        guard let body = record.body, GravityClient.takesUser(body), let source = ownerSource.withLock({ $0 }) else {
            return .asKept
        }
        guard let owner = await source() else { return .withheld }
        // With nobody known it goes as kept (`{}`): the session's first request opens a profile.
        let sent = owner.user.isNobody ? body : GravityClient.body(body, sentAs: owner.user) ?? body
        return .owned(body: sent, user: owner.user, epoch: owner.identityEpoch, opener: owner.opener)
    }

    /// What `owned` found: the record goes as kept, does not go now (the engine stopped: kept
    /// for the next one), or goes as `user`.
    private enum Owned {
        case asKept
        case withheld
        case owned(body: Data, user: GravityUser, epoch: UInt64, opener: UInt64?)
    }

    private func finish(
        _ record: DeliveryRecord, detail: Detail?, route: DeliveryMachine.Route?,
        _ result: Result<HTTPResponse, WireFailure>
    ) {
        let stopped = state.withLock { $0.machine.isStopped }
        let detail = detail ?? Self.detail(ofKept: record)
        let outcome: DeliveryMachine.Outcome
        var failure: String?
        // The `user` of a Gravity answer the outbox reads itself; a host call's answer is the
        // engine's own to read.
        var answeredUser: GravityAnsweredUser?
        switch result {
        case .success(let response):
            outcome = .delivered
            if record.kind != .tracking, route != .host {
                // The server has it; an answer that is not Gravity's JSON is still worth a line,
                // and sending the same bytes again could not mend it (DL1: final).
                guard let (_, user) = GravityAnswer.events(response.body) else {
                    failure = AssistantError.Code.invalidResponse.rawValue
                    break
                }
                answeredUser = user
            }
        case .failure(.cancelled):
            outcome = stopped ? .abandoned : .failed(.transient, reason: "timed out")
            failure = stopped ? "cancelled" : "timeout"
        case .failure(.failed(let error, let uncertain)):
            outcome = .failed(FailureClass(.failed(error, uncertain: uncertain)), reason: "\(error)")
            failure = error.code.rawValue
        }
        // B8: the session's first request is over, answered or not: the gate opens either way.
        if let opener = detail.opener, let epoch = detail.identityEpoch, !stopped {
            openerFinished.withLock { $0 }?(opener, answeredUser, epoch)
        }
        let letsWatcherRunOut = wiring.letsWatcherRunOut
        let (waiting, watcher) = state.withLock {
            shell -> (CheckedContinuation<Result<HTTPResponse, WireFailure>, Never>?, Task<Void, Never>?) in
            if shell.sends.removeValue(forKey: record.id) == nil { shell.finishedUnlisted.insert(record.id) }
            var watcher: Task<Void, Never>?
            if shell.sendEnds.removeValue(forKey: record.id) != nil {
                if shell.sendEnds.isEmpty, !letsWatcherRunOut {
                    watcher = shell.watcher
                    (shell.watcher, shell.watcherTarget, shell.deadlineOrder) = (nil, nil, IDHeap())
                } else {
                    shell.dropEndedDeadlinesIfMostlyEnded()
                }
            }
            shell.log.append(
                TrackingRecord(
                    kind: detail.kind, name: detail.name, uid: detail.user.uid, customUserId: detail.user.custom,
                    properties: detail.properties, failure: failure, eventTime: detail.eventTime,
                    deferred: route == nil))
            // A record never written (the queue is off) never signals its persistence.
            if !shell.persistedSignals.isEmpty { shell.persistedSignals[record.id] = nil }
            return (shell.answers.removeValue(forKey: record.id), watcher)
        }
        watcher?.cancel()
        let (actions, kept) = state.withLock { shell -> (Performing, Bool) in
            // The store work of this end is queued before a waiting stop hears of it.
            let actions = queueStoreWork(
                shell.machine.attemptFinished(record.id, outcome, now: wiring.wallClock()), &shell)
            // Whatever the machine forgot (delivered, dropped, unprotected or cleared), the log forgets.
            if !shell.machine.holds(record.id) { shell.details[record.id] = nil }
            let kept = shell.machine.keepsInStore(record.id)
            shell.releaseSpareCapacity()
            return (actions, kept)
        }
        if kept, case .failed(let failureClass, let reason) = outcome, failureClass != .final {
            logger.log(
                .info, "delivery: \(record.kind.rawValue) \(record.label) not delivered yet (\(reason)); kept for later"
            )
        }
        // What the machine decided (a drop's log line among it) comes before the caller's own
        // account of its failure. The next send starts first: handing the answer's `user` over
        // is a task of the engine's, which the drain need not wait for.
        let (first, last) = actions.splitAtFinishedFlushes()
        run(first)
        // B9: the answer's `user`, for the identity the record was sent for. Not once the
        // engine stopped, and before a flush or a stop hears this send ended: nothing the
        // engine starts may run after its shutdown (H2), whose first step is such a flush.
        if detail.opener == nil, let epoch = detail.identityEpoch, let user = answeredUser,
            !state.withLock({ $0.machine.isStopped })
        {
            identityAnswered.withLock { $0 }?.answered(user, epoch, detail.user.isNobody)
        }
        run(last)
        let sendsOver = state.withLock { shell -> OneTimeSignal? in
            shell.sendsUnderWay -= 1
            guard shell.sendsUnderWay == 0, let over = shell.sendsOver else { return nil }
            shell.sendsOver = nil
            return over
        }
        if let waiting {
            activity?.begin()
            waiting.resume(returning: Self.saying(result, kept: kept))
        }
        sendsOver?.fire()  // last: a stop waiting for it finds this send's work all done
    }

    /// A host call's failure, saying that its record waits in the queue when the machine still
    /// keeps it in the store: the caller's log line must not read as a loss when nothing was lost, nor promise
    /// a retry of a record dropped or cleared (DL8).
    static func saying(_ result: Result<HTTPResponse, WireFailure>, kept: Bool) -> Result<HTTPResponse, WireFailure> {
        guard kept, case .failure(.failed(var error, let uncertain)) = result else { return result }
        error.message += "; kept, and sent again from the queue"
        return .failure(.failed(error, uncertain: uncertain))
    }

    @discardableResult
    private func spawn(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        activity.map { $0.spawn(body) } ?? Task(operation: body)
    }
}

extension Outbox.State {
    /// A removal joins the removals already listed since the last emptying or count of
    /// failures: a record is removed only once its append is over, so writing it with an
    /// earlier removal is never before its append.
    fileprivate mutating func listRemoval(_ ids: [UUID]) {
        if let index = removalsAt, case .remove(let listed) = storeWork[index] {
            storeWork[index] = .remove(listed + ids)
        } else {
            removalsAt = storeWork.count
            storeWork.append(.remove(ids))
        }
    }

    /// What a burst of records grew in the bookkeeping kept per record is given back as they
    /// go, as the machine gives back its own.
    fileprivate mutating func releaseSpareCapacity() {
        details.releaseSpareCapacity()
        answers.releaseSpareCapacity()
        persistedSignals.releaseSpareCapacity()
        sends.releaseSpareCapacity()
        sendEnds.releaseSpareCapacity()
        finishedUnlisted.releaseSpareCapacity()
    }

    /// Sends that ended before their deadline leave their place in `deadlineOrder` behind.
    fileprivate mutating func dropEndedDeadlinesIfMostlyEnded() {
        deadlineOrder.rebuildIfMostlyStale(live: sendEnds.count) {
            sendEnds.map { id, end in IDHeap.Item(key: end, id: id) }
        }
    }
}
