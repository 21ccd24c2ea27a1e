import Foundation

/// The rules of delivery (DL1–DL8, AN4, AN9, B13) as a value type: which request goes next,
/// when a pause ends, what a failure means, what is dropped and why. It does no I/O; the
/// `Outbox` feeds it what happened and performs the `Action`s it returns.
///
/// Every accepted record is persisted first (in batches: records accepted while a write is
/// under way share the next one, which is the journal's group commit), then makes its first
/// attempt on its route, then — if that failed and may succeed later — waits in its lane's
/// drain: oldest first, one at a time, with growing pauses after failures.
///
/// Two drain lanes, one for Gravity's own endpoints and one for tracking URLs, so that a
/// third-party tracking host that is down never holds a purchase back; each is oldest first
/// and one at a time, as DL2 asks.
struct DeliveryMachine {
    /// Where a record waits once its first attempt failed.
    enum Lane: Hashable, Sendable, CaseIterable {
        /// `/event` and `/visit`.
        case gravity
        /// Tracking `GET`s.
        case tracking

        init(_ kind: DeliveryRecord.Kind) { self = kind == .tracking ? .tracking : .gravity }
    }

    /// How a record makes its first attempt.
    enum Route: Hashable, Sendable, CaseIterable {
        /// A host call (`triggerEvent`, `trackView`) waits for its answer: it goes at once.
        case host
        /// The engine's lifecycle events: one at a time, in the order they happened (B13).
        case lifecycle
        /// Tracking URLs: a few at once, so one host that never answers holds up nothing (B13).
        case tracking

        /// How many first attempts of the route may be under way at once.
        var capacity: Int {
            switch self {
            case .host: return .max
            case .lifecycle: return 1
            case .tracking: return 4
            }
        }
    }

    /// What an attempt came to.
    enum Outcome: Hashable, Sendable {
        case delivered
        case failed(FailureClass, reason: String)
        /// Stopped before it could be judged (the engine shut down): the record stays as it is.
        case abandoned
    }

    /// Why a record was given up, as the log says it (DL3).
    enum DropReason: String, Hashable, Sendable {
        case rejected, expired, overflow
    }

    /// Who waits for the queue: `flushQueue()` for the drain to stop, `flushTracking()` for
    /// every first attempt to be over.
    enum FlushKind: Hashable, Sendable {
        case queue, firstAttempts
    }

    enum Action: Hashable, Sendable {
        /// Write these records to the store; `persisted(…)` follows.
        case persist([DeliveryRecord])
        /// Send the record: its first attempt on `route` (retried within the deadline, DL1),
        /// or with `route` `nil` one attempt of the drain; `attemptFinished` follows.
        case send(DeliveryRecord, route: Route?)
        /// Forget delivered records in the store: written at once, flushed by a later `sync`
        /// or by the next write that flushes.
        case remove([UUID])
        /// Flush the removals written so far (DL5: a power cut then brings none of them back).
        case sync
        /// Keep a record's new count of server failures.
        case updateAttempts(UUID, Int)
        /// Give a record up: logged at `.error` with the reason, and forgotten by the store
        /// unless it never reached it.
        case drop(DeliveryRecord, DropReason, detail: String, inStore: Bool)
        /// Empty the store (DL8).
        case removeAll
        /// Wake the lane after `duration`: `pauseEnded(lane, generation)` follows.
        case pause(Lane, for: Duration, generation: UInt64)
        /// The flushes waiting under these IDs are over.
        case finishFlushes([UInt64])
        /// A line for the log.
        case log(AssistantLogLevel, String)
    }

    enum EntryState: Hashable, Sendable {
        case persisting(Route)
        /// Persisted (or unprotected), waiting for a place on its route.
        case waiting(Route)
        case firstAttempt(Route)
        case queued
        case draining
        /// Kept while its call waits at the session gate (B8): never sent from here; the record
        /// that goes once the gate lets the call through replaces it (`released`).
        case held

        /// Before or during the first attempt: what `flushTracking()` waits for.
        var isBeforeQueue: Bool {
            switch self {
            case .persisting, .waiting, .firstAttempt: return true
            case .queued, .draining, .held: return false
            }
        }
    }

