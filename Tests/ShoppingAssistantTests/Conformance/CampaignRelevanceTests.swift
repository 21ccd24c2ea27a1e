import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// In-app campaigns that are still relevant (B15), through the engine on its manual clock, as
/// flutter's newest `stale_gate_wire_test` and `presentation_relevance_wire_test` pin them: a
/// campaign is for the moment and the user its answer came for.
@Suite(.timeLimit(.minutes(2)))
struct CampaignRelevanceTests {
    /// The campaigns the host was handed, in order.
    final class Shown: Sendable {
        private let ids = Locked<[String]>([])
        var all: [String] { ids.withLock { $0 } }
        func add(_ campaign: InAppCampaign) { ids.withLock { $0.append(campaign.campaignId) } }
    }

    static func showing(_ h: EngineHarness) async -> Shown {
        let shown = Shown()
        await h.engine.setInAppCampaignHandler { shown.add($0) }
        return shown
    }

    static func view(_ h: EngineHarness) -> EngineTestBed.Call<Bool> {
        h.bed.start { engine -> Bool in
            await engine.trackView(pageContext: Fixtures.homePage)
            return true
        }
    }

    // Mirrors stale_gate_wire_test ("stale /event answer is not followed by …"): the answer of
    // a triggerEvent that comes after its call's deadline shows nothing; its user still counts.
    // (The /visit case is `GravitySessionAndDeadlineTests.aGravityCallEndsAtItsOwnDeadline…`.)
    // covers: B15, B13, B9
    @Test func anEventsAnswerAfterItsDeadlineShowsNoCampaign() async throws {
        let h = await EngineHarness(wrap: { CancellationIgnoringTransport(inner: $0) })
        let shown = await Self.showing(h)
        let event = h.transport.expect(.request(.post, pathSuffix: "/event"), .deferred)
        let call = h.bed.start { engine -> Bool in
            await engine.triggerEvent(
                events: [CustomEvent(type: "custom-v1", name: "x")], pageContext: Fixtures.homePage)
            return true
        }
        try await h.bed.runUntilIdle()
        #expect(call.returnedValue == true, "kept in the delivery store: the call has returned (DL5)")
        h.clock.advance(by: .seconds(10))
        try await h.bed.runUntilIdle()
        h.transport.complete(event, with: Fixtures.eventResponse(uid: "u-late", campaigns: [["campaignId": "stale"]]))
        try await h.bed.runUntilIdle()
        #expect(shown.all.isEmpty)
        #expect(h.logs.messages.contains("in-app campaigns stale dropped: the answer came after its call's deadline"))
        #expect(await h.engine.canonicalUserId == "u-late")
    }

    // A campaign's delay begins when its turn comes. Sent at 0 and answered at 4 s: A waits
    // its delay, then B its 1 s. With A's delay 6 s, B's ends at 11 s — the 10 s deadline plus
    // its delay — and B is shown; with A's a millisecond longer, B is dropped, and the call
    // returns all the same.
    // covers: B15
    @Test(arguments: [(6_000, true), (6_001, false)])
    func aDelayedCampaignIsShownOnlyUntilItsCallsDeadlinePlusItsDelay(first: Int, secondShown: Bool) async throws {
        let h = await EngineHarness()
        let shown = await Self.showing(h)
        let visit = h.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
        let call = Self.view(h)
        try await h.bed.runUntilIdle()
        h.clock.advance(by: .seconds(4))
        try await h.bed.runUntilIdle()
        h.transport.complete(
            visit,
            with: Fixtures.eventResponse(campaigns: [
                ["campaignId": "A", "delayTime": first], ["campaignId": "B", "delayTime": 1_000],
            ]))
        try await h.bed.runUntilIdle()
        h.clock.advance(by: .milliseconds(first))
        try await h.bed.runUntilIdle()
        #expect(shown.all == ["A"])
        h.clock.advance(by: .seconds(1))
        try await h.bed.runUntilIdle()
        #expect(shown.all == (secondShown ? ["A", "B"] : ["A"]))
        #expect(call.returnedValue == true)
        #expect(
            h.logs.messages.contains(
                "in-app campaign B dropped: its delay ended after its call's deadline plus the delay") == !secondShown)
    }

    /// An identity change of each kind, and its two non-changes.
    enum Change: String, CaseIterable, CustomTestStringConvertible {
        case reset, restoredUID, sameUIDRestored

        var testDescription: String { rawValue }
        var isIdentityChange: Bool { self != .sameUIDRestored }

        func apply(_ engine: AssistantEngine) async {
            switch self {
            case .reset: await engine.resetIdentity()
            case .restoredUID: try? await engine.restoreUserId("kept-uid")
            case .sameUIDRestored: try? await engine.restoreUserId("u-8f3c")
            }
        }
    }

    // Mirrors presentation_relevance_wire_test ("drops it when the user is reset during the
    // campaign delay"), for a reset and a restored uid (another user set is
    // `GravitySessionAndDeadlineTests.aCampaignOfTheIdentityThatWasIsNeverShownToTheNextOne`):
    // a campaign waiting for its delay when the identity changes is never shown; restoring
    // the uid the engine has is no change.
    // covers: B15, B14
    @Test(arguments: Change.allCases)
    func aCampaignWaitingForItsDelayIsDroppedWhenTheIdentityChanges(change: Change) async throws {
        let h = await EngineHarness()
        let shown = await Self.showing(h)
        h.transport.expect(
            .request(.post, pathSuffix: "/visit"),
            .respond(Fixtures.eventResponse(campaigns: [["campaignId": "delayed", "delayTime": 400]])))
        let call = Self.view(h)
        try await h.bed.runUntilIdle()
        _ = try await h.bed.run { engine -> Bool in
            await change.apply(engine)
            return true
        }
        h.clock.advance(by: .milliseconds(400))
        try await h.bed.runUntilIdle()
        #expect(shown.all == (change.isIdentityChange ? [] : ["delayed"]))
        #expect(call.returnedValue == true)
        #expect(h.clock.sleeperCount == 0, "no delay left waiting")
    }

    // Mirrors presentation_relevance_wire_test ("drops it when another user is set while
    // loading"), for a reset and a restored uid: the answer on its way when the identity
    // changes shows nothing.
    // covers: B15, B14, B9
    @Test(arguments: Change.allCases)
    func aCampaignWhoseAnswerWasOnItsWayIsDroppedWhenTheIdentityChanges(change: Change) async throws {
        let h = await EngineHarness()
        let shown = await Self.showing(h)
        let visit = h.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
        let call = Self.view(h)
        try await h.bed.runUntilIdle()
        _ = try await h.bed.run { engine -> Bool in
            await change.apply(engine)
            return true
        }
        h.transport.complete(visit, with: Fixtures.eventResponse(campaigns: [["campaignId": "on-its-way"]]))
        try await h.bed.runUntilIdle()
        #expect(shown.all == (change.isIdentityChange ? [] : ["on-its-way"]))
        #expect(call.returnedValue == true)
    }
}
