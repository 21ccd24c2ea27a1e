import Foundation
import Synchronization

/// One entry of the analytics log, for inspection (REPL `:log`, tests).
public struct TrackingRecord: Sendable, Hashable, CustomStringConvertible {
    /// The channel a record went through, so a test can tell lifecycle events from tracking URLs.
    public enum Kind: String, Sendable, Hashable {
        /// A lifecycle event through Gravity `/event` (AN1).
        case event
        /// A tracking URL request (AN5, AN7).
        case url
    }

    /// Which channel delivered it.
    public let kind: Kind
    /// The event type, or the tracking URL.
    public let name: String
    /// The SDK-managed `user.uid` the record was sent as (AN3); `nil` for a manual user.
    public let uid: String?
    /// The app's own id (`user.custom`) the record was sent as, for a manual user (B3, AN3).
    public let customUserId: String?
    /// The event's `customProps`; empty for a tracking URL.
    public let properties: [String: String]
    /// `nil` on success, else the error code.
    public let failure: String?
    /// What went wrong, for the error the engine logs; not part of the record's identity.
    let reason: String?

    init(
        kind: Kind, name: String, uid: String?, customUserId: String?, properties: [String: String], failure: String?,
        reason: String? = nil
    ) {
        self.kind = kind
        self.name = name
        self.uid = uid
        self.customUserId = customUserId
        self.properties = properties
        self.failure = failure
        self.reason = reason
    }

    /// Records compare by what they report; the logged wording of a failure is not compared.
    public static func == (lhs: TrackingRecord, rhs: TrackingRecord) -> Bool {
        lhs.kind == rhs.kind && lhs.name == rhs.name && lhs.uid == rhs.uid && lhs.customUserId == rhs.customUserId
            && lhs.properties == rhs.properties && lhs.failure == rhs.failure
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(name)
        hasher.combine(uid)
        hasher.combine(customUserId)
        hasher.combine(properties)
        hasher.combine(failure)
    }

    /// One line: kind, name, user and properties sorted by key, and the failure if any.
    public var description: String {
        let props = properties.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let outcome = failure.map { " FAILED \($0)" } ?? ""
        let user = customUserId.map { "custom=\($0)" } ?? "uid=\(uid ?? "-")"
        return "\(kind.rawValue) \(name) \(user)\(props.isEmpty ? "" : " " + props)\(outcome)"
    }
}

/// Delivers lifecycle events and tracking URLs, each bound to the identity it happened under
/// (AN3, AN8). Delivery continues after the chat closes and across identity changes; nothing is
/// retried forever and nothing is promised at process exit (AN4, AN9).
///
/// Lifecycle events go one at a time, in the order they happened (so per identity too).
/// Tracking URLs go to third-party hosts named by the server's data, up to `urlLanes` at once:
/// one host that never answers takes one lane until its deadline and holds up nothing else
/// (B13). Every request has its own deadline on the engine's clock (B13): one watcher sleeps
/// until the earliest (at most the shorter timeout at a time) and ends the requests that
/// passed theirs.
///
/// The engine queues into an inbox of its own; a drain moves a whole burst into the lanes on
/// the tracking queue (`TrackingExecutor`), where every delivery of every tracker runs. So
/// an impression costs its host call a short lock, not a hand-over to another thread.
final class Tracker: Sendable {
    enum Job: Sendable, Hashable {
        /// A lifecycle event, with the envelope (user, page, options) it is bound to (AN3), and
        /// the identity it was sent for, under which its answer's `user` is taken (B9).
        indirect case event(GravityCustomEvent, envelope: GravityClient.Envelope, identityEpoch: UInt64)
        /// A tracking URL, requested with `GET` and no key; `user` is who it is logged for.
        case url(TrackingURL, user: GravityUser)
    }

