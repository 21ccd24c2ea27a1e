import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// A record raised before any identity was known (`"user":{}`) leaves the queue as the identity
/// known then (DL7), so that a first launch offline opens one anonymous profile, not one per
/// queued event (B8).
@Suite(.timeLimit(.minutes(2)))
struct OwnerlessDeliveryTests {
    static func ownerless(_ order: String) -> DeliveryRecord {
        let body =
            #"{"data":[{"eventTime":"2026-12-06T10:00:00.000Z","type":"purchase-v1","uniqueTransactionId":""#
            + order + #""}],"sec":"demo","user":{}}"#
        return DeliveryRecord(
            id: UUID(), kind: .event, target: "event", body: Data(body.utf8),
            createdAt: Date(timeIntervalSince1970: 1_796_551_200), label: "purchase-v1", owner: nil)
    }

    // covers: DL7, B8
    @Test func queuedEventsRaisedBeforeAnyIdentityShareTheProfileTheFirstAnswerOpened() async throws {
        let store = OpenedWhenToldStore(records: [Self.ownerless("ORDER-1"), Self.ownerless("ORDER-2")])
        let bed = await DeliveryEngineTests.bed(store: store, uid: nil)
        defer { store.letOpen() }
        let first = bed.transport.expect(
            DeliveryGateEngineTests.event, .respond(Fixtures.eventResponse(uid: "u-new")))
        let second = bed.transport.expect(
            DeliveryGateEngineTests.event, .respond(Fixtures.eventResponse(uid: "u-new")))
        store.letOpen()
        try await bed.runUntilIdle()
        let (sentFirst, sentSecond) = (
            DeliveryGateEngineTests.text(bed.transport.request(for: first)?.body),
            DeliveryGateEngineTests.text(bed.transport.request(for: second)?.body)
        )
        #expect(sentFirst.hasSuffix(#""user":{}}"#), "nobody was known: it opens the profile")
        #expect(sentSecond.contains("ORDER-2") && sentSecond.hasSuffix(#""user":{"ses":"s-1","uid":"u-new"}}"#))
        #expect(await bed.engine.canonicalUserId == "u-new", "the engine takes the profile it opened")
        #expect(store.inner.records.isEmpty)
    }