    struct Entry: Hashable, Sendable {
        var record: DeliveryRecord
        var state: EntryState
        /// Not in the store: the queue is off, or the store refused it (DL5). Sent once.
        var unprotected = false
        /// Its place in the order of the drain: what the store held, then what was raised here.
        var sequence: UInt64 = 0
        /// Persisting, and in the write under way: no longer only in memory.
        var inWrite = false
        /// Held at the session gate once persisted, instead of waiting for its first attempt.
        var atGate = false
        /// Let through the gate: its record replaces, under the same id, the one kept while it
        /// waited, which stays in the store until this one is written over it.
        var released = false
        /// Released while the held record's write was under way: written again once it ends.
        var rewrite = false
        /// The bytes it was held as are in the store, under its id: it is kept whatever becomes
        /// of the write of its own (DL5).
        var heldInStore = false
        var lane: Lane { Lane(record.kind) }

        /// In the store, or in the write under way: a removal of it must follow.
        var inStoreOrWrite: Bool {
            guard !unprotected else { return false }
            if case .persisting = state { return inWrite }
            return true
        }

        /// Kept (or on its way to the store, not yet in a write) and not on the wire: what DL4's
        /// overflow may drop. A burst over the limit is trimmed before it is written.
        var isDroppable: Bool {
            guard !unprotected else { return false }
            switch state {
            case .queued: return true
            // Let through the gate, it goes at once: its call returned long ago (DL5).
            case .waiting: return !released
            case .persisting: return !inWrite && !atGate && !released
            case .firstAttempt, .draining, .held: return false
            }
        }
    }

    private struct Pause: Hashable {
        /// How many pauses in a row; a delivery resets it.
        var level = 0
        /// The pause under way, if any.
        var generation: UInt64?
        var until: Date?
        /// A network failure's pause ends early when something else gets through (DL3).
        var afterNetworkFailure = false
    }

    /// A flush waiting: `flushTracking` for the first attempts of the records accepted before
    /// it, `flushQueue` for the drain to stop as well.
    private struct Flush {
        var id: UInt64
        var kind: FlushKind
        /// Records accepted before it have a smaller sequence.
        var before: UInt64
        /// How many of those are still before or in their first attempt.
        var awaited: Int
    }

    /// How many entries are in each state, kept as entries change, so that deciding what goes
    /// next costs the same however long the queue is.
    private struct Counts {
        var persisting = 0
        /// Persisting, and in the store in no form yet.
        var unwritten = 0
        var waiting = Tally()
        var firstAttempts = Tally()
        var queued = Tally()
        var draining = Tally()
        /// Entries in the store or on their way to it.
        var kept = 0
        var droppable = 0

        mutating func count(_ entry: Entry, _ sign: Int) {
            if !entry.unprotected { kept += sign }
            if entry.isDroppable { droppable += sign }
            switch entry.state {
            case .persisting:
                persisting += sign
                if !entry.heldInStore { unwritten += sign }
            case .waiting(let route): waiting[route] += sign
            case .firstAttempt(let route): firstAttempts[route] += sign
            case .queued: queued[entry.lane] += sign
            case .draining: draining[entry.lane] += sign
            case .held: break
            }
        }

        var beforeQueue: Int { persisting + waiting.total + firstAttempts.total }
    }

    /// DL3's pauses, each ±20 %.
    static let pauses: [Duration] = [
        .seconds(5), .seconds(15), .seconds(45), .seconds(120), .seconds(300), .seconds(900),
    ]
    /// Server failures a record may meet; the last drops it (DL3).
    static let maximumServerFailures = 5
    /// Removals written before they are flushed while deliveries go on: a power cut sends at
    /// most so many delivered records again, and a drain pays one flush for so many records.
    static let removalsPerSync = 64