    /// Tracking URLs in flight at once. Enough that a stalled host (or three) leaves room for
    /// the rest, few enough that a burst of impressions never opens more than a handful of
    /// connections to third parties; the transports reuse them.
    static let urlLanes = 4
    /// How many times an idle worker yields for more work before it ends: impressions come in
    /// bursts (a carousel scrolled into view), and a worker that is still there takes the next
    /// job without a task being started and a thread woken for it. A yield of an idle worker
    /// reads one atomic count, never a lock. New jobs reach it through a drain, which its own
    /// yields bring on: each is a job of the tracking queue, and a drain waits for 4 at most.
    ///
    /// Long only after a burst (`burst` jobs or more in a row for this worker; a burst of
    /// impressions spreads over the URL lanes): a yield costs about 2,700 instructions of the
    /// tracking core, and 64 after every message's two or three lifecycle events took 6 % of
    /// all the work of figure 2 of the bench, beside the next message's round trip. After a
    /// burst the next impression is likely; after a message's events it is not.
    private static let lingerYields = (afterBurst: 64, otherwise: 4)
    private static let burst = 4

    private enum Lane: Sendable, Hashable {
        case events, urls
    }

    private struct Worker {
        let lane: Lane
        var task: Task<Void, Never>?
        /// The job it delivers now, with its deadline on the engine's clock.
        var job: UInt64?
        var deadline: Duration = .zero
        var timedOut = false
    }

    private struct State: WaitingState {
        var events = FIFOQueue<(sequence: UInt64, job: Job)>()
        var urls = FIFOQueue<(sequence: UInt64, job: Job)>()
        /// Every job up to this one has been attempted; `attemptedAhead` holds the records of
        /// later ones done out of order (URLs go in parallel), which join the log — and report
        /// their failures — in the order the jobs were queued, so that the log reads the same
        /// however the lanes raced.
        var attemptedThrough: UInt64 = 0
        var attemptedAhead: [UInt64: TrackingRecord] = [:]
        /// The inbox's other buffer, empty, kept for the next drain.
        var spareInbox: [(sequence: UInt64, job: Job)] = []
        var workers: [UInt64: Worker] = [:]
        var nextWorker: UInt64 = 0
        /// How many workers each lane has, and how many URL workers have no job: kept with
        /// `workers`, so that a drain reads three counts instead of walking the workers.
        var eventWorkers = 0
        var urlWorkers = 0
        var idleURLWorkers = 0
        /// A watcher runs (or is being started), and its task once it is.
        var watching = false
        var watcher: Task<Void, Never>?
        /// The engine shut down: nothing more is queued or delivered (H2).
        var stopped = false
        /// Flushes, each waiting for `attemptedThrough` to reach its count.
        var waiters = Waiters<Void, UInt64>()
        var log: RingBuffer<TrackingRecord>

        /// A new worker of `lane`, without a job yet.
        mutating func addWorker(on lane: Lane) -> UInt64 {
            nextWorker += 1
            workers[nextWorker] = Worker(lane: lane)
            switch lane {
            case .events: eventWorkers += 1
            case .urls:
                urlWorkers += 1
                idleURLWorkers += 1
            }
            assert(countsMatchWorkers)
            return nextWorker
        }

        mutating func removeWorker(_ id: UInt64) {
            guard let worker = workers.removeValue(forKey: id) else { return }
            switch worker.lane {
            case .events: eventWorkers -= 1
            case .urls:
                urlWorkers -= 1
                if worker.job == nil { idleURLWorkers -= 1 }
            }
            assert(countsMatchWorkers)
        }

        /// Gives worker `id` the job `sequence` with its deadline, or none (`nil`).
        mutating func assign(_ sequence: UInt64?, deadline: Duration, to id: UInt64) {
            guard var worker = workers[id] else { return }
            if worker.lane == .urls {
                if worker.job == nil { idleURLWorkers -= 1 }
                if sequence == nil { idleURLWorkers += 1 }
            }
            worker.job = sequence
            worker.deadline = deadline
            workers[id] = worker
            assert(countsMatchWorkers)
        }

        /// The kept counts are what a walk of the workers finds (checked in debug builds).
        private var countsMatchWorkers: Bool {
            let lanes = workers.values.map(\.lane)
            return eventWorkers == lanes.filter { $0 == .events }.count
                && urlWorkers == lanes.filter { $0 == .urls }.count
                && idleURLWorkers == workers.values.filter { $0.lane == .urls && $0.job == nil }.count
        }
    }

    private let state: Locked<State>
    /// Jobs in the lanes and not yet taken by a worker, read without the lock by a worker that
    /// waits for more work, so that it does not contend for the lock with the workers that
    /// deliver and the drains that fill the lanes.
    private let pending = Atomic<Int>(0)

