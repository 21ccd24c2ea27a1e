import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// The store meets the outbox's work in the order the delivery machine decided it, whichever
/// thread decided it: a record the engine handed over just before a clear or a shutdown is
/// written before that clear empties the store, and before that shutdown closes it.
///
/// The engine's records wait in the outbox's inbox until the machine's next event takes them,
/// which may happen on the store's queue or on the thread of a clear or a shutdown; each
/// iteration below hands one over and then waits a random while before the clear or the
/// shutdown, so that the two meet at every point of the hand-over. A wrong order shows in a
/// few of the iterations; the right one passes all of them however fast the machine is.
@Suite struct OutboxStoreOrderTests {
    private static let now = Date(timeIntervalSince1970: 1_750_000_000)
    private static let iterations = 4_000

    // covers: DL8
    @Test func aRecordHandedOverJustBeforeAClearIsNeverWrittenAfterIt() async {
        let store = RecordingStore()
        let outbox = Self.outbox(store: store)
        outbox.open()
        await outbox.flushFirstAttempts()  // the store is open and its queue idle
        var generator = SplitMix64(seed: 7)
        var clearOf: [UUID: Int] = [:]
        for iteration in 1...Self.iterations {
            let handed = Self.record()
            clearOf[handed.0.id] = iteration
            outbox.accept([handed], route: .tracking)
            Self.spin(&generator)
            await outbox.clear()
        }
        await outbox.stop()
        // Each iteration's record was handed over before that iteration's clear: whenever it is
        // written, it must be before that clear's `removeAll`, or the store keeps a cleared one.
        var clears = 0
        var late = 0
        for operation in store.operations {
            switch operation {
            case .removeAll: clears += 1
            case .append(let ids): late += ids.filter { (clearOf[$0] ?? .max) <= clears }.count
            }
        }
        #expect(clears == Self.iterations)
        #expect(late == 0, "\(late) record(s) written after the clear that followed them")
    }

    // covers: DL8, DL5
    @Test func aRecordHandedOverJustBeforeAShutdownIsInTheStoreForTheNextEngine() async {
        var generator = SplitMix64(seed: 11)
        var missing = 0
        for _ in 0..<Self.iterations {
            let store = ClosingStore()
            let outbox = Self.outbox(store: store)
            outbox.open()
            await outbox.flushFirstAttempts()
            let handed = Self.record()
            outbox.accept([handed], route: .tracking)
            Self.spin(&generator)
            await outbox.stop()
            if !store.ids.contains(handed.0.id) { missing += 1 }
        }
        #expect(missing == 0, "\(missing) record(s) handed over before a shutdown were not kept")
    }

    /// With the queue off nothing is kept, and a record handed over before a shutdown may go
    /// as the shutdown takes it; its send is cancelled with the others, never left running.
    // covers: H2
    @Test func aSendAShutdownStartsIsCancelledByIt() async {
        let transport = HangingTransport()
        let outbox = Self.outbox(store: InMemoryDeliveryStore(), transport: transport, enabled: false)
        outbox.open()
        await outbox.flushFirstAttempts()
        for _ in 0..<50 { outbox.accept([Self.record()], route: .tracking) }
        await outbox.stop()
        let settled = await withinHangGuard("every send of a stopped outbox is cancelled") {
            while transport.running > 0 { await Task.yield() }
            return true
        }
        #expect(settled == true)
    }

    private static func record() -> (DeliveryRecord, Outbox.Detail) {
        (
            DeliveryRecord(
                id: UUID(), kind: .tracking, target: "https://t.example/i?p=1", body: nil, createdAt: now,
                label: "impression", owner: "u-1"),
            Outbox.Detail(
                kind: .url, name: "impression", user: GravityUser(uid: "u-1"), properties: [:], eventTime: nil,
                identityEpoch: nil)
        )
    }

    private static func outbox(
        store: any DeliveryStore, transport: any HTTPTransport = HangingTransport(), enabled: Bool = true
    ) -> Outbox {
        let call = WireCall(transport: transport, logger: AssistantLogger(), service: "tracking", userAgent: "tests")
        return Outbox(
            store: store, settings: OfflineQueueSettings(enabled: enabled, maxEntries: 10_000),
            wiring: Outbox.Wiring(
                call: call, gravityCall: call, gravityBaseURL: URL(string: "https://gravity.example")!,
                apiKey: "key", clock: ManualClock(), wallClock: { now }, activity: nil, eventTimeout: .seconds(10),
                urlTimeout: .seconds(10), logCapacity: 100, seed: 42, letsWatcherRunOut: false),
            logger: AssistantLogger())
    }

    /// Busy work of a random length, so that two threads meet at a different point each time:
    /// up to a few microseconds, or up to a wake of a sleeping thread.
    @inline(never) private static func spin(_ generator: inout SplitMix64) {
        let draw = generator.next()
        let count = Int(draw % (draw & 1 == 0 ? 4_000 : 40_000))
        var value = 0
        for index in 0..<count { value = value &+ index &* 31 }
        consume(value)
    }

    @inline(never) private static func consume(_ value: Int) {}