    private(set) var settings: OfflineQueueSettings
    private var entries: [UUID: Entry] = [:]
    private var counts = Counts()
    /// Accepted order, for the snapshot: forgotten records included until they are most of it.
    private var order: [UUID] = []
    /// Records raised here count up from the middle of the range, and records read from the
    /// store count down from it: whenever the store is read, what it held is older (DL3, DL4).
    private var nextSequence: UInt64 = 1 << 62
    private var nextLoadedSequence: UInt64 = 1 << 62
    /// Records waiting for their first attempt, by route, and queued for the drain, by lane.
    private var waiting = RouteHeaps()
    private var queued = LaneHeaps()
    /// Records DL4 may drop, by accepted order: an entry is filed again each time it becomes
    /// droppable, and one that is not (any more) is discarded when it reaches the top.
    private var droppableOrder = IDHeap()
    private var toPersist: [UUID] = []
    /// The writes under way, oldest first: one at a time, but for the last a shutdown asks.
    private var persistingBatches: [[UUID]] = []
    private var pauses: [Lane: Pause] = [.gravity: Pause(), .tracking: Pause()]
    private var nextGeneration: UInt64 = 0
    private var flushes: [Flush] = []
    private var random: SplitMix64
    private(set) var isStopped = false
    /// Removals asked since the last write that flushes them.
    private var unsyncedRemovals = 0
    /// The store has been read: until then a flush cannot know what waits (DL3).
    private(set) var hasLoaded = false

    init(settings: OfflineQueueSettings, seed: UInt64) {
        self.settings = settings
        random = SplitMix64(seed: seed)
    }

    // MARK: - Inspection

    /// Records kept or on their way, oldest first, with what each waits for.
    var snapshot: [Entry] { order.compactMap { entries[$0] } }

    /// When each lane's pause ends, for the REPL's `:queue`.
    func pauseEnd(of lane: Lane) -> Date? { pauses[lane]?.until }

    /// Records in the store (DL8's `pendingDeliveries`): every record but those the store
    /// never got.
    var pendingCount: Int { counts.kept - counts.unwritten }

    /// Whether a send of `id` that failed may try again within its deadline (DL1): not once
    /// the record was cleared (DL8) or the engine stopped.
    func mayRetry(_ id: UUID) -> Bool { !isStopped && holds(id) }

    /// How many places the overflow's order keeps, stale ones included: as many as the queue
    /// holds, give or take, however many records went through it.
    var droppableOrderCount: Int { droppableOrder.count }

    /// Whether the record is still kept or on its way: not once delivered, dropped or cleared.
    func holds(_ id: UUID) -> Bool { entries[id] != nil }

    /// Whether the record waits in the store for a later attempt: held, and written there (an
    /// unprotected one, which the store refused or the queue never took, is not).
    func keepsInStore(_ id: UUID) -> Bool { entries[id].map { !$0.unprotected } ?? false }

    /// The records its storage has room for, summed over its collections: for tests that a
    /// drained burst gave its storage back.
    var storageCapacity: Int {
        entries.capacity + order.capacity + toPersist.capacity + waiting.capacity + queued.capacity
    }

    // MARK: - Events

    /// The engine starts on a store that holds `records` from an earlier run (DL3: the queue is
    /// tried when an engine starts).
    mutating func loaded(_ records: [DeliveryRecord], now: Date) -> [Action] {
        hasLoaded = true
        dropForgottenFromOrder()  // a record forgotten before may come back from the store
        var seen = Set<UUID>()
        let held = records.filter { entries[$0.id] == nil && seen.insert($0.id).inserted }
        // In the store's order, and before every record raised while the store was read.
        nextLoadedSequence -= UInt64(held.count)
        for (offset, record) in held.enumerated() {
            add(Entry(record: record, state: .queued), at: nextLoadedSequence + UInt64(offset))
        }
        order.insert(contentsOf: held.map(\.id), at: 0)
        return pump(now: now)
    }

    /// The engine raised `records` (DL2): persisted before their first attempt, unless the
    /// queue is off (DL4), when each is sent once and kept nowhere.
    mutating func accepted(_ records: [DeliveryRecord], route: Route, now: Date) -> [Action] {
        guard !isStopped, !records.isEmpty else { return [] }
        for record in records {
            add(
                Entry(
                    record: record, state: settings.enabled ? .persisting(route) : .waiting(route),
                    unprotected: !settings.enabled))
        }
        return persistAccepted(records, now: now)
    }

    /// A host call's record waits at the session gate (B8): it is kept now, so that a process
    /// ended before the gate opens leaves it to the next engine, and sent by none until the
    /// call goes through the gate as `released(…)`. With the queue off it is kept nowhere.
    mutating func heldAtGate(_ record: DeliveryRecord, now: Date) -> [Action] {
        guard !isStopped, entries[record.id] == nil else { return [] }
        add(
            Entry(
                record: record, state: settings.enabled ? .persisting(.host) : .held, unprotected: !settings.enabled,
                atGate: true))
        return persistAccepted([record], now: now)
    }