    /// Jobs the engine queued that no worker has taken into the lanes yet. The engine appends
    /// under this lock, never under `state`'s, which every worker takes once a delivery: the
    /// calls that queue tracking (an impression each, many a second) do not contend with the
    /// deliveries, and one drain moves a whole burst into the lanes (figure 3 of the bench).
    private struct Inbox {
        var jobs: [(sequence: UInt64, job: Job)] = []
        /// Sequence numbers: every job queued gets the next one.
        var queued: UInt64 = 0
        /// A drain is asked for what the inbox holds.
        var drainScheduled = false
        var stopped = false
    }

    private let inbox = Locked(Inbox())
    /// Workers alive, of either lane: with none, the engine drains at once, and the worker it
    /// starts is the only hop a lone event takes.
    private let workerCount = Atomic<Int>(0)
    private let gravity: GravityClient
    private let call: WireCall
    private let activity: ActivityMonitor?
    private let clock: any Clock<Duration>
    /// Whether the deadline watcher outlives the last worker until it next wakes, and ends
    /// then, instead of being cancelled: on the system's clocks, where its sleep costs a wake a
    /// second at most (`SlicedSleep`) off the round trip, and cancelling it (and starting the
    /// next message's) woke threads beside the next round trip. On a manual or virtual clock a
    /// sleeper is visible, so it is cancelled at once.
    private let watcherRunsOut: Bool
    private let elapsed: @Sendable () -> Duration
    private let eventTimeout: Duration
    private let urlTimeout: Duration
    /// Told the `user` of each lifecycle event's answer, with the identity it was sent for (B9).
    /// Boxed: see `Locked` on why a bare closure is never its value.
    private let identityAnswered = Locked<IdentityListener?>(nil)

    private struct IdentityListener: Sendable {
        let answered: @Sendable (GravityAnsweredUser, UInt64) -> Void
    }

    /// - Parameters:
    ///   - logCapacity: how many of the latest records the log keeps, so a long-lived engine
    ///     does not grow with its history.
    ///   - eventTimeout, urlTimeout: the deadlines of a lifecycle event and of a tracking URL on
    ///     `clock` (B13).
    ///   - watcherRunsOut: the deadline watcher ends when it wakes with no worker left instead of
    ///     being cancelled with the last one; by default on the system's clocks only.
    init(
        gravity: GravityClient, call: WireCall, activity: ActivityMonitor?, logCapacity: Int,
        clock: any Clock<Duration>, eventTimeout: Duration, urlTimeout: Duration, watcherRunsOut: Bool? = nil
    ) {
        self.gravity = gravity
        self.call = call
        self.activity = activity
        self.clock = clock
        elapsed = Self.stopwatch(on: clock)
        self.eventTimeout = eventTimeout
        self.urlTimeout = urlTimeout
        self.watcherRunsOut = watcherRunsOut ?? clock.isSystemClock
        state = Locked(State(log: RingBuffer(capacity: logCapacity)))
    }

    private static func stopwatch(on clock: any Clock<Duration>) -> @Sendable () -> Duration {
        func start<C: Clock>(_ clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
            let start = clock.now
            return { start.duration(to: clock.now) }
        }
        return start(clock)
    }

    /// Whom to tell the `user` a lifecycle event's answer carries (B9).
    func setIdentityListener(_ listener: @escaping @Sendable (GravityAnsweredUser, UInt64) -> Void) {
        identityAnswered.withLock { $0 = IdentityListener(answered: listener) }
    }

    /// The latest records, oldest first.
    var log: [TrackingRecord] { state.withLock { Array($0.log) } }

    /// Queues jobs in order. Cheap for a burst: the jobs join the inbox, and the first of a
    /// burst asks the tracking queue for a drain, which it runs once it has nothing else to
    /// do, or after a few jobs (`TrackingExecutor`); with no worker at all, this call moves the
    /// jobs and starts one itself.
    func enqueue(_ jobs: some Collection<Job>) {
        guard !jobs.isEmpty else { return }
        let first = inbox.withLock { inbox -> Bool in
            guard !inbox.stopped else { return false }
            for job in jobs {
                inbox.queued += 1
                inbox.jobs.append((inbox.queued, job))
            }
            guard !inbox.drainScheduled else { return false }
            inbox.drainScheduled = true
            return true
        }
        guard first else { return }
        if workerCount.load(ordering: .relaxed) == 0 {
            drain()
        } else {
            // Counted until it ran: what is queued is work, even while another engine's
            // deliveries keep the tracking queue busy.
            activity?.begin()
            TrackingExecutor.shared.drainWhenIdle {
                self.drain()
                self.activity?.end()
            }
        }
    }

