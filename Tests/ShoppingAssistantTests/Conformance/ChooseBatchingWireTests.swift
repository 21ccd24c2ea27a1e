import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One `/choose` for content calls made together (B16), on the wire, as flutter's newest
/// `test/integration/choose_wire_test.dart` pins it: the engine talks HTTP to a loopback
/// server that answers as that test's server does — each `data` item echoed as an entry of
/// its selector — and each test checks how many `POST /choose` left, what their `data` held,
/// and what each caller got.
///
/// Every test starts on a first launch, as flutter's do (its `tearDown` resets the session).
/// The cases of flutter's test about `getContentByCampaignId` and `rules` have no counterpart:
/// the engine has neither (see the Gravity conformance article).
@Suite(.timeLimit(.minutes(2)))
struct ChooseBatchingWireTests {
    /// The loopback server of flutter's wire test: it records every request and answers
    /// `/choose` with one entry per requested selector, unless a test set its answer.
    final class PeerServer: Sendable {
        private struct State {
            /// Each request's path and body, as received.
            var bodies: [(path: String, body: Data)] = []
            /// The next `/choose` answer's `data` as JSON, once; `nil`: echo the items.
            var nextData: Data?
            var status = 200
        }

        let server: LoopbackHTTPServer
        private let state = Locked(State())

