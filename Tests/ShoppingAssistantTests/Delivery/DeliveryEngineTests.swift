import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// Delivery through the whole engine, on a scripted transport and the manual clock: the wire
/// behaviours of the flutter SDK's outbox and retry tests (`api_retry_wire_test`,
/// `outbox_event_wire_test`, `outbox_recovery_wire_test`, `outbox_adversarial_wire_test`),
/// as this engine's rules state them.
@Suite(.timeLimit(.minutes(2)))
struct DeliveryEngineTests {
    static let purchase = PurchaseEvent(
        uniqueTransactionId: "ORDER-1", value: 3980,
        cart: [CartItem(productId: "KIT-1001", quantity: 2, itemPrice: 1990)],
        currency: "RUB")

    static func bed(store: any DeliveryStore = InMemoryDeliveryStore(), uid: String? = "u-8f3c") async
        -> EngineTestBed
    {
        await EngineTestBed(
            configuration: AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section),
            identityStore: InMemoryIdentityStore(uid: uid), analytics: .scripted,
            onUnexpected: { Issue.record(Comment(rawValue: $0)) }, deliveryStore: store)
    }

    static func buy(_ bed: EngineTestBed) -> EngineTestBed.Call<Bool> {
        bed.start { engine in
            await engine.triggerEvent(events: [Self.purchase], pageContext: Fixtures.homePage)
            return true
        }
    }

    static var event: ScriptedTransport.Matcher { .request(.post, pathSuffix: "/event") }

    /// A bed whose engine logs at `.info` into the lines returned beside it.
    static func loggedBed() async -> (EngineTestBed, Locked<[String]>) {
        let logs = Locked<[String]>([])
        let logger = AssistantLogger(level: .info)
        logger.setListener { _, message in logs.withLock { $0.append(message) } }
        let bed = await EngineTestBed(
            configuration: AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section),
            identityStore: InMemoryIdentityStore(uid: "u-8f3c"), logger: logger, analytics: .scripted,
            onUnexpected: { Issue.record(Comment(rawValue: $0)) })
        return (bed, logs)
    }

    // 503, 503, 200: three requests, the same bytes each time, one second then two apart.
    // covers: DL1
    @Test func aServerErrorIsRetriedWithinTheDeadlineWithTheSameBytes() async throws {
        let bed = await Self.bed()
        let first = bed.transport.expect(Self.event, .respond(.text(503, "")))
        let second = bed.transport.expect(Self.event, .respond(.text(503, "")))
        let third = bed.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        _ = Self.buy(bed)
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: second) == nil, "the second attempt waits a second")
        bed.clock.advance(by: .seconds(1))
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: third) == nil, "the third waits two more")
        bed.clock.advance(by: .seconds(2))
        try await bed.runUntilIdle()
        let bodies = [first, second, third].map { bed.transport.request(for: $0)?.body }
        #expect(bodies.allSatisfy { $0 != nil && $0 == bodies[0] }, "every attempt sends the same bytes")
        #expect(await bed.engine.pendingDeliveries == 0)
    }

    // A 422 is final: not retried, not queued, dropped with its reason.
    // covers: DL1, DL3
    @Test func aRejectedEventIsNeitherRetriedNorQueued() async throws {
        let (bed, logs) = await Self.loggedBed()
        bed.transport.expect(Self.event, .respond(.text(422, "")))
        let call = Self.buy(bed)
        try await bed.runUntilIdle()
        bed.clock.advance(by: .seconds(60))
        try await bed.runUntilIdle()
        #expect(call.returnedValue == true)
        #expect(bed.transport.requests.count == 1)
        #expect(await bed.engine.pendingDeliveries == 0)
        #expect(logs.withLock { $0 }.contains { $0.contains("purchase-v1 dropped (rejected)") })
    }

    // Offline: every attempt within the deadline fails to connect; the purchase stays in the
    // store and `flushQueue` sends exactly the body first written, eventTime included.
    // covers: DL2, DL6, DL8
    @Test func aPurchaseThatCannotConnectIsKeptAndFlushQueueDeliversItsFirstBytes() async throws {
        let store = InMemoryDeliveryStore()
        let bed = await Self.bed(store: store)
        let offline = (0..<4).map { _ in bed.transport.expect(Self.event, .fail(.cannotConnect("offline"))) }
        let call = Self.buy(bed)
        try await bed.runUntilIdle()
        #expect(call.returnedValue == true, "triggerEvent returned once the event was kept")
        for step in [1, 2, 4] {
            bed.clock.advance(by: .seconds(step))
            try await bed.runUntilIdle()
        }
        #expect(offline.allSatisfy { bed.transport.request(for: $0) != nil }, "four attempts within 10 s")
        #expect(await bed.engine.pendingDeliveries == 1)
        #expect(store.records.map(\.label) == ["purchase-v1"])
        let first = try #require(bed.transport.request(for: offline[0])?.body)
        #expect(String(decoding: first, as: UTF8.self).contains(#""eventTime":"2026-12-06T10:00:00.000Z""#))
        let delivered = bed.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        bed.clock.advance(by: .seconds(30))  // later than the moment of the call: the time stays
        await bed.engine.flushQueue()
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: delivered)?.body == first)
        #expect(await bed.engine.pendingDeliveries == 0)
        #expect(store.records.isEmpty)
        let log = await bed.engine.trackingLog
        #expect(log.last?.name == "purchase-v1" && log.last?.deferred == true && log.last?.failure == nil)
    }

    // `triggerEvent` returns while its request is still on the wire: the event is in the store.
    // covers: DL5
    @Test func triggerEventReturnsOnceItsEventsAreInTheStore() async throws {
        let store = InMemoryDeliveryStore()
        let bed = await Self.bed(store: store)
        let held = bed.transport.expect(Self.event, .deferred)
        let call = Self.buy(bed)
        try await bed.runUntilIdle()
        #expect(call.returnedValue == true)
        #expect(bed.transport.request(for: held) != nil, "its request is under way")
        #expect(store.records.count == 1, "and it is kept until answered")
        bed.transport.complete(held, with: Fixtures.eventResponse())
        try await bed.runUntilIdle()
        #expect(store.records.isEmpty)
    }

    // Deliveries that end while the store is writing are forgotten in one write, as events
    // accepted meanwhile are kept in one: a burst costs a few flushes, not one each.
    // covers: DL2
    @Test func removalsAskedWhileTheStoreWritesShareOneWrite() async throws {
        let store = GatedRemovalStore()
        let bed = await Self.bed(store: store)
        bed.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        _ = Self.buy(bed)  // the session's first answer: the next events go at once (B8)
        try await bed.runUntilIdle()
        let held = (0..<3).map { _ in bed.transport.expect(Self.event, .deferred) }
        for _ in held { _ = Self.buy(bed) }
        try await bed.runUntilIdle()
        #expect(held.allSatisfy { bed.transport.request(for: $0) != nil }, "all three on the wire")

        store.holdNextRemoval()
        bed.transport.complete(held[0], with: Fixtures.eventResponse())
        try await store.waitUntil { $0.isHolding }
        bed.transport.complete(held[1], with: Fixtures.eventResponse())
        bed.transport.complete(held[2], with: Fixtures.eventResponse())
        // Everything has run but the held write and the one queued behind it, which count as
        // work under way.
        #expect(await bed.activity.waitUntil(busyAtMost: 2))
        store.release()
        try await store.waitUntil { $0.removed == 4 }
        #expect(store.removals.map(\.count) == [1, 1, 2])
        #expect(store.records.isEmpty)
    }

    // A process gone before delivery: the next engine on the same store sends the event as it
    // was raised — same user, same eventTime — when it starts.
    // covers: DL5, AN4, DL7
    @Test func theNextEngineOnTheSameStoreDeliversWhatTheLastOneKept() async throws {
        let store = InMemoryDeliveryStore()
        let before = await Self.bed(store: store)
        for _ in 0..<4 { before.transport.expect(Self.event, .fail(.cannotConnect("offline"))) }
        _ = Self.buy(before)
        try await before.runUntilIdle()
        for step in [1, 2, 4] {
            before.clock.advance(by: .seconds(step))
            try await before.runUntilIdle()
        }
        let kept = try #require(before.transport.requests.first?.body)
        await before.engine.shutdown()
        #expect(store.records.count == 1, "a shutdown leaves it for the next engine")

        // What the first engine left, read by the next only once its answer is scripted: an
        // engine drains its store as it starts (DL3).
        let survivor = OpenedWhenToldStore(records: store.records)
        let after = await Self.bed(store: survivor, uid: "u-other")
        let delivered = after.transport.expect(Self.event, .respond(Fixtures.eventResponse(uid: "u-other")))
        survivor.letOpen()
        try await after.runUntilIdle()
        #expect(after.transport.request(for: delivered)?.body == kept, "byte for byte, as u-8f3c")
        #expect(survivor.inner.records.isEmpty)
        #expect(await after.engine.canonicalUserId == "u-other", "its answer does not adopt the old user")
    }

    // A shutdown returns only once the store has forgotten what was delivered: the next
    // engine on the store (a `:restart`, a relaunch) must not read a delivered event whose
    // removal was still being written, and send it again.
    // covers: DL5, H2
    @Test func aShutdownReturnsOnlyOnceTheStoreHasForgottenWhatWasDelivered() async throws {
        let store = GatedRemovalStore()
        let bed = await Self.bed(store: store)
        let delivered = bed.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        _ = Self.buy(bed)
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: delivered) != nil)

        await bed.engine.shutdown()
        #expect(store.closed, "the shutdown returned before the store was closed")
        #expect(store.removed == 1 && store.records.isEmpty, "what the next engine reads: nothing to send again")
    }

    /// A configuration whose failed `/event` is queued at once: no retry fits its deadline.
    static var queueingAtOnce: AssistantEngineConfiguration {
        var configuration = AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section)
        configuration.gravityTimeout = .milliseconds(500)
        return configuration
    }

    /// An engine on `store` that cannot connect buys and shuts down, as a process gone offline
    /// would: returns how many records it left in the store for the next engine.
    static func purchaseKeptOffline(in store: any DeliveryStore, identity: any IdentityStore) async -> Int {
        let first = AssistantEngine(
            configuration: queueingAtOnce, transport: AnsweringAfterCancellation(eventsAnswer: false),
            clock: ManualClock(), identityStore: identity, deliveryStore: store)
        await first.triggerEvent(events: [Self.purchase], pageContext: Fixtures.homePage)
        await first.flushTracking()
        let kept = await first.pendingDeliveries
        await first.shutdown()
        return kept
    }

    // A drain send on the wire when the engine shuts down is cancelled, but its transport may
    // already hold the answer and return a success anyway: the shutdown waits for it (within
    // its deadline) and removes the record before it closes the store, so the next engine on
    // the store does not send a delivered event again.
    // covers: DL5, H2
    @Test func aSuccessSeenAsTheShutdownCancelsItsSendIsNeverSentAgain() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "DeliveryEngineTests-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let identity = InMemoryIdentityStore(uid: "u-8f3c")

        let steps = await withinHangGuard("the purchase is kept, drained on the next start, and shut down") {
            let kept = await Self.purchaseKeptOffline(in: FileDeliveryStore(directory: directory), identity: identity)

            let late = AnsweringAfterCancellation(eventsAnswer: true)
            let second = AssistantEngine(
                configuration: Self.queueingAtOnce, transport: late, clock: ManualClock(), identityStore: identity,
                deliveryStore: FileDeliveryStore(directory: directory))
            let arrived = await late.eventArrived()
            let shutdown = Task { await second.shutdown() }
            let cancelled = await late.cancelled()
            late.answer()
            await shutdown.value
            return (kept, arrived, cancelled)
        }
        let (kept, arrived, cancelled) = try #require(steps)
        #expect(kept == 1, "the first engine keeps the purchase it could not send")
        #expect(arrived, "the next engine drains what the last one kept as it starts")
        #expect(cancelled, "the shutdown cancels the send")

        let next = FileDeliveryStore(directory: directory)
        defer { next.close() }
        #expect(try next.open().isEmpty, "the delivered purchase is not left for the next engine")
    }

    // The wait for a cancelled send is bounded by the shutdown's deadline: a transport that
    // ignores cancellation keeps the shutdown no longer, and its record stays for the next
    // engine.
    // covers: H2, DL8
    @Test func aSendThatIgnoresCancellationHoldsTheShutdownOnlyUntilItsDeadline() async throws {
        let store = InMemoryDeliveryStore()
        let clock = ManualClock()
        let steps = await withinHangGuard("the shutdown returns at its deadline") {
            _ = await Self.purchaseKeptOffline(in: store, identity: InMemoryIdentityStore(uid: "u-8f3c"))

            let silent = AnsweringAfterCancellation(eventsAnswer: true)
            let second = AssistantEngine(
                configuration: Self.queueingAtOnce, transport: silent, clock: clock,
                identityStore: InMemoryIdentityStore(uid: "u-8f3c"), deliveryStore: store)
            let arrived = await silent.eventArrived()
            let shutdown = Task { await second.shutdown(flushDeadline: .seconds(3)) }
            let cancelled = await silent.cancelled()
            // The shutdown's deadline is asleep on the clock before it is reached.
            let deadline = clock.now.advanced(by: .seconds(3))
            while !clock.pendingDeadlines.contains(deadline) { await Task.yield() }
            clock.advance(by: .seconds(3))
            await shutdown.value
            let kept = store.records.count
            silent.answer()  // the send ends, and the engine with it
            return (arrived, cancelled, kept)
        }
        let (arrived, cancelled, kept) = try #require(steps)
        #expect(arrived && cancelled)
        #expect(kept == 1, "never answered: kept for the next engine")
    }

    // A cleared queue sends nothing, whatever its records were doing.
    // covers: DL8
    @Test func aClearedQueueNeverReachesTheWire() async throws {
        let store = InMemoryDeliveryStore()
        let bed = await Self.bed(store: store)
        for _ in 0..<4 { bed.transport.expect(Self.event, .fail(.cannotConnect("offline"))) }
        _ = Self.buy(bed)
        try await bed.runUntilIdle()
        for step in [1, 2, 4] {
            bed.clock.advance(by: .seconds(step))
            try await bed.runUntilIdle()
        }
        #expect(await bed.engine.pendingDeliveries == 1)
        await bed.engine.clearQueue()
        #expect(await bed.engine.pendingDeliveries == 0)
        #expect(store.records.isEmpty)
        let sent = bed.transport.requests.count
        await bed.engine.flushQueue()
        bed.clock.advance(by: .seconds(3600))
        try await bed.runUntilIdle()
        #expect(bed.transport.requests.count == sent, "nothing more was sent")
    }

    // A severed answer: the server may have the event, so it is sent again, and may arrive
    // twice; once an answer is seen, never again.
    // covers: AN9, DL2
    @Test func aSeveredAnswerIsReplayedAndTheDuplicateIsExpected() async throws {
        let bed = await Self.bed()
        let severed = bed.transport.expect(Self.event, .fail(.connectionLost("reset after the body")))
        let replayed = bed.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        _ = Self.buy(bed)
        try await bed.runUntilIdle()
        bed.clock.advance(by: .seconds(1))
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: replayed)?.body == bed.transport.request(for: severed)?.body)
        bed.clock.advance(by: .seconds(3600))
        await bed.engine.flushQueue()
        try await bed.runUntilIdle()
        #expect(bed.transport.requests.count == 2, "delivered once seen, never sent again")
    }

    // Turned off, nothing is queued: the event is sent once and a failure loses it (DL4 says
    // so); records kept earlier wait on disk until the queue is on again.
    // covers: DL4
    @Test func aQueueTurnedOffKeepsNothingNewAndSendsNothingKept() async throws {
        let kept = DeliveryRecord(
            id: UUID(), kind: .event, target: "event", body: Data(#"{"data":[]}"#.utf8),
            createdAt: EngineTestBed.wallClockStart, label: "kept-v1", owner: "u-8f3c")
        let store = InMemoryDeliveryStore(records: [kept])
        var configuration = AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section)
        configuration.offlineQueue = OfflineQueueSettings(enabled: false)
        let bed = await EngineTestBed(
            configuration: configuration, identityStore: InMemoryIdentityStore(uid: "u-8f3c"), analytics: .scripted,
            onUnexpected: { Issue.record(Comment(rawValue: $0)) }, deliveryStore: store)
        for _ in 0..<4 { bed.transport.expect(Self.event, .fail(.cannotConnect("offline"))) }
        _ = Self.buy(bed)
        try await bed.runUntilIdle()
        for step in [1, 2, 4] {
            bed.clock.advance(by: .seconds(step))
            try await bed.runUntilIdle()
        }
        #expect(store.records.map(\.label) == ["kept-v1"], "the purchase was not kept; the old record waits")
        let drained = bed.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        await bed.engine.setOfflineQueueSettings(OfflineQueueSettings(enabled: true))
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: drained)?.body == kept.body)
        #expect(store.records.isEmpty)
    }

    // What the log keeps beside a record goes with the record: after a delivery the store
    // never had (the queue off), and after a clear while the record was on the wire.
    // covers: DL4, DL8
    @Test func aRecordsLogDetailGoesWithTheRecordHoweverItEnds() async throws {
        var configuration = AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section)
        configuration.offlineQueue = OfflineQueueSettings(enabled: false)
        let bed = await EngineTestBed(
            configuration: configuration, identityStore: InMemoryIdentityStore(uid: "u-8f3c"), analytics: .scripted,
            onUnexpected: { Issue.record(Comment(rawValue: $0)) })
        bed.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        _ = Self.buy(bed)
        try await bed.runUntilIdle()
        #expect(await bed.engine.outbox.detailCount == 0, "delivered unprotected")
        #expect(await bed.engine.outbox.storageCapacity < 16, "nothing waits for a write that never comes")
        #expect(await bed.engine.keptCompletionCount == 0, "the call is over for the engine too")

        await bed.engine.setOfflineQueueSettings(OfflineQueueSettings(enabled: true))
        let onTheWire = bed.transport.expect(Self.event, .deferred)
        _ = Self.buy(bed)
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: onTheWire) != nil)
        await bed.engine.clearQueue()
        bed.transport.complete(onTheWire, with: Fixtures.eventResponse())
        try await bed.runUntilIdle()
        #expect(await bed.engine.outbox.detailCount == 0, "cleared while on the wire")
        #expect(await bed.engine.keptCompletionCount == 0, "the calls are over for the engine too")
    }

    // A purchase on the wire when the queue is cleared, whose attempt then fails, is not queued
    // again, and the call's error line does not promise that it will be.
    // covers: DL8
    @Test func aCallClearedWhileOnTheWireDoesNotSayItIsKeptWhenItFails() async throws {
        let (bed, logs) = await Self.loggedBed()
        let onTheWire = bed.transport.expect(Self.event, .deferred)
        let call = Self.buy(bed)
        try await bed.runUntilIdle()
        #expect(call.returnedValue == true, "kept: the call returned")
        await bed.engine.clearQueue()
        bed.transport.fail(onTheWire, with: .cannotConnect("refused"))
        try await bed.runUntilIdle()
        // The retry's pause ends (DL1), before the call's own deadline: no retry of a cleared record.
        bed.clock.advance(by: .seconds(1))
        try await bed.runUntilIdle()
        bed.clock.advance(by: .seconds(60))
        try await bed.runUntilIdle()
        #expect(bed.transport.requests.count == 1, "never sent again")
        #expect(await bed.engine.pendingDeliveries == 0)
        let lines = logs.withLock { $0 }
        let failure = lines.filter { $0.contains("POST /event") && $0.contains("failed") }
        #expect(failure.count == 1 && failure.allSatisfy { $0.contains("refused") }, "\(lines)")
        #expect(!lines.contains { $0.contains("kept") }, "\(lines)")
    }

    // The key goes to the Gravity origin only: a tracking URL there carries it, a third-party
    // host named by the server's data never gets it (wire.md § Tracking).
    // covers: DL2
    @Test func aTrackingURLCarriesTheKeyOnlyToTheGravityOrigin() async throws {
        let bed = await Self.bed()
        let base = AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section).gravityBaseURL
        let own = base.scheme! + "://" + base.host! + (base.port.map { ":\($0)" } ?? "") + "/track?e=1"
        let gravity = bed.transport.expect(.get(own), .respond(.text(204, "")))
        let other = bed.transport.expect(.get("https://t.example/i"), .respond(.text(204, "")))
        let user = GravityUser(uid: "u-8f3c")
        await bed.engine.track([.url(TrackingURL(own), user: user), .url("https://t.example/i", user: user)])
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: gravity)?.header("Authorization") == "Bearer \(Fixtures.apiKey)")
        #expect(bed.transport.request(for: other).map { $0.header("Authorization") == nil } == true)
    }
}