    /// Moves the inbox into the lanes and starts the workers they want.
    private func drain() {
        let starts = state.withLock { state -> [(UInt64, Lane)] in
            guard takeInbox(&state) else { return [] }
            return workersToStart(&state)
        }
        start(starts)
    }

    /// Under `state`'s lock: moves what the inbox holds into the lanes, in order; whether it
    /// held anything. With `stop()`, the only places the two locks nest, always `state` first.
    private func takeInbox(_ state: inout State) -> Bool {
        // The inbox's buffer and the spare change places: neither is allocated again, unless a
        // burst made it large (opening a long chat tracks every reply that landed closed, AN7),
        // which is not kept for the rest of the engine's life.
        var taken: [(sequence: UInt64, job: Job)] = []
        swap(&taken, &state.spareInbox)
        inbox.withLock { inbox in
            swap(&taken, &inbox.jobs)
            inbox.drainScheduled = false
        }
        defer {
            taken.removeAll(keepingCapacity: taken.capacity <= FIFOQueue<(sequence: UInt64, job: Job)>.keptCapacity)
            state.spareInbox = taken
        }
        guard !taken.isEmpty, !state.stopped else { return false }
        for entry in taken {
            switch entry.job {
            case .event: state.events.append(entry)
            case .url: state.urls.append(entry)
            }
        }
        pending.add(taken.count, ordering: .releasing)
        return true
    }

    /// The workers to start for what is queued: one for events, up to `urlLanes` for URLs;
    /// registered under the lock, started after it.
    private func workersToStart(_ state: inout State) -> [(UInt64, Lane)] {
        defer { workerCount.store(state.workers.count, ordering: .relaxed) }
        // This runs on every drain: counts only, and no allocation when nothing starts.
        var starts: [(UInt64, Lane)] = []
        if !state.events.isEmpty, state.eventWorkers == 0 {
            starts.append((state.addWorker(on: .events), .events))
        }
        var wanted = min(state.urls.count - state.idleURLWorkers, Self.urlLanes - state.urlWorkers)
        while wanted > 0 {
            starts.append((state.addWorker(on: .urls), .urls))
            wanted -= 1
        }
        return starts
    }

    /// A task of the tracker's, on the tracking queue (`TrackingExecutor`): deliveries share
    /// one core at most, and never take the others from the host calls that queued them.
    /// Counted by the activity monitor, when there is one.
    @discardableResult
    private func spawn(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if let activity { return activity.spawn(on: TrackingExecutor.shared, body) }
        return Task(executorPreference: TrackingExecutor.shared, priority: .utility, operation: body)
    }

    private func start(_ workers: [(UInt64, Lane)]) {
        for (id, lane) in workers {
            let body: @Sendable () async -> Void = { await self.work(id, on: lane) }
            // Holds the tracker: what is queued is still delivered if the engine goes away
            // without a shutdown (no promise at process exit, AN4, AN9).
            let task = spawn(body)
            let overdue = state.withLock { state -> Bool in
                guard let worker = state.workers[id] else { return false }
                state.workers[id]?.task = task
                return worker.timedOut
            }
            // The task starts before it is listed here: the watcher may have found its job past
            // its deadline in between (a timeout of zero, a drain on a slow thread), when there
            // was no task to cancel. It ends now (B13).
            if overdue { task.cancel() }
        }
    }

    /// Suspends until everything queued before this call has been attempted (later jobs do
    /// not hold it up), or the calling task is cancelled, or the tracker stopped.
    func flush() async {
        let queued = inbox.withLock { $0.queued }
        await state.wait(cancelled: (), activity: activity) { state in
            state.attemptedThrough >= queued || state.stopped ? .proceed(()) : .park(queued)
        }
    }

