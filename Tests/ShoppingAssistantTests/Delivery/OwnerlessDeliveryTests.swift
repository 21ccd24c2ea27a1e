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

    /// A first launch's queued event and the app's first page view go as nobody at the same
    /// time: each opens a profile; the engine takes the one answered first and keeps it.
    private static func twoFirstAnswers(drainAnswersFirst: Bool) async throws -> (String?, [String?]) {
        let store = OpenedWhenToldStore(records: [Self.ownerless("ORDER-1")])
        let bed = await DeliveryEngineTests.bed(store: store, uid: nil)
        defer { store.letOpen() }
        let heard = Locked<[String?]>([])
        await bed.engine.setUserIdListener { uid in heard.withLock { $0.append(uid) } }
        let visit = bed.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
        let drained = bed.transport.expect(DeliveryGateEngineTests.event, .deferred)
        _ = bed.start { engine in await engine.trackView(pageContext: Fixtures.homePage) }
        store.letOpen()  // the store's read counts as work under way until it is let go
        try await bed.runUntilIdle()
        #expect(bed.transport.request(for: visit) != nil && bed.transport.request(for: drained) != nil)
        let (first, second) = drainAnswersFirst ? (drained, visit) : (visit, drained)
        bed.transport.complete(first, with: Fixtures.eventResponse(uid: "u-first"))
        try await bed.runUntilIdle()
        bed.transport.complete(second, with: Fixtures.eventResponse(uid: "u-second"))
        try await bed.runUntilIdle()
        return (await bed.engine.canonicalUserId, heard.withLock { $0 })
    }

    // covers: B8, B9
    @Test func twoFirstAnswersNeverFlipTheUidWhicheverComesFirst() async throws {
        for drainAnswersFirst in [true, false] {
            let (uid, heard) = try await Self.twoFirstAnswers(drainAnswersFirst: drainAnswersFirst)
            #expect(uid == "u-first", "drain answered first: \(drainAnswersFirst)")
            #expect(heard == ["u-first"], "drain answered first: \(drainAnswersFirst)")
        }
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

    // covers: DL7, B8
    @Test func theNextRecordCarriesTheProfileTheLastOneOpenedBeforeTheEngineTookIt() async throws {
        let finished = await withinHangGuard("the queue drains") {
            let transport = AnsweringTransport()
            let outbox = Self.outbox(
                on: InMemoryDeliveryStore(records: [
                    OwnerlessDeliveryTests.ownerless("ORDER-1"), OwnerlessDeliveryTests.ownerless("ORDER-2"),
                ]), transport: transport)
            let adopted = Locked<[GravityAnsweredUser]>([])
            let asNobody = Locked<[Bool]>([])
            outbox.setIdentityListener { user, _, nobody in
                adopted.withLock { $0.append(user) }
                asNobody.withLock { $0.append(nobody) }
            }
            outbox.setOwnerSource { (GravityUser(), 1) }  // nobody known yet, whatever was answered
            outbox.open()
            await outbox.flushQueue()
            await outbox.stop()
            let bodies = transport.requests.map { String(decoding: $0.body ?? Data(), as: UTF8.self) }
            #expect(bodies.count == 2)
            #expect(bodies.first?.hasSuffix(#""user":{}}"#) == true)
            #expect(bodies.last?.hasSuffix(#""user":{"ses":"s-9","uid":"u-new"}}"#) == true)
            #expect(
                adopted.withLock { $0 }.first == GravityAnsweredUser(uid: "u-new", ses: "s-9"), "handed to the engine")
            // The second went as a user the engine may not have taken: its answer, as the
            // first's, is taken only while the engine knows nobody (B8).
            #expect(asNobody.withLock { $0 } == [true, true])
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
            outbox.setOwnerSource { (GravityUser(uid: "u-8f3c", ses: "s-2"), 1) }
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