    /// Lists the writes and the emptyings it meets, in the order it meets them.
    private final class RecordingStore: DeliveryStore {
        enum Operation: Sendable {
            case append([UUID])
            case removeAll
        }
        private let log = Locked<[Operation]>([])
        var operations: [Operation] { log.withLock { $0 } }

        func open() throws -> [DeliveryRecord] { [] }
        func append(_ records: [DeliveryRecord]) throws { log.withLock { $0.append(.append(records.map(\.id))) } }
        func updateAttempts(of id: UUID, to attempts: Int) throws {}
        func remove(_ ids: [UUID]) throws {}
        func removeAll() throws { log.withLock { $0.append(.removeAll) } }
        func close() {}
    }

    /// A store that refuses every write once closed, as `FileDeliveryStore` does.
    private final class ClosingStore: DeliveryStore {
        private struct State {
            var ids: Set<UUID> = []
            var closed = false
        }
        private let state = Locked(State())
        var ids: Set<UUID> { state.withLock { $0.ids } }

        func open() throws -> [DeliveryRecord] { [] }
        func append(_ records: [DeliveryRecord]) throws {
            try state.withLock { state in
                guard !state.closed else { throw DeliveryStoreError(reason: "closed") }
                state.ids.formUnion(records.map(\.id))
            }
        }
        func updateAttempts(of id: UUID, to attempts: Int) throws {}
        func remove(_ ids: [UUID]) throws { state.withLock { $0.ids.subtract(ids) } }
        func removeAll() throws { state.withLock { $0.ids = [] } }
        func close() { state.withLock { $0.closed = true } }
    }

    /// Never answers: each request waits until its task is cancelled.
    private final class HangingTransport: HTTPTransport {
        private let count = Locked(0)
        var running: Int { count.withLock { $0 } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            count.withLock { $0 += 1 }
            defer { count.withLock { $0 -= 1 } }
            let (stream, continuation) = AsyncStream<Never>.makeStream()
            for await _ in stream {}  // ends once the task is cancelled
            continuation.finish()
            throw CancellationError()
        }
    }
}

