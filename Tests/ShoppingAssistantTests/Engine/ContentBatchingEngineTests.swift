import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The batching window of content calls through the actor (B16): it costs a call alone no
/// time on the engine's clock, with or without a replay's activity monitor, and the calls of
/// one instant leave as one request whatever order their tasks reached the engine in.
@Suite(.timeLimit(.minutes(2)))
struct ContentBatchingEngineTests {
    private static func selectors(_ request: HTTPRequest?) -> [String] {
        (Fixtures.body(request)["data"] as? [[String: Any]] ?? []).compactMap { $0["selector"] as? String }
    }

    // A call alone is not held for company: it leaves, is answered and returns while the
    // engine's clock stands still, awaited straight from the test's body.
    // covers: B16, B5
    @Test func aCallAloneWaitsForNoTimeOnTheEnginesClock() async throws {
        let h = await EngineHarness()
        let choose = h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Peer.choose([("entry", "{}")])))
        let content = await h.engine.getContentBySelector(selector: "entry", pageContext: Fixtures.homePage)
        #expect(content?.data.map(\.selector) == ["entry"])
        #expect(h.clock.now == ManualClock.Instant(offset: .zero))
        #expect(Self.selectors(h.transport.request(for: choose)) == ["entry"])
        await h.verify()
    }

    // An engine made through the public initialiser has no replay monitor: the end of its
    // instant is the engine's next turn, and a call alone still leaves without the clock moving.
    // covers: B16
    @Test func withoutAReplayMonitorACallAloneLeavesAtTheEnginesNextTurn() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport(clock: clock, analytics: .answeredAutomatically)
        transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Peer.choose([("entry", "{}")])))
        let engine = AssistantEngine(
            configuration: AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section),
            transport: transport, clock: clock)
        let content = await engine.getContentBySelector(selector: "entry", pageContext: Fixtures.homePage)
        #expect(content?.data.map(\.selector) == ["entry"])
        #expect(clock.now == ManualClock.Instant(offset: .zero))
        await engine.shutdown()
    }

    // Three calls started by tasks of their own, again and again: whichever reaches the engine
    // first, one request leaves with the items in one order, and each caller gets its entry.
    // covers: B16
    @Test func theCallsOfOneInstantAreOneRequestWhicheverTaskCameFirst() async throws {
        for round in 0..<20 {
            let h = await EngineHarness()
            let choose = h.transport.expect(
                .request(.post, pathSuffix: "/choose"),
                .respond(Peer.choose([("widget", "{}"), ("entry", "{}"), ("banner", "{}")])))
            let calls = h.together {
                ["widget", "entry", "banner"].map { selector in
                    h.bed.start { await $0.getContentBySelector(selector: selector, pageContext: Fixtures.homePage) }
                }
            }
            try await h.bed.runUntilIdle()
            #expect(h.transport.requests.count == 1, "round \(round)")
            #expect(
                Self.selectors(h.transport.request(for: choose)) == ["banner", "entry", "widget"], "round \(round)")
            #expect(
                calls.map { $0.returnedValue??.data.map(\.selector) } == [["widget"], ["entry"], ["banner"]],
                "round \(round)")
        }
    }
}
