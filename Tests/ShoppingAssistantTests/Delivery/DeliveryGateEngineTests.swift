import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// An event raised while the session's first Gravity request is on its way (B8) waits at the
/// gate for the session that request brings; it is in the store meanwhile, so `triggerEvent`
/// returns and a process ended before the gate opens loses nothing (DL2, DL5).
@Suite(.timeLimit(.minutes(2)))
struct DeliveryGateEngineTests {
    static func purchase(_ order: String) -> PurchaseEvent {
        PurchaseEvent(
            uniqueTransactionId: order, value: 1990,
            cart: [CartItem(productId: "KIT-1001", quantity: 1, itemPrice: 1990)],
            currency: "RUB")
    }

    static func buy(_ bed: EngineTestBed, _ order: String) -> EngineTestBed.Call<Bool> {
        bed.start { engine in
            await engine.triggerEvent(events: [Self.purchase(order)], pageContext: Fixtures.homePage)
            return true
        }
    }

    static var event: ScriptedTransport.Matcher { .request(.post, pathSuffix: "/event") }

    static func text(_ body: Data?) -> String { body.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    /// An engine whose first event (ORDER-1) is on the wire, unanswered, and whose second
    /// (ORDER-2) waits at the gate behind it.
    static func secondPurchaseAtTheGate(store: InMemoryDeliveryStore) async throws
        -> (EngineTestBed, first: ScriptedTransport.Exchange, second: EngineTestBed.Call<Bool>)
    {
        let bed = await DeliveryEngineTests.bed(store: store)
        let first = bed.transport.expect(Self.event, .deferred)
        _ = Self.buy(bed, "ORDER-1")
        try await bed.runUntilIdle()
        let second = Self.buy(bed, "ORDER-2")
        try await bed.runUntilIdle()
        return (bed, first, second)
    }

    // covers: B8, DL2, DL5
    @Test func anEventWaitingAtTheGateIsInTheStoreAndItsCallHasReturned() async throws {
        let store = InMemoryDeliveryStore()
        let (bed, first, second) = try await Self.secondPurchaseAtTheGate(store: store)
        #expect(bed.transport.request(for: first) != nil)
        #expect(bed.transport.requests.count == 1, "the second waits for the first answer (B8)")
        #expect(second.returnedValue == true, "triggerEvent returned: the event is kept")
        #expect(store.records.count == 2)
        #expect(await bed.engine.pendingDeliveries == 2)
    }

    // The process ends while the gate is closed: the next engine on what the store held
    // delivers both events.
    // covers: DL5, B8
    @Test func aProcessEndedWhileAnEventWaitsAtTheGateLosesNothing() async throws {
        let store = InMemoryDeliveryStore()
        _ = try await Self.secondPurchaseAtTheGate(store: store)
        // As a kill -9 leaves it, read by the next engine only once its answers are scripted: an
        // engine drains its store as it starts (DL3).
        let survivor = OpenedWhenToldStore(records: store.records)

        let after = await DeliveryEngineTests.bed(store: survivor)
        after.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        after.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        survivor.letOpen()
        try await after.runUntilIdle()
        let bodies = after.transport.requests.map { Self.text($0.body) }
        #expect(bodies.contains { $0.contains("ORDER-1") } && bodies.contains { $0.contains("ORDER-2") })
        #expect(survivor.inner.records.isEmpty)
    }

    // The gate opens: the event leaves once, with the session the first answer brought, and
    // what was kept for it at the gate leaves the store with it.
    // covers: B8, DL2, DL5
    @Test func anEventLeavingTheGateGoesOnceWithTheSessionAndLeavesNothingKept() async throws {
        let store = InMemoryDeliveryStore()
        let (bed, first, _) = try await Self.secondPurchaseAtTheGate(store: store)
        let released = bed.transport.expect(Self.event, .respond(Fixtures.eventResponse()))
        bed.transport.complete(first, with: Fixtures.eventResponse())
        try await bed.runUntilIdle()
        let body = Self.text(bed.transport.request(for: released)?.body)
        #expect(body.contains("ORDER-2") && body.contains(#""ses":"s-1""#))
        #expect(bed.transport.requests.count == 2, "sent once")
        #expect(store.records.isEmpty)
        #expect(await bed.engine.pendingDeliveries == 0)
        #expect(await bed.engine.keptCompletionCount == 0, "both calls are over for the engine too")
    }

    // A cleared queue takes the event waiting at the gate too, in the store and on the wire.
    // covers: DL8
    @Test func aClearedQueueForgetsTheEventWaitingAtTheGate() async throws {
        let store = InMemoryDeliveryStore()
        let (bed, first, _) = try await Self.secondPurchaseAtTheGate(store: store)
        await bed.engine.clearQueue()
        #expect(store.records.isEmpty)
        bed.transport.complete(first, with: Fixtures.eventResponse())
        try await bed.runUntilIdle()
        #expect(bed.transport.requests.count == 1, "the cleared event never reached the wire")
        #expect(store.records.isEmpty)
        #expect(await bed.engine.keptCompletionCount == 0, "both calls are over for the engine too")
    }
}