    /// The call held as `heldID` went through the gate with the bytes of `record`, which carry
    /// the session the gate brought (B8, DL7). They replace the held ones under the held id, in
    /// its place and with its time, in one write (a crash keeps one or the other, never both),
    /// and then go as a host call's. `nil` when nothing is held under `heldID`: the queue was
    /// cleared meanwhile, and nothing cleared is sent (DL8).
    mutating func released(_ heldID: UUID, as record: DeliveryRecord, now: Date) -> [Action]? {
        guard !isStopped else { return [] }
        guard let held = entries[heldID], held.atGate else { return nil }
        let replacement = DeliveryRecord(
            id: heldID, kind: record.kind, target: record.target, body: record.body, createdAt: held.record.createdAt,
            label: record.label, owner: record.owner)
        let (persisting, inWrite): (Bool, Bool)
        if case .persisting = held.state {
            (persisting, inWrite) = (true, held.inWrite)
        } else {
            (persisting, inWrite) = (false, false)
        }
        // One on its way to the store goes there, though the queue was turned off meanwhile.
        let keeps = settings.enabled || persisting
        change(heldID) { entry in
            entry.record = replacement
            entry.atGate = false
            entry.released = true
            entry.rewrite = keeps && inWrite
            if !keeps {
                entry.state = .waiting(.host)
                entry.unprotected = !entry.heldInStore
            } else if !inWrite {
                entry.state = .persisting(.host)
                entry.unprotected = false
            }
        }
        guard keeps else { return pump(now: now) }
        // One not written yet is still listed; one in the write under way is listed when it ends.
        if !inWrite, !toPersist.contains(heldID) { toPersist.append(heldID) }
        return overflow() + startPersisting()
    }

    /// The call held as `id` will never be sent (its caller was cancelled, or the queue was
    /// cleared): its record leaves the store.
    mutating func heldWithdrawn(_ id: UUID, now: Date) -> [Action] {
        guard let held = entries[id], held.atGate, !isStopped else { return [] }
        forget(id)
        return (held.inStoreOrWrite ? [removal(id)] : []) + pump(now: now)
    }

    private mutating func persistAccepted(_ records: [DeliveryRecord], now: Date) -> [Action] {
        guard settings.enabled else { return pump(now: now) }
        toPersist += records.map(\.id)
        return overflow() + startPersisting()
    }

    /// The write of the batch under way is over: its records go on their way. A store that
    /// refused them is logged, and each is still sent once, unprotected (DL5).
    mutating func persisted(failure: String?, now: Date) -> [Action] {
        let batch = persistingBatches.isEmpty ? [] : persistingBatches.removeFirst()
        var actions: [Action] = []
        if let failure {
            actions.append(
                .log(.error, "delivery store: \(batch.count) record(s) not kept (\(failure)); sending them once"))
        }
        for id in batch {
            guard let entry = entries[id], case .persisting(let route) = entry.state else { continue }
            if entry.rewrite {
                // Released while this write of its held bytes was under way: its own bytes next.
                change(id) {
                    $0.rewrite = false
                    $0.inWrite = false
                    $0.heldInStore = failure == nil
                }
                toPersist.append(id)
                continue
            }
            change(id) {
                $0.state = entry.atGate ? .held : .waiting(route)
                if entry.atGate { $0.heldInStore = failure == nil }
                // A released record the store refused is still kept, in the bytes it was held as.
                $0.unprotected = failure != nil && !entry.heldInStore
            }
        }
        // What waited for this write is trimmed (DL4) before the next write takes it.
        actions += overflow()
        return actions + startPersisting() + pump(now: now)
    }