    /// Drops whatever is still queued, stops the deliveries under way and lets every flush
    /// return; nothing is delivered afterwards (H2).
    func stop() {
        let (tasks, waiters) = state.withLock { state -> ([Task<Void, Never>], [Waiters<Void, UInt64>.Waiter]) in
            state.stopped = true
            state.events.removeAll()
            state.urls.removeAll()
            state.attemptedThrough = inbox.withLock { inbox in
                inbox.stopped = true
                inbox.jobs.removeAll()
                inbox.drainScheduled = false
                return inbox.queued
            }
            state.attemptedAhead = [:]
            let tasks = state.workers.values.compactMap(\.task) + [state.watcher].compactMap { $0 }
            state.watcher = nil
            state.watching = false
            pending.store(0, ordering: .releasing)  // lingering workers stop looking at once
            return (tasks, state.waiters.takeAll())
        }
        for task in tasks { task.cancel() }
        resume(waiters)
    }

    // MARK: - Workers

    /// Delivers jobs of `lane` until there are none for a moment. A job's record and the
    /// claim of the next job share one critical section: the lanes' lock is taken once a
    /// delivery, not three times.
    private func work(_ id: UInt64, on lane: Lane) async {
        var next = await take(for: id, on: lane, afterBurst: false)
        var inARow = 0  // jobs since the worker last waited for work
        while let (sequence, job) = next {
            inARow += 1
            let delivered = await TrackerDeliveryScope.$isActive.withValue(true) { await deliver(job) }
            let now = elapsed()
            let cancelled = Task.isCancelled
            let finished = state.withLock { state -> Finished in
                guard !state.stopped else { return Finished() }
                var finished = Finished()
                let timedOut = state.workers[id]?.timedOut ?? false
                finished.logged = Self.attempted(sequence, timedOut ? delivered.timedOut() : delivered, &state)
                let through = state.attemptedThrough
                finished.done = state.waiters.take { $0 <= through }
                if timedOut {
                    // Ended at its deadline, this worker's task is cancelled for good: another takes over.
                    state.removeWorker(id)
                    finished.restarts = workersToStart(&state)
                    finished.ends = true
                } else if !cancelled, let claimed = claimNext(of: lane, for: id, at: now, &state) {
                    finished.next = claimed
                } else {
                    state.assign(nil, deadline: .zero, to: id)
                }
                return finished
            }
            report(finished.logged)
            resume(finished.done)
            start(finished.restarts)
            if finished.ends {
                stopWatcherIfIdle()
                return
            }
            if cancelled {
                _ = end(id)
                return
            }
            next = finished.next
            if next == nil {
                next = await take(for: id, on: lane, afterBurst: inARow >= Self.burst)
                inARow = 0
            }
        }
    }

    /// What a worker does after a delivery, decided under the lock.
    private struct Finished {
        var logged: [TrackingRecord] = []
        var done: [Waiters<Void, UInt64>.Waiter] = []
        var restarts: [(UInt64, Lane)] = []
        /// Its next job, claimed in the same critical section.
        var next: (sequence: UInt64, job: Job)?
        /// The worker timed out and was removed.
        var ends = false
    }

    private func timeout(of lane: Lane) -> Duration {
        lane == .events ? eventTimeout : urlTimeout
    }

    /// The next job of `lane` for worker `id`, with its deadline set; waits a moment for one
    /// when there is none; `nil` when the worker is to end.
    private func take(for id: UInt64, on lane: Lane, afterBurst: Bool) async -> (sequence: UInt64, job: Job)? {
        let linger = afterBurst ? Self.lingerYields.afterBurst : Self.lingerYields.otherwise
        var yields = 0
        while true {
            if Task.isCancelled { return end(id) }
            // An idle worker looks at the count, not at the lock the drains and the other
            // workers take.
            if pending.load(ordering: .acquiring) > 0, let next = claim(for: id, on: lane) { return next }
            guard yields < linger else { return end(id) }
            yields += 1
            await Task.yield()
        }
    }