/// A store in memory that records the removals it is asked for and can hold one of them until
/// released, as a slow disk holds a write.
private final class GatedRemovalStore: DeliveryStore {
    private struct State {
        var removals: [[UUID]] = []
        var holdsNext = false
        var isHolding = false
        /// Records the inner store has forgotten.
        var removed = 0
        var closed = false
    }

    private let inner = InMemoryDeliveryStore()
    private let state = Locked(State())
    private let gate = DispatchSemaphore(value: 0)
    private let changes = Waitlist()

    var removals: [[UUID]] { state.withLock { $0.removals } }
    var isHolding: Bool { state.withLock { $0.isHolding } }
    var removed: Int { state.withLock { $0.removed } }
    var closed: Bool { state.withLock { $0.closed } }
    var records: [DeliveryRecord] { inner.records }

    /// The next removal waits in the store until `release()`.
    func holdNextRemoval() { state.withLock { $0.holdsNext = true } }

    func release() {
        state.withLock { $0.isHolding = false }
        gate.signal()
    }

    /// Waits until `condition` holds of what happened on the store's own thread (or the
    /// test's time limit cancels the wait).
    func waitUntil(_ condition: @escaping @Sendable (GatedRemovalStore) -> Bool) async throws {
        #expect(await changes.wait { condition(self) }, "the store did not get there")
    }