    /// An attempt is over (DL1–DL3).
    mutating func attemptFinished(_ id: UUID, _ outcome: Outcome, now: Date) -> [Action] {
        guard let entry = entries[id] else { return [] }  // cleared while on the wire (DL8)
        var outcome = outcome
        // Stopped, a failure is judged by the next engine: the record stays as it is, and the
        // closed store takes no count (H2, DL8).
        if isStopped, case .failed = outcome { outcome = .abandoned }
        var actions: [Action] = []
        switch outcome {
        case .delivered:
            forget(id)
            if !entry.unprotected { actions.append(removal(id)) }
            pauses[entry.lane]?.level = 0
            actions += somethingGotThrough()
        case .abandoned:
            change(id) { $0.state = .queued }
        case .failed(let failure, let reason):
            if entry.unprotected {
                forget(id)
                actions.append(.drop(entry.record, .rejected, detail: reason, inStore: false))
                break
            }
            switch failure {
            case .final:
                forget(id)
                actions.append(removal(dropping: entry.record, .rejected, detail: reason))
            case .server:
                let attempts = entry.record.attempts + 1
                if attempts >= Self.maximumServerFailures {
                    forget(id)
                    var record = entry.record
                    record.attempts = attempts
                    actions.append(removal(dropping: record, .rejected, detail: "\(reason) (\(attempts) attempts)"))
                } else {
                    change(id) {
                        $0.record.attempts = attempts
                        $0.state = .queued
                    }
                    actions.append(.updateAttempts(id, attempts))
                    unsyncedRemovals = 0  // its flush carries them
                }
                actions += startPause(entry.lane, afterNetworkFailure: false, now: now)
            case .transient:
                change(id) { $0.state = .queued }
                actions += startPause(entry.lane, afterNetworkFailure: true, now: now)
            }
        }
        return actions + pump(now: now)
    }

    /// A lane's pause is over, unless a newer one replaced it.
    mutating func pauseEnded(_ lane: Lane, generation: UInt64, now: Date) -> [Action] {
        guard pauses[lane]?.generation == generation else { return [] }
        pauses[lane]?.generation = nil
        pauses[lane]?.until = nil
        return pump(now: now)
    }

    /// Another request of the engine succeeded: the network is back, so a pause that a
    /// network failure started ends now; one after a server failure runs on (DL3).
    mutating func requestSucceeded(now: Date) -> [Action] {
        somethingGotThrough() + pump(now: now)
    }

    /// `flushQueue()` (DL8): one fresh attempt now, whatever pause was under way; the flush
    /// `id` is over when the drain stops. `flushTracking()` waits for first attempts instead.
    mutating func flushRequested(_ id: UInt64, kind: FlushKind, now: Date) -> [Action] {
        guard !isStopped else { return [.finishFlushes([id])] }
        flushes.append(Flush(id: id, kind: kind, before: nextSequence, awaited: counts.beforeQueue))
        if kind == .queue, settings.enabled {
            // The pause under way ends; the ladder does not start over, so a flush into a
            // network still down is followed by the next, longer pause.
            for lane in Lane.allCases {
                pauses[lane]?.generation = nil
                pauses[lane]?.until = nil
            }
        }
        return pump(now: now)
    }

    /// `clearQueue()` (DL8): every record is forgotten, in the store and here; one on the wire
    /// finishes, and is not kept whatever it meets.
    mutating func cleared(now: Date) -> [Action] {
        entries = [:]
        counts = Counts()
        order = []
        waiting = RouteHeaps()
        queued = LaneHeaps()
        droppableOrder = IDHeap()
        toPersist = []
        for index in flushes.indices { flushes[index].awaited = 0 }
        for lane in Lane.allCases { pauses[lane] = Pause() }
        unsyncedRemovals = 0  // emptied with a flush
        return [.removeAll] + pump(now: now)
    }

    /// New settings at run time (DL4): a lower `maxEntries` drops the oldest now, a queue
    /// turned on drains.
    mutating func settingsChanged(_ settings: OfflineQueueSettings, now: Date) -> [Action] {
        let wasEnabled = self.settings.enabled
        self.settings = settings
        if settings.enabled, !wasEnabled {
            for lane in Lane.allCases { pauses[lane] = Pause() }
        }
        return pump(now: now)
    }

    /// The engine shuts down (H2, DL8): nothing more starts; what is kept stays for the next
    /// engine, and every flush is over.
    mutating func stopped() -> [Action] {
        isStopped = true
        // Records accepted while a write was under way have not been written yet: they are,
        // now, so that the next engine has them (DL8). Nothing is sent after the write.
        let unwritten = toPersist.compactMap { entries[$0]?.record }
        toPersist = []
        if !unwritten.isEmpty { persistingBatches.append(unwritten.map(\.id)) }
        let ids = flushes.map(\.id)
        flushes = []
        // What the next engine finds is what the store made durable.
        let sync: [Action] = unsyncedRemovals > 0 && unwritten.isEmpty ? [.sync] : []
        unsyncedRemovals = 0
        return sync + (unwritten.isEmpty ? [] : [.persist(unwritten)]) + (ids.isEmpty ? [] : [.finishFlushes(ids)])
    }