    /// The next job of `lane`, now the worker's, with its deadline; nil when another worker
    /// took it first or the tracker stopped.
    private func claim(for id: UInt64, on lane: Lane) -> (sequence: UInt64, job: Job)? {
        let now = elapsed()
        let (next, watch) = state.withLock { state -> ((sequence: UInt64, job: Job)?, Bool) in
            guard !state.stopped, let next = claimNext(of: lane, for: id, at: now, &state) else { return (nil, false) }
            let watch = !state.watching
            state.watching = true
            return (next, watch)
        }
        if watch { startWatcher() }
        return next
    }

    /// Under the lock: the next job of `lane` becomes worker `id`'s, with its deadline from
    /// `now`, and leaves the pending count; nil when the lane has none.
    private func claimNext(of lane: Lane, for id: UInt64, at now: Duration, _ state: inout State) -> (
        sequence: UInt64, job: Job
    )? {
        let next: (sequence: UInt64, job: Job)?
        switch lane {
        case .events: next = state.events.popFirst()
        case .urls: next = state.urls.popFirst()
        }
        guard let next else { return nil }
        state.assign(next.sequence, deadline: now + timeout(of: lane), to: id)
        pending.subtract(1, ordering: .relaxed)
        return next
    }

    /// Worker `id` ends, unless a job came in meanwhile; the last one stops the watcher (or
    /// leaves it to run out, `watcherRunsOut`).
    private func end(_ id: UInt64) -> (sequence: UInt64, job: Job)? {
        state.withLock { $0.removeWorker(id) }
        stopWatcherIfIdle()
        let restarts = state.withLock { workersToStart(&$0) }  // a job that came just now
        start(restarts)
        return nil
    }

    /// With no worker left, nothing has a deadline: the watcher ends, now or, where it runs
    /// out (`watcherRunsOut`), when it next wakes.
    private func stopWatcherIfIdle() {
        guard !watcherRunsOut else { return }
        let watcher = state.withLock { state -> Task<Void, Never>? in
            guard state.workers.isEmpty else { return nil }
            state.watching = false
            defer { state.watcher = nil }
            return state.watcher
        }
        watcher?.cancel()
    }

    /// Job `sequence` was attempted: its record, and those of later jobs waiting for it, join
    /// the log in queue order; returns the failed ones, to be reported in that order.
    private static func attempted(_ sequence: UInt64, _ record: TrackingRecord, _ state: inout State)
        -> [TrackingRecord]
    {
        guard sequence > state.attemptedThrough else { return [] }
        if sequence == state.attemptedThrough + 1, state.attemptedAhead.isEmpty {  // in order: the usual case
            state.attemptedThrough = sequence
            state.log.append(record)
            return record.failure == nil ? [] : [record]
        }
        state.attemptedAhead[sequence] = record
        var logged: [TrackingRecord] = []
        while let next = state.attemptedAhead.removeValue(forKey: state.attemptedThrough + 1) {
            state.attemptedThrough += 1
            state.log.append(next)
            if next.failure != nil { logged.append(next) }
        }
        return logged
    }

    /// A failure is logged as an error: nothing else reports a lost event or tracking URL, and
    /// nothing retries it (AN9).
    private func report(_ records: [TrackingRecord]) {
        for record in records {
            guard let failure = record.failure, failure != "cancelled" else { continue }
            let reason = record.reason ?? failure
            call.logger.log(.error, "\(record.kind.rawValue) \(record.name) not delivered: \(reason)")
        }
    }

    private func resume(_ waiters: [Waiters<Void, UInt64>.Waiter]) {
        for waiter in waiters {
            activity?.begin()
            waiter.resume(returning: ())
        }
    }

    // MARK: - Deadlines (B13)

    /// One task that sleeps until the earliest deadline of the jobs under way — at most the
    /// shorter of the two timeouts at a time — and ends those that passed theirs. It ends with
    /// the last worker or, where it runs out (`watcherRunsOut`), when it next wakes with none.
    /// It holds the tracker while it looks, never while it sleeps: an engine released without a
    /// shutdown lets go of its tracker once its workers end.
    private func startWatcher() {
        let tracker = Weak(self)
        let clock = self.clock
        let body: @Sendable () async -> Void = {
            let slice = SlicedSleep.slice(for: clock)
            while !Task.isCancelled {
                guard let wait = tracker.object?.watchOnce() else { return }
                do { try await Self.sleep(on: clock, for: wait, slice: slice) } catch { return }
            }
        }
        let task = spawn(body)
        let stale = state.withLock { state -> Bool in
            guard state.watching, state.watcher == nil, !state.stopped else { return true }
            state.watcher = task
            return false
        }
        if stale { task.cancel() }
    }