/// A host call (`triggerEvent`, `trackView`) waits in the outbox for its record's first
/// attempt; a clear or a shutdown that comes while the record is still being written, or waits
/// for the next write, answers it instead of leaving it waiting for an attempt that never comes.
@Suite struct OutboxHostCallEndTests {
    // covers: DL8
    @Test func aHostCallWhoseRecordIsBeingWrittenIsAnsweredByAClear() async {
        let (store, outbox, _, calls) = await Self.twoHostCallsWithTheFirstBeingWritten()
        let clearing = Task { await outbox.clear() }
        #expect(
            await withinHangGuard("the clear reaches the outbox") { await Self.until { outbox.entries.isEmpty } }
                == true)
        store.release()
        await clearing.value
        let answers = await withinHangGuard("both host calls are answered") { await calls.value }
        #expect(answers?.count == 2)
        #expect(answers?.allSatisfy { if case .failure(.failed) = $0 { true } else { false } } == true)
        await outbox.stop()
    }

    // covers: H2, DL8
    @Test func aHostCallWhoseRecordIsBeingWrittenIsAnsweredByTheShutdown() async {
        let (store, outbox, records, calls) = await Self.twoHostCallsWithTheFirstBeingWritten()
        let stopping = Task { await outbox.stop() }
        #expect(await withinHangGuard("the stop reaches the outbox") { await Self.until { outbox.isStopped } } == true)
        store.release()
        await stopping.value
        let answers = await withinHangGuard("both host calls are answered") { await calls.value }
        #expect(answers?.count == 2)
        #expect(store.ids == Set(records.map(\.id)), "both are kept for the next engine")
    }

    /// A drain's removals reach the store before the flushes that make them durable: one after
    /// the 64th and one as the drain stops, not a flush per record; the stop flushes once more
    /// before it closes the store, for removals of sends that end as it stops.
    // covers: DL5
    @Test func aDrainsRemovalsAreFlushedEverySixtyFourAndOnceMoreWhenItStops() async {
        let kept = (0..<100).map { _ in Self.record().0 }
        let store = RemovalRecordingStore(kept)
        let outbox = Self.outbox(store: store)
        outbox.open()
        let drained = await withinHangGuard("the drain delivers every record") {
            await outbox.flushQueue()
            return await Self.until { outbox.pendingCount == 0 }
        }
        #expect(drained == true)
        await outbox.stop()
        var removed: [UUID] = []
        var syncedAt: [Int] = []
        var closedAfter: [RemovalRecordingStore.Operation] = []
        for operation in store.operations {
            switch operation {
            case .remove(let ids): removed += ids
            case .sync: syncedAt.append(removed.count)
            case .close: closedAfter = Array(store.operations.suffix(2))
            }
        }
        #expect(Set(removed) == Set(kept.map { $0.id }))
        #expect(syncedAt.count == 3)
        #expect(syncedAt.first.map { $0 >= 64 } == true, "the first flush follows 64 removals at least")
        #expect(syncedAt.dropFirst().allSatisfy { $0 == kept.count }, "then one after the last removal")
        #expect(closedAfter == [.sync, .close], "the store is flushed before it closes")
    }

    /// An outbox with two host calls in it: the first one's record held in its write by the
    /// store, the second one's waiting for the next write.
    private static func twoHostCallsWithTheFirstBeingWritten() async -> (
        GatedStore, Outbox, [DeliveryRecord], Task<[Result<HTTPResponse, WireFailure>], Never>
    ) {
        let store = GatedStore()
        let outbox = outbox(store: store)
        outbox.open()
        await outbox.flushFirstAttempts()
        let records = [record(), record()]
        let calls = deliver(records, to: outbox, after: store)
        #expect(
            await withinHangGuard("both records reach the outbox") { await until { outbox.entries.count == 2 } }
                == true)
        return (store, outbox, records.map(\.0), calls)
    }

    /// Hands `records` over as host calls, the second once the first one's write is under way
    /// (and held there by the store), and returns their answers.
    private static func deliver(
        _ records: [(DeliveryRecord, Outbox.Detail)], to outbox: Outbox, after store: GatedStore
    ) -> Task<[Result<HTTPResponse, WireFailure>], Never> {
        Task {
            await withTaskGroup(of: Result<HTTPResponse, WireFailure>.self) { group in
                for (index, (record, detail)) in records.enumerated() {
                    if index > 0 { _ = await until { store.writing } }
                    group.addTask { await outbox.deliver(record, detail: detail, persisted: {}) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
    }

    /// Yields until `condition` holds; the caller's hang guard bounds it.
    private static func until(_ condition: @Sendable () -> Bool) async -> Bool {
        while !condition() { await Task.yield() }
        return true
    }

    private static func record() -> (DeliveryRecord, Outbox.Detail) {
        (
            DeliveryRecord(
                id: UUID(), kind: .event, target: "event", body: Data("{}".utf8),
                createdAt: Date(timeIntervalSince1970: 1_750_000_000), label: "purchase-v1", owner: "u-1"),
            Outbox.Detail(
                kind: .event, name: "purchase-v1", user: GravityUser(uid: "u-1"), properties: [:], eventTime: nil,
                identityEpoch: nil)
        )
    }

    private static func outbox(store: any DeliveryStore) -> Outbox {
        let call = WireCall(transport: Answering(), logger: AssistantLogger(), service: "gravity", userAgent: "tests")
        return Outbox(
            store: store, settings: OfflineQueueSettings(),
            wiring: Outbox.Wiring(
                call: call, gravityCall: call, gravityBaseURL: URL(string: "https://gravity.example")!,
                apiKey: "key", clock: ManualClock(), wallClock: { Date(timeIntervalSince1970: 1_750_000_000) },
                activity: nil, eventTimeout: .seconds(10), urlTimeout: .seconds(10), logCapacity: 100, seed: 42,
                letsWatcherRunOut: false),
            logger: AssistantLogger())
    }

    private struct Answering: HTTPTransport {
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            HTTPResponse(status: 200, body: Data(#"{"data":[]}"#.utf8))
        }
    }

    /// Starts with `kept`, as an earlier engine left them, and lists the removals and flushes it
    /// meets, in the order it meets them.
    private final class RemovalRecordingStore: DeliveryStore {
        enum Operation: Equatable, Sendable {
            case remove([UUID])
            case sync
            case close
        }
        private let kept: [DeliveryRecord]
        private let log = Locked<[Operation]>([])
        var operations: [Operation] { log.withLock { $0 } }

        init(_ kept: [DeliveryRecord]) { self.kept = kept }

        func open() throws -> [DeliveryRecord] { kept }
        func append(_ records: [DeliveryRecord]) throws {}
        func updateAttempts(of id: UUID, to attempts: Int) throws {}
        func remove(_ ids: [UUID]) throws { log.withLock { $0.append(.remove(ids)) } }
        func sync() throws { log.withLock { $0.append(.sync) } }
        func removeAll() throws {}
        func close() { log.withLock { $0.append(.close) } }
    }

    /// Holds its first write on the store's own queue until `release()`; keeps what it is given.
    private final class GatedStore: DeliveryStore {
        private struct State {
            var writing = false
            var ids: Set<UUID> = []
        }
        private let state = Locked(State())
        private let gate = DispatchSemaphore(value: 0)
        private let gated = Locked(true)
        var writing: Bool { state.withLock { $0.writing } }
        var ids: Set<UUID> { state.withLock { $0.ids } }

        func release() {
            gated.withLock { $0 = false }
            gate.signal()
        }

        func open() throws -> [DeliveryRecord] { [] }
        func append(_ records: [DeliveryRecord]) throws {
            state.withLock { $0.writing = true }
            // The store's own serial queue waits here, never a thread of the cooperative pool.
            if gated.withLock({ $0 }) { gate.wait() }
            state.withLock { $0.ids.formUnion(records.map(\.id)) }
        }
        func updateAttempts(of id: UUID, to attempts: Int) throws {}
        func remove(_ ids: [UUID]) throws { state.withLock { $0.ids.subtract(ids) } }
        func removeAll() throws { state.withLock { $0.ids = [] } }
        func close() {}
    }
}