    /// A first launch's queued event and the app's first page view: whichever asks first goes
    /// alone as nobody; the other waits for its answer and carries the profile it opened, so
    /// the server opens one profile, not two (B8).
    private static func oneFirstRequest(queuedGoesFirst: Bool) async throws -> (
        nobody: [String], uid: String?, heard: [String?]
    ) {
        let store = OpenedWhenToldStore(records: [Self.ownerless("ORDER-1")])
        let bed = await DeliveryEngineTests.bed(store: store, uid: nil)
        defer { store.letOpen() }
        let heard = Locked<[String?]>([])
        await bed.engine.setUserIdListener { uid in heard.withLock { $0.append(uid) } }
        let visit = bed.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
        let drained = bed.transport.expect(DeliveryGateEngineTests.event, .deferred)
        if queuedGoesFirst {
            store.letOpen()  // the store's read counts as work under way until it is let go
            try await bed.runUntilIdle()
            _ = bed.start { engine in await engine.trackView(pageContext: Fixtures.homePage) }
        } else {
            // The queue off, the store is read and nothing drains; the page view goes first.
            await bed.engine.setOfflineQueueSettings(OfflineQueueSettings(enabled: false))
            store.letOpen()
            try await bed.runUntilIdle()
            _ = bed.start { engine in await engine.trackView(pageContext: Fixtures.homePage) }
            try await bed.runUntilIdle()
            await bed.engine.setOfflineQueueSettings(OfflineQueueSettings())
        }
        try await bed.runUntilIdle()
        let (first, second) = queuedGoesFirst ? (drained, visit) : (visit, drained)
        #expect(bed.transport.request(for: first) != nil)
        #expect(bed.transport.request(for: second) == nil, "the second waits for the first answer")
        bed.transport.complete(first, with: Fixtures.eventResponse(uid: "u-first"))
        try await bed.runUntilIdle()
        bed.transport.complete(second, with: Fixtures.eventResponse(uid: "u-first"))
        try await bed.runUntilIdle()
        let nobody = bed.transport.requests.map { DeliveryGateEngineTests.text($0.body) }.filter {
            $0.hasSuffix(#""user":{}}"#)
        }
        return (nobody, await bed.engine.canonicalUserId, heard.withLock { $0 })
    }

    // covers: B8, B9, DL7
    @Test func aQueuedFirstLaunchEventAndTheAppsFirstRequestOpenOneProfile() async throws {
        for queuedGoesFirst in [true, false] {
            let (nobody, uid, heard) = try await Self.oneFirstRequest(queuedGoesFirst: queuedGoesFirst)
            #expect(nobody.count == 1, "queued first: \(queuedGoesFirst); one request as nobody: \(nobody)")
            #expect(uid == "u-first", "queued first: \(queuedGoesFirst)")
            #expect(heard == ["u-first"], "queued first: \(queuedGoesFirst)")
        }
    }

    // The queued first request fails: the gate opens, and the next request goes alone in its
    // turn (B8), the app's page view here.
    // covers: B8
    @Test func aQueuedFirstRequestThatFailsReleasesTheGate() async throws {
        let store = OpenedWhenToldStore(records: [Self.ownerless("ORDER-1")])
        let bed = await DeliveryEngineTests.bed(store: store, uid: nil)
        defer { store.letOpen() }
        let drained = bed.transport.expect(DeliveryGateEngineTests.event, .deferred)
        let visit = bed.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        store.letOpen()
        try await bed.runUntilIdle()
        let view = bed.start { engine in await engine.trackView(pageContext: Fixtures.homePage) }
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: visit) == nil, "behind the queued first request")
        bed.transport.complete(drained, with: .text(503, ""))
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: visit) != nil)
        #expect(view.returnedValue != nil)
        #expect(await bed.engine.canonicalUserId == "u-8f3c")
    }

    /// An engine with nobody known whose page view is on its way, unanswered, and whose
    /// queued first-launch record waits behind it to learn its owner.
    private static func queuedRecordWaitingBehindThePageView() async throws -> (
        EngineTestBed, OpenedWhenToldStore, visit: ScriptedTransport.Exchange
    ) {
        let store = OpenedWhenToldStore(records: [Self.ownerless("ORDER-1")])
        let bed = await DeliveryEngineTests.bed(store: store, uid: nil)
        await bed.engine.setOfflineQueueSettings(OfflineQueueSettings(enabled: false))
        store.letOpen()
        try await bed.runUntilIdle()
        let visit = bed.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
        _ = bed.start { engine in await engine.trackView(pageContext: Fixtures.homePage) }
        try await bed.runUntilIdle()
        await bed.engine.setOfflineQueueSettings(OfflineQueueSettings())
        try await bed.runUntilIdle()
        #expect(bed.transport.requests.count == 1, "the record waits behind the page view")
        return (bed, store, visit)
    }

    // A shutdown answers the record still waiting to learn its owner: it stays in the store
    // for the next engine, is not sent as nobody beside the first request, and the shutdown
    // does not wait for it.
    // covers: H2, B8, DL8
    @Test func aShutdownKeepsARecordWaitingForItsOwnerAndDoesNotWaitForIt() async throws {
        let (bed, store, _) = try await Self.queuedRecordWaitingBehindThePageView()
        let ended = await withinHangGuard("the shutdown returns") {
            await bed.engine.shutdown()
            return true
        }
        #expect(ended == true)
        #expect(bed.transport.requests.count == 1, "nothing more went as nobody")
        #expect(store.inner.records.count == 1, "kept for the next engine")
    }

    // A record cleared while it waits to learn its owner never reaches the wire (DL8).
    // covers: DL8
    @Test func aRecordClearedWhileItWaitsForItsOwnerIsNeverSent() async throws {
        let (bed, store, visit) = try await Self.queuedRecordWaitingBehindThePageView()
        await bed.engine.clearQueue()
        bed.transport.complete(visit, with: Fixtures.eventResponse(uid: "u-first"))
        try await bed.runUntilIdle()
        #expect(bed.transport.requests.count == 1, "only the page view")
        #expect(store.inner.records.isEmpty)
    }

    // covers: DL7
    @Test func aQueuedEventRaisedBeforeAnyIdentityLeavesAsTheIdentityKnownNow() async throws {
        let store = OpenedWhenToldStore(records: [Self.ownerless("ORDER-1")])
        let bed = await DeliveryEngineTests.bed(store: store, uid: "u-8f3c")
        defer { store.letOpen() }
        let sent = bed.transport.expect(DeliveryGateEngineTests.event, .respond(Fixtures.eventResponse()))
        store.letOpen()
        try await bed.runUntilIdle()
        let body = DeliveryGateEngineTests.text(bed.transport.request(for: sent)?.body)
        #expect(body.hasSuffix(#""user":{"uid":"u-8f3c"}}"#))
        #expect(body.contains(#""eventTime":"2026-12-06T10:00:00.000Z""#), "the rest as it was kept")
        let log = await bed.engine.trackingLog
        #expect(log.last?.uid == "u-8f3c")
    }
}

/// An in-memory store whose `open()` waits until the test says so, so that the engine's first
/// drain starts only once the test's expectations are in place.
final class OpenedWhenToldStore: DeliveryStore {
    let inner: InMemoryDeliveryStore
    private let opened = DispatchSemaphore(value: 0)
    private let told = Locked(false)

    init(records: [DeliveryRecord]) { inner = InMemoryDeliveryStore(records: records) }