        init() throws {
            server = try LoopbackHTTPServer()
            server.setResponder { [state] _ in
                .respond { request in
                    let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] ?? [:]
                    let (status, next) = state.withLock { state -> (Int, Data?) in
                        state.bodies.append((request.path, request.body))
                        defer { state.nextData = nil }
                        return (state.status, state.nextData)
                    }
                    let data = next.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [[String: Any]] }
                    guard status == 200 else { return .answer(status: status, text: "{}") }
                    let user: [String: Any] = ["uid": "server-uid", "ses": "server-ses"]
                    var answer: [String: Any] = ["user": user]
                    if request.path.hasSuffix("/choose") {
                        let items = body["data"] as? [[String: Any]] ?? []
                        answer["data"] =
                            data
                            ?? items.map { item in
                                let selector = item["selector"] as? String ?? ""
                                return ["selector": selector, "payload": [Self.payload("camp-\(selector)")]]
                            }
                    } else {
                        answer["campaigns"] = [Any]()
                    }
                    let bytes = (try? JSONSerialization.data(withJSONObject: answer)) ?? Data()
                    return .answer(status: 200, headers: ["Content-Type": "application/json"], body: bytes)
                }
            }
        }

        /// One selected campaign with no content, as flutter's test builds them.
        static func payload(_ campaignId: String) -> [String: Any] {
            [
                "campaignId": campaignId, "experienceId": "exp", "variationId": "var", "decisionId": "dec",
                "contents": [Any](),
            ]
        }

        /// The `/choose` bodies received, in order.
        var chooseBodies: [[String: Any]] {
            state.withLock { $0.bodies.filter { $0.path.hasSuffix("/choose") }.map(\.body) }.map { body in
                (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
            }
        }

        /// What each `/choose` asked for: the selectors of its `data`, in order.
        var chooseSelectors: [[String]] {
            chooseBodies.map { body in (body["data"] as? [[String: Any]] ?? []).compactMap { $0["selector"] as? String }
            }
        }

        func answerNextChoose(with data: [[String: Any]]) {
            let json = try? JSONSerialization.data(withJSONObject: data)
            state.withLock { $0.nextData = json }
        }
        func answerEverything(with status: Int) { state.withLock { $0.status = status } }
    }

    /// An engine on a first launch whose Gravity is `peer`, over the real HTTP transport.
    private static func engine(talkingTo peer: PeerServer) async -> EngineHarness {
        await EngineHarness(
            storedUID: nil,
            configuration: AssistantEngineConfiguration(
                apiKey: Fixtures.apiKey, section: Fixtures.section, gravityBaseURL: peer.server.baseURL),
            wrap: { _ in URLSessionTransport() })
    }

    /// Keeps the engine's instant open while a test makes its calls one after another, in the
    /// order it wants, as an app's calls made together: no content call leaves before `end()`.
    /// (flutter's test waits for `debugPendingChooseRequests` the same way.)
    struct OneInstant {
        let h: EngineHarness

        init(_ h: EngineHarness) {
            self.h = h
            h.activity.begin()  // one unit held: the instant cannot end
        }

        /// Starts `body` and returns once it waits for the engine or is done.
        @discardableResult
        func start<Value: Sendable>(_ body: @escaping @Sendable (AssistantEngine) async -> Value) async
            -> EngineTestBed.Call<Value>
        {
            let call = h.bed.start(body)
            await h.activity.waitUntil(busyAtMost: 1)
            return call
        }

        /// Starts `getContentBySelector(selector)` on the home page.
        @discardableResult
        func content(_ selector: String) async -> EngineTestBed.Call<ContentResponse?> {
            await start { await $0.getContentBySelector(selector: selector, pageContext: Fixtures.homePage) }
        }

        /// The instant ends: what waited leaves; returns once the engine is idle.
        func end() async throws {
            h.activity.end()
            try await h.bed.runUntilIdle()
        }
    }

    /// The app asks for SKUs only from now on (`setOptions`): the engine's content settings.
    private static let askForSKUsOnly: @Sendable (AssistantEngine) async -> Bool = { engine in
        await engine.setOptions(GravityOptions(), contentSettings: GravityContentSettings(skusOnly: true))
        return true
    }

    private static let resetIdentity: @Sendable (AssistantEngine) async -> Bool = { engine in
        await engine.resetIdentity()
        return true
    }

    /// Calls for `selectors` made together on an engine talking to `peer`, run until idle.
    private static func together(_ selectors: [String], peer: PeerServer) async throws -> [ContentResponse??] {
        let h = await engine(talkingTo: peer)
        let calls = h.together { selectors.map { content(h, $0) } }
        try await h.bed.runUntilIdle()
        return calls.map(\.returnedValue)
    }

    @discardableResult
    private static func content(_ h: EngineHarness, _ selector: String, page: PageContext = Fixtures.homePage)
        -> EngineTestBed.Call<ContentResponse?>
    {
        h.bed.start { await $0.getContentBySelector(selector: selector, pageContext: page) }
    }

    private static func selectors(_ response: ContentResponse??) -> [String?]? {
        response??.data.map(\.selector)
    }

    // Mirrors "a single call produces one POST /choose with the unchanged wire shape".
    // covers: B16, B5
    @Test func aCallAloneIsOnePostOfTheShapeItAlwaysHad() async throws {
        let peer = try PeerServer()
        let h = await Self.engine(talkingTo: peer)
        let single = Self.content(h, "single")
        try await h.bed.runUntilIdle()
        #expect(peer.chooseSelectors == [["single"]])
        let body = try #require(peer.chooseBodies.first)
        #expect(Set(body.keys) == ["sec", "data", "device", "user", "ctx", "options"])
        let item = try #require((body["data"] as? [[String: Any]])?.first)
        #expect(Set(item.keys) == ["selector", "option"], "no rules, no campaignId")
        #expect(Self.selectors(single.returnedValue) == ["single"])
    }

    // Mirrors "two different selectors sharing an envelope merge into ONE POST with a 2-item
    // data array"; an entry of a selector nobody asked for reaches nobody (wire.md).
    // covers: B16, B5
    @Test func twoSelectorsOfOneEnvelopeLeaveAsOnePostAndEachCallerGetsItsOwn() async throws {
        let peer = try PeerServer()
        let answers = try await Self.together(["merge-1", "merge-2"], peer: peer)
        #expect(peer.chooseSelectors == [["merge-1", "merge-2"]])
        #expect(answers.map(Self.selectors) == [["merge-1"], ["merge-2"]])
    }

    // Mirrors "identical concurrent calls are deduplicated into one POST and share one response".
    // covers: B16
    @Test func identicalCallsShareOnePostAndOneAnswer() async throws {
        let peer = try PeerServer()
        let answers = try await Self.together(["dup", "dup"], peer: peer)
        #expect(peer.chooseSelectors == [["dup"]])
        #expect(answers[0] != nil && answers[0] == answers[1])
    }

    // Mirrors "same selector with different contentSettings is NOT deduplicated and NOT merged"
    // and "colliding identifiers on a cold session adopt the first wave session". The engine's
    // content settings are its own (`setOptions`), so the app changes them between two calls of
    // one instant: the answer names only the selector, so each goes in a POST of its own, and
    // the second carries the session the first opened (B8).
    // covers: B16, B8
    @Test func oneSelectorWithTwoOptionsIsTwoPostsAndTheSecondCarriesTheFirstsSession() async throws {
        let peer = try PeerServer()
        let instant = OneInstant(await Self.engine(talkingTo: peer))
        let first = await instant.content("wave")
        await instant.start(Self.askForSKUsOnly)
        let second = await instant.content("wave")
        try await instant.end()
        #expect(peer.chooseSelectors == [["wave"], ["wave"]])
        let options = peer.chooseBodies.map { (($0["data"] as? [[String: Any]])?.first?["option"] as? [String: Any]) }
        #expect(options.map { $0?["skusOnly"] as? Bool } == [false, true])
        #expect((peer.chooseBodies.last?["user"] as? [String: Any])?["ses"] as? String == "server-ses")
        #expect(Self.selectors(first.returnedValue) == ["wave"] && Self.selectors(second.returnedValue) == ["wave"])
    }

    // Mirrors "colliding identifiers still merge with other selectors inside each wave".
    // covers: B16
    @Test func collidingSelectorsStillMergeWithTheOtherSelectorsOfTheirWave() async throws {
        let peer = try PeerServer()
        let instant = OneInstant(await Self.engine(talkingTo: peer))
        var calls: [EngineTestBed.Call<ContentResponse?>] = []
        for (index, selector) in ["wave-a", "wave-b", "wave-a", "wave-b"].enumerated() {
            if index == 2 {
                await instant.start(Self.askForSKUsOnly)
            }
            calls.append(
                await instant.content(selector))
        }
        try await instant.end()
        #expect(peer.chooseSelectors == [["wave-a", "wave-b"], ["wave-a", "wave-b"]])
        #expect(calls.map { Self.selectors($0.returnedValue) } == [["wave-a"], ["wave-b"], ["wave-a"], ["wave-b"]])
    }

    // Mirrors "a merged request missing from the response resolves to an empty ContentResponse".
    // covers: B16
    @Test func aCallWhoseSelectorTheAnswerLacksGetsAnEmptyAnswer() async throws {
        let peer = try PeerServer()
        peer.answerNextChoose(with: [["selector": "part-1", "payload": [PeerServer.payload("camp-part-1")]]])
        let answers = try await Self.together(["part-1", "part-2"], peer: peer)
        #expect(peer.chooseSelectors == [["part-1", "part-2"]])
        #expect(Self.selectors(answers[0]) == ["part-1"])
        #expect(answers[1] == .some(ContentResponse(data: [])), "empty, not nil: the call succeeded")
    }

    // Mirrors "a merged POST carries each item's own contentSettings and rules" (the engine has
    // no rules): the option each call was made with travels in its own item.
    // covers: B16
    @Test func aMergedPostCarriesEachItemsOwnOption() async throws {
        let peer = try PeerServer()
        let instant = OneInstant(await Self.engine(talkingTo: peer))
        await instant.content("opt-default")
        await instant.start(Self.askForSKUsOnly)
        await instant.content("opt-skus")
        try await instant.end()
        let data = try #require(peer.chooseBodies.first?["data"] as? [[String: Any]])
        #expect(peer.chooseBodies.count == 1)
        #expect(data.map { $0["selector"] as? String } == ["opt-default", "opt-skus"])
        #expect(data.map { ($0["option"] as? [String: Any])?["skusOnly"] as? Bool } == [false, true])
    }

    // Mirrors "resetSession inside the batch window is not undone by the flush": the call leaves
    // as the identity it was made under, its caller gets its answer, and that answer's user
    // does not bring the logged-out visitor back (B9).
    // covers: B16, B9, B3
    @Test func anIdentityResetInsideTheInstantIsNotUndoneByTheCallMadeBeforeIt() async throws {
        let peer = try PeerServer()
        let instant = OneInstant(await Self.engine(talkingTo: peer))
        let call = await instant.content("reset-race")
        await instant.start(Self.resetIdentity)
        try await instant.end()
        #expect(Self.selectors(call.returnedValue) == ["reset-race"])
        #expect(await instant.h.engine.canonicalUserId == nil)
        #expect(instant.h.identityStore.loadUid() == nil)
    }

    // Mirrors "resetSession between the user snapshot and the flush does not resurrect a warm
    // session".
    // covers: B16, B9, B3
    @Test func aResetInsideTheInstantDoesNotResurrectAWarmSession() async throws {
        let peer = try PeerServer()
        let h = await Self.engine(talkingTo: peer)
        _ = try await h.bed.run { await $0.getContentBySelector(selector: "warm-up", pageContext: Fixtures.homePage) }
        #expect(await h.engine.canonicalUserId == "server-uid")
        let instant = OneInstant(h)
        let call = await instant.content("resurrect")
        await instant.start(Self.resetIdentity)
        try await instant.end()
        #expect(Self.selectors(call.returnedValue) == ["resurrect"])
        #expect((peer.chooseBodies.last?["user"] as? [String: Any])?["uid"] as? String == "server-uid", "as made")
        #expect(await h.engine.canonicalUserId == nil)
    }

    // Mirrors "identical requests straddling a reset are not deduplicated" and "different users
    // produce separate POSTs": calls made on either side of an identity change never share a
    // request, and the second, the new identity's, brings its session.
    // covers: B16, B3, B8
    @Test func identicalCallsOnEitherSideOfAnIdentityChangeAreTwoPosts() async throws {
        let peer = try PeerServer()
        let instant = OneInstant(await Self.engine(talkingTo: peer))
        await instant.content("straddle")
        await instant.start { engine -> Bool in
            await engine.setUser(userId: "alice", sessionId: "ses-a")
            return true
        }
        await instant.content("straddle")
        try await instant.end()
        #expect(peer.chooseSelectors == [["straddle"], ["straddle"]])
        let users = peer.chooseBodies.compactMap { $0["user"] as? [String: String] }
        #expect(users.count == 2 && users.contains([:]) && users.contains(["custom": "alice", "ses": "ses-a"]))
        #expect(await instant.h.engine.canonicalUserId == "server-uid", "the new identity's answer is adopted")
    }

    // Mirrors "a second envelope group on a cold session parks behind the first": two pages'
    // calls of one instant are two POSTs; on a first launch the second waits for the first's
    // answer and carries its session (B8).
    // covers: B16, B8
    @Test func aSecondPagesCallsOnAFirstLaunchWaitForTheFirstsSession() async throws {
        let peer = try PeerServer()
        let h = await Self.engine(talkingTo: peer)
        h.together {
            Self.content(h, "park-a")
            Self.content(h, "park-b", page: PageContext(type: .other, location: "/park-other"))
        }
        try await h.bed.runUntilIdle()
        #expect(peer.chooseBodies.count == 2)
        #expect((peer.chooseBodies[0]["user"] as? [String: Any])?.isEmpty == true)
        #expect((peer.chooseBodies[1]["user"] as? [String: Any])?["ses"] as? String == "server-ses")
    }

    // Mirrors "a failed merged POST propagates to every caller without unhandled zone errors":
    // each caller gets `nil`, as from a failed call of its own (B5), once the retries within
    // the deadline are spent (DL1).
    // covers: B16, B5, DL1
    @Test func aFailedMergedPostFailsEveryCaller() async throws {
        let peer = try PeerServer()
        peer.answerEverything(with: 500)
        let h = await Self.engine(talkingTo: peer)
        let (first, second) = h.together { (Self.content(h, "fail-1"), Self.content(h, "fail-2")) }
        for _ in 0..<100 {
            try await h.bed.runUntilIdle()
            if first.returnedValue != nil, second.returnedValue != nil { break }
            guard h.clock.advanceToNextDeadline() else { break }
        }
        #expect(first.returnedValue == .some(nil) && second.returnedValue == .some(nil), "both returned nil")
        #expect(Set(peer.chooseSelectors) == [["fail-1", "fail-2"]], "every attempt is the merged one")
        #expect(h.logs.messages.filter { $0.contains("POST /choose") && $0.contains("failed") }.count == 2)
    }
}