    // MARK: - Entries

    /// Every change of an entry goes through `add`, `change` and `forget`, which keep the
    /// counts, the heaps and the flushes in step with it.
    private mutating func add(_ entry: Entry) {
        add(entry, at: nextSequence)
        nextSequence += 1
        order.append(entry.record.id)
    }

    /// Files `entry` at `sequence`; the caller places it in `order`.
    private mutating func add(_ entry: Entry, at sequence: UInt64) {
        var entry = entry
        entry.sequence = sequence
        entries[entry.record.id] = entry
        counts.count(entry, 1)
        file(entry)
    }

    private mutating func change(_ id: UUID, _ update: (inout Entry) -> Void) {
        guard var entry = entries[id] else { return }
        let old = entry
        update(&entry)
        entries[id] = entry
        counts.count(old, -1)
        counts.count(entry, 1)
        if old.state.isBeforeQueue, !entry.state.isBeforeQueue { firstAttemptOver(old) }
        // A held record let through makes its first attempt after all: the flushes wait for it.
        if !old.state.isBeforeQueue, entry.state.isBeforeQueue { firstAttemptAhead(entry) }
        if old.state != entry.state { file(entry) }
    }

    /// The id stays in `order` until most of `order` is such ids: forgetting a record costs
    /// the same however long the queue is. The heaps let it go when it reaches their top.
    /// Storage a burst of records grew is given back as they go.
    private mutating func forget(_ id: UUID) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        entries.releaseSpareCapacity()
        counts.count(entry, -1)
        if entry.state.isBeforeQueue { firstAttemptOver(entry) }
        if order.count > 64, order.count > 2 * entries.count { dropForgottenFromOrder() }
    }

    /// Puts an entry where `pump` looks for it in its new state.
    private mutating func file(_ entry: Entry) {
        if entry.isDroppable { droppableOrder.insert(entry.record.id, key: entry.sequence) }
        switch entry.state {
        case .waiting(let route): waiting[route].insert(entry.record.id, key: entry.sequence)
        case .queued: queued[entry.lane].insert(entry.record.id, key: entry.sequence)
        case .persisting, .firstAttempt, .draining, .held: break
        }
    }

    private mutating func firstAttemptOver(_ entry: Entry) {
        for index in flushes.indices where entry.sequence < flushes[index].before {
            flushes[index].awaited -= 1
        }
    }

    private mutating func firstAttemptAhead(_ entry: Entry) {
        for index in flushes.indices where entry.sequence < flushes[index].before {
            flushes[index].awaited += 1
        }
    }

    private mutating func dropForgottenFromOrder() {
        order.removeAll { entries[$0] == nil }
        order.releaseSpareCapacity()
    }

    /// The oldest entry of `heap` still in `state`, once what no longer belongs is discarded.
    private static func oldest(_ heap: inout IDHeap, in state: EntryState, of entries: [UUID: Entry]) -> Entry? {
        while let top = heap.top {
            if let entry = entries[top.id], entry.sequence == top.key, entry.state == state { return entry }
            heap.removeTop()
        }
        return nil
    }

    // MARK: - Rules

    private mutating func startPersisting() -> [Action] {
        guard persistingBatches.isEmpty, !toPersist.isEmpty, !isStopped else { return [] }
        let batch = toPersist.filter { entries[$0] != nil }
        toPersist = []
        guard !batch.isEmpty else { return [] }
        for id in batch { change(id) { $0.inWrite = true } }
        persistingBatches.append(batch)
        unsyncedRemovals = 0  // its flush carries them
        return [.persist(batch.compactMap { entries[$0]?.record })]
    }

    /// DL4: over `maxEntries` the oldest records are dropped, never one on the wire.
    private mutating func overflow() -> [Action] {
        var actions: [Action] = []
        // A record in the write under way cannot be dropped yet; none newer than it is dropped
        // in its place: the overflow waits for the write (then `persisted` runs it again).
        let inWrite = oldestInWrite()
        while counts.kept > settings.maxEntries, counts.droppable > 0, let entry = oldestDroppable(olderThan: inWrite) {
            forget(entry.record.id)
            var inStore = true
            if case .persisting = entry.state { inStore = false }  // never written
            let detail = "over \(settings.maxEntries) records"
            actions.append(removal(dropping: entry.record, .overflow, detail: detail, inStore: inStore))
        }
        // Entries delivered before they were ever dropped leave their place behind.
        droppableOrder.rebuildIfMostlyStale(live: counts.droppable) {
            entries.compactMap { id, entry in entry.isDroppable ? IDHeap.Item(key: entry.sequence, id: id) : nil }
        }
        return actions
    }

    /// The oldest entry that is droppable now and older than `limit`, once what no longer is
    /// droppable has left the top.
    private mutating func oldestDroppable(olderThan limit: UInt64?) -> Entry? {
        while let top = droppableOrder.top {
            if let entry = entries[top.id], entry.sequence == top.key, entry.isDroppable {
                if let limit, entry.sequence > limit { return nil }
                droppableOrder.removeTop()
                return entry
            }
            droppableOrder.removeTop()
        }
        return nil
    }

    /// The place in the accepted order of the oldest record in the write under way.
    private func oldestInWrite() -> UInt64? {
        guard let batch = persistingBatches.first else { return nil }
        for id in batch {
            if let entry = entries[id], entry.inWrite, case .persisting = entry.state { return entry.sequence }
        }
        return nil
    }

    private mutating func somethingGotThrough() -> [Action] {
        for lane in Lane.allCases where pauses[lane]?.generation != nil && pauses[lane]?.afterNetworkFailure == true {
            pauses[lane]?.generation = nil
            pauses[lane]?.until = nil
        }
        return []
    }

    private mutating func startPause(_ lane: Lane, afterNetworkFailure: Bool, now: Date) -> [Action] {
        // Off or stopped, nothing drains: a pause would wake nothing (DL4, H2).
        guard settings.enabled, !isStopped, var pause = pauses[lane], pause.generation == nil else { return [] }
        let base = Self.pauses[min(pause.level, Self.pauses.count - 1)]
        let factor = 0.8 + 0.4 * random.nextUnit()
        let duration = base * factor
        nextGeneration += 1
        pause.level += 1
        pause.generation = nextGeneration
        pause.until = now.addingTimeInterval(duration.seconds)
        pause.afterNetworkFailure = afterNetworkFailure
        pauses[lane] = pause
        return [.pause(lane, for: duration, generation: nextGeneration)]
    }

    private func drains(_ lane: Lane) -> Bool {
        settings.enabled && counts.draining[lane] == 0 && pauses[lane]?.generation == nil
    }

    /// Drops what is over `maxEntries` (DL4: checked on every event, as records become
    /// droppable when their first attempt fails), then starts what may start now, oldest
    /// first: first attempts within their routes' capacity,
    /// and each lane's next drain attempt (one at a time) unless it is paused or the queue is
    /// off; then ends the flushes that are over. Each start takes the oldest of the few
    /// records that may go, so it costs the same however long the queue is.
    private mutating func pump(now: Date) -> [Action] {
        guard !isStopped else { return [] }
        var actions = overflow()
        while let next = nextToStart() {
            switch next.state {
            case .waiting(let route):
                change(next.record.id) { $0.state = .firstAttempt(route) }
                actions.append(.send(next.record, route: route))
            case .queued:
                if now.timeIntervalSince(next.record.createdAt) > settings.maxAge.seconds {
                    forget(next.record.id)
                    actions.append(removal(dropping: next.record, .expired, detail: "older than \(settings.maxAge)"))
                } else {
                    change(next.record.id) { $0.state = .draining }
                    actions.append(.send(next.record, route: nil))
                }
            case .persisting, .firstAttempt, .draining, .held:
                // Not filed anywhere `nextToStart` looks.
                return actions + syncIfDue() + finishedFlushes()
            }
        }
        return actions + syncIfDue() + finishedFlushes()
    }

    /// A removal of the store, flushed later (`syncIfDue`).
    private mutating func removal(_ id: UUID) -> Action {
        unsyncedRemovals += 1
        return .remove([id])
    }

    /// A drop of a record, whose removal from the store, if it is there, is flushed later
    /// (`syncIfDue`).
    private mutating func removal(
        dropping record: DeliveryRecord, _ reason: DropReason, detail: String, inStore: Bool = true
    ) -> Action {
        if inStore { unsyncedRemovals += 1 }
        return .drop(record, reason, detail: detail, inStore: inStore)
    }

    /// Flushes the removals once nothing more is on its way (the deliveries ended or paused,
    /// so no write soon carries them), or once enough wait for it. A drain of many records
    /// thus pays one flush for many, not one each.
    private mutating func syncIfDue() -> [Action] {
        guard unsyncedRemovals > 0 else { return [] }
        let idle = counts.beforeQueue == 0 && counts.draining.total == 0
        guard idle || unsyncedRemovals >= Self.removalsPerSync else { return [] }
        unsyncedRemovals = 0
        return [.sync]
    }

    /// The oldest entry that may start now: waiting on a route with room, or queued on a lane
    /// that drains.
    private mutating func nextToStart() -> Entry? {
        var best: Entry?
        func consider(_ entry: Entry?) {
            guard let entry else { return }
            if best.map({ entry.sequence < $0.sequence }) ?? true { best = entry }
        }
        for route in Route.allCases where counts.waiting[route] > 0 && counts.firstAttempts[route] < route.capacity {
            consider(Self.oldest(&waiting[route], in: .waiting(route), of: entries))
        }
        for lane in Lane.allCases where counts.queued[lane] > 0 && drains(lane) {
            consider(Self.oldest(&queued[lane], in: .queued, of: entries))
        }
        return best
    }

    private mutating func finishedFlushes() -> [Action] {
        guard !flushes.isEmpty else { return [] }
        let drainStopped =
            !settings.enabled
            || Lane.allCases.allSatisfy { lane in
                counts.draining[lane] == 0 && (pauses[lane]?.generation != nil || counts.queued[lane] == 0)
            }
        var over: [UInt64] = []
        flushes.removeAll { flush in
            // `flushQueue` waits for the first attempts under way too: a record accepted just
            // before it is on its way, not yet in the queue, and the app asked for it to go.
            let done = hasLoaded && flush.awaited == 0 && (flush.kind == .firstAttempts || drainStopped)
            if done { over.append(flush.id) }
            return done
        }
        return over.isEmpty ? [] : [.finishFlushes(over)]
    }
}