    /// Lets the engine read the store; once.
    func letOpen() {
        guard
            told.withLock({ told in
                defer { told = true }; return !told
            })
        else { return }
        opened.signal()
    }

    func open() throws -> [DeliveryRecord] {
        opened.wait()  // on the store's own queue, never a cooperative thread
        return try inner.open()
    }
    func append(_ records: [DeliveryRecord]) throws { try inner.append(records) }
    func updateAttempts(of id: UUID, to attempts: Int) throws { try inner.updateAttempts(of: id, to: attempts) }
    func remove(_ ids: [UUID]) throws { try inner.remove(ids) }
    func removeAll() throws { try inner.removeAll() }
    func close() { inner.close() }
}

/// The outbox on its own, with an engine that has not taken the first answer's `user` yet when
/// the next record leaves: the record still carries it (B8: one profile).
@Suite(.timeLimit(.minutes(2)))
struct OwnerlessOutboxTests {
    private final class AnsweringTransport: HTTPTransport {
        private let sent = Locked<[HTTPRequest]>([])
        var requests: [HTTPRequest] { sent.withLock { $0 } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            sent.withLock { $0.append(request) }
            return HTTPResponse(status: 200, body: Data(#"{"campaigns":[],"user":{"ses":"s-9","uid":"u-new"}}"#.utf8))
        }
    }

    private static func outbox(on store: any DeliveryStore, transport: AnsweringTransport) -> Outbox {
        let call = WireCall(
            transport: transport, logger: AssistantLogger(level: .none), service: "gravity", userAgent: "test")
        return Outbox(
            store: store, settings: OfflineQueueSettings(),
            wiring: Outbox.Wiring(
                call: call, gravityCall: call, gravityBaseURL: AssistantEngineConfiguration.defaultGravityBaseURL,
                apiKey: Fixtures.apiKey, clock: ContinuousClock(),
                wallClock: { Date(timeIntervalSince1970: 1_796_551_200) }, activity: nil, eventTimeout: .seconds(10),
                urlTimeout: .seconds(10), logCapacity: 16, seed: 1, letsWatcherRunOut: false),
            logger: AssistantLogger(level: .none))
    }

    // A record sent as the session's first request reports its end, answered or not, to the
    // engine's gate under its number, and not to the identity listener.
    // covers: B8
    @Test func aQueuedFirstRequestReportsItsEndToTheGate() async throws {
        let finished = await withinHangGuard("the queue drains") {
            let transport = AnsweringTransport()
            let outbox = Self.outbox(
                on: InMemoryDeliveryStore(records: [OwnerlessDeliveryTests.ownerless("ORDER-1")]),
                transport: transport)
            let identity = Locked(0)
            let ends = Locked<[(UInt64, GravityAnsweredUser?, UInt64)]>([])
            outbox.setIdentityListener { _, _, _ in identity.withLock { $0 += 1 } }
            outbox.setOpenerListener { owner, user, epoch in ends.withLock { $0.append((owner, user, epoch)) } }
            outbox.setOwnerSource { QueuedOwner(user: GravityUser(), identityEpoch: 3, opener: 7) }
            outbox.open()
            await outbox.flushQueue()
            await outbox.stop()
            let body = transport.requests.first.map { String(decoding: $0.body ?? Data(), as: UTF8.self) }
            #expect(body?.hasSuffix(#""user":{}}"#) == true, "as kept: nobody is known")
            let heard = ends.withLock { $0 }
            #expect(heard.count == 1)
            #expect(heard.first?.0 == 7 && heard.first?.2 == 3)
            #expect(heard.first?.1 == GravityAnsweredUser(uid: "u-new", ses: "s-9"))
            #expect(identity.withLock { $0 } == 0)
            return true
        }
        #expect(finished == true)
    }

    // A lifecycle event raised before any identity was known waits for its lane; it leaves
    // as the identity known by then.
    // covers: DL7
    @Test func aLifecycleEventRaisedBeforeAnyIdentityLeavesAsTheOneKnownWhenItGoes() async throws {
        let finished = await withinHangGuard("the event is sent") {
            let transport = AnsweringTransport()
            let outbox = Self.outbox(on: InMemoryDeliveryStore(), transport: transport)
            outbox.setOwnerSource {
                QueuedOwner(user: GravityUser(uid: "u-8f3c", ses: "s-2"), identityEpoch: 1, opener: nil)
            }
            outbox.open()
            let record = OwnerlessDeliveryTests.ownerless("ORDER-1")
            outbox.accept([(record, Outbox.detail(ofKept: record))], route: .lifecycle)
            await outbox.flushFirstAttempts()
            await outbox.stop()
            let body = transport.requests.first.map { String(decoding: $0.body ?? Data(), as: UTF8.self) }
            #expect(body?.hasSuffix(#""user":{"ses":"s-2","uid":"u-8f3c"}}"#) == true)
            #expect(outbox.log.first?.uid == "u-8f3c")
            return true
        }
        #expect(finished == true)
    }
}