    /// The shortest the watcher sleeps: timeouts of zero end every job at once, and must not
    /// make it spin on the tracking queue every tracker shares.
    private static let shortestWatch: Duration = .milliseconds(1)

    /// One look of the watcher: the jobs past their deadline are ended; returns how long to
    /// sleep, or `nil` when the watcher is to end.
    private func watchOnce() -> Duration? {
        let now = elapsed()
        let (earliest, overdue, ended) = state.withLock { state -> (Duration?, [Task<Void, Never>], Bool) in
            if watcherRunsOut, state.workers.isEmpty {
                // Woken with no worker left: no deadline to keep. A worker that claims a job
                // from now on starts a new watcher.
                state.watching = false
                state.watcher = nil
                return (nil, [], true)
            }
            var overdue: [Task<Void, Never>] = []
            var earliest: Duration?
            for (id, worker) in state.workers where worker.job != nil && !worker.timedOut {
                if worker.deadline <= now {
                    state.workers[id]?.timedOut = true
                    // No task yet: `start` cancels it as it lists it.
                    if let task = worker.task { overdue.append(task) }
                } else {
                    earliest = min(earliest ?? worker.deadline, worker.deadline)
                }
            }
            return (earliest, overdue, false)
        }
        if ended { return nil }
        for task in overdue { task.cancel() }  // the transport stops waiting; the worker records it
        // Never longer than the shorter timeout: a job claimed while the watcher sleeps has its
        // deadline at least that far from now, whichever lane it is of, so it is never watched
        // late, even behind a longer deadline of the other lane (B13).
        let shortest = max(min(eventTimeout, urlTimeout), Self.shortestWatch)
        return earliest.map { max(min($0 - now, shortest), Self.shortestWatch) } ?? shortest
    }

    private static func sleep(on clock: any Clock<Duration>, for duration: Duration, slice: Duration?) async throws {
        try await SlicedSleep.sleep(on: clock, for: duration, slice: slice)
    }

    private func deliver(_ job: Job) async -> TrackingRecord {
        switch job {
        case .event(let event, let envelope, let epoch):
            let result = await gravity.event([GravityEvent(event)], envelope: envelope)
            if case .success(let answer) = result, let user = answer.user {
                identityAnswered.withLock { $0 }?.answered(user, epoch)  // B9
            }
            return record(
                .event, event.type, user: envelope.user, properties: event.customProps, result.map { _ in () })
        case .url(let trackingURL, let user):
            let string = trackingURL.string
            guard let url = URL(string: string) else {
                return TrackingRecord(
                    kind: .url, name: string, uid: user.uid, customUserId: user.custom, properties: [:],
                    failure: "invalid_url")
            }
            let result = await call.perform(
                HTTPRequest(
                    method: .get, url: url, maximumResponseBytes: EndpointLimits.trackingBytes,
                    redirectPolicy: EndpointLimits.trackingRedirects))
            return record(.url, string, user: user, properties: [:], result.map { _ in () })
        }
    }

    /// The log entry of one attempt. A failure is logged as an error: nothing else reports a
    /// lost event or tracking URL, and nothing retries it (AN9).
    private func record(
        _ kind: TrackingRecord.Kind, _ name: String, user: GravityUser, properties: [String: String],
        _ result: Result<Void, WireFailure>
    ) -> TrackingRecord {
        let failure: String?
        var reason: String?
        switch result {
        case .success: failure = nil
        case .failure(.cancelled): failure = "cancelled"
        case .failure(.failed(let error, _)):
            failure = error.code.rawValue
            reason = "\(error)"
        }
        return TrackingRecord(
            kind: kind, name: name, uid: user.uid, customUserId: user.custom, properties: properties, failure: failure,
            reason: reason)
    }
}

extension TrackingRecord {
    /// The same attempt, ended at its deadline (B13).
    fileprivate func timedOut() -> TrackingRecord {
        TrackingRecord(
            kind: kind, name: name, uid: uid, customUserId: customUserId, properties: properties, failure: "timeout",
            reason: "timed out")
    }
}