    func open() throws -> [DeliveryRecord] { try inner.open() }
    func append(_ records: [DeliveryRecord]) throws { try inner.append(records) }
    func updateAttempts(of id: UUID, to attempts: Int) throws { try inner.updateAttempts(of: id, to: attempts) }
    func removeAll() throws { try inner.removeAll() }
    func close() {
        state.withLock { $0.closed = true }
        changes.recheck()
    }

    func remove(_ ids: [UUID]) throws {
        let holds = state.withLock { state -> Bool in
            state.removals.append(ids)
            defer { state.holdsNext = false }
            state.isHolding = state.holdsNext
            return state.holdsNext
        }
        changes.recheck()
        if holds { gate.wait() }
        try inner.remove(ids)
        state.withLock { $0.removed += ids.count }
        changes.recheck()
    }
}

/// Answers `/event` with a success once the test says so, even after the caller was cancelled,
/// as a transport that had already read the answer does; or fails every `/event` to connect.
/// Everything else gets `{"campaigns":[]}` at once.
private final class AnsweringAfterCancellation: HTTPTransport, Sendable {
    private struct State {
        var arrived = false
        var cancelled = false
        var answered = false
        var waiting: CheckedContinuation<Void, Never>?
    }

    private let eventsAnswer: Bool
    private let state = Locked(State())
    private let changes = Waitlist()

    init(eventsAnswer: Bool) { self.eventsAnswer = eventsAnswer }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.url.path.hasSuffix("/event") else { return Fixtures.eventResponse() }
        guard eventsAnswer else { throw HTTPTransportError.cannotConnect("offline") }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let answered = state.withLock { state -> Bool in
                    state.arrived = true
                    if state.answered { return true }
                    state.waiting = continuation
                    return false
                }
                changes.recheck()
                if answered { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.cancelled = true }
            changes.recheck()
        }
        return Fixtures.eventResponse()
    }

    func eventArrived() async -> Bool { await changes.wait(until: { self.state.withLock { $0.arrived } }) }
    func cancelled() async -> Bool { await changes.wait(until: { self.state.withLock { $0.cancelled } }) }

    func answer() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.answered = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume()
    }
}