/// A heap per route: first attempts waiting for a place.
private struct RouteHeaps {
    private var heaps = [IDHeap(), IDHeap(), IDHeap()]

    var capacity: Int { heaps.reduce(0) { $0 + $1.capacity } }

    subscript(route: DeliveryMachine.Route) -> IDHeap {
        get { heaps[route.index] }
        set { heaps[route.index] = newValue }
        _modify { yield &heaps[route.index] }
    }
}

/// A heap per lane: records queued for the drain.
private struct LaneHeaps {
    private var heaps = [IDHeap(), IDHeap()]

    var capacity: Int { heaps.reduce(0) { $0 + $1.capacity } }

    subscript(lane: DeliveryMachine.Lane) -> IDHeap {
        get { heaps[lane == .gravity ? 0 : 1] }
        set { heaps[lane == .gravity ? 0 : 1] = newValue }
        _modify { yield &heaps[lane == .gravity ? 0 : 1] }
    }
}

extension DeliveryMachine.Route {
    fileprivate var index: Int {
        switch self {
        case .host: return 0
        case .lifecycle: return 1
        case .tracking: return 2
        }
    }
}

/// Counts by route or by lane in plain fields, where a dictionary would hash each time.
private struct Tally {
    private var counts = (0, 0, 0)

    var total: Int { counts.0 + counts.1 + counts.2 }

    subscript(route: DeliveryMachine.Route) -> Int {
        get {
            switch route {
            case .host: return counts.0
            case .lifecycle: return counts.1
            case .tracking: return counts.2
            }
        }
        set {
            switch route {
            case .host: counts.0 = newValue
            case .lifecycle: counts.1 = newValue
            case .tracking: counts.2 = newValue
            }
        }
    }

    subscript(lane: DeliveryMachine.Lane) -> Int {
        get { lane == .gravity ? counts.0 : counts.2 }
        set {
            if lane == .gravity { counts.0 = newValue } else { counts.2 = newValue }
        }
    }
}

/// A small, seedable generator for the pauses' jitter: the machine stays a value that tests
/// replay exactly.
struct SplitMix64: Hashable, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<1`.
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

extension Duration {
    /// The duration in seconds, as a wall-clock interval.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
