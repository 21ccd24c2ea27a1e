import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// Gravity as the fixed vendor SDKs speak it, through the public API: the first-launch session
/// gate (B8, ports of flutter's `choose_wire_test` gate cases), every answer's `user` (B9), the
/// deadlines of Gravity calls and tracking requests (B13), in-app campaigns by priority and
/// delay (iOS `handleCampaignIdsResponse`), and a payload of the shape the service really sends.
@Suite(.timeLimit(.minutes(2)))
struct GravitySessionAndDeadlineTests {
    static let session = ["uid": "server-uid", "ses": "server-ses"]

    static func user(_ request: HTTPRequest?) -> [String: String]? {
        Fixtures.body(request)["user"] as? [String: String]
    }

    /// A `chat_dialog_open` as the tracker queues it, for `user` on the home page.
    static func dialogOpen(for user: GravityUser) -> TrackingJob {
        .event(
            GravityCustomEvent(type: "chat_dialog_open", name: "chat dialog open", customProps: [:]),
            envelope: GravityClient.Envelope(user: user, context: Fixtures.homePage, options: GravityOptions()),
            identityEpoch: 1)
    }

    // MARK: - B8, the session gate

    // Mirrors flutter choose_wire_test "colliding identifiers on a cold session adopt the first
    // wave session": the second request waits for the first answer and carries its session,
    // instead of going out anonymously and opening a second server-side profile.
    // covers: B8
    @Test func onAColdSessionTheSecondRequestCarriesTheFirstAnswersSession() async throws {
        let h = await EngineHarness(storedUID: nil)
        let first = h.transport.expect(.request(.post, pathSuffix: "/choose"), .deferred)
        let second = h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Peer.choose([("cold", "{}")], uid: "server-uid")))
        let a = h.bed.start { await $0.getContentBySelector(selector: "cold", pageContext: Fixtures.homePage) }
        let b = h.bed.start { await $0.getContentBySelector(selector: "cold", pageContext: Fixtures.productPage) }
        try await h.bed.runUntilIdle()
        #expect(h.transport.requests.count == 1, "the second request waits at the gate")
        #expect(Self.user(h.transport.request(for: first)) == [:], "a first launch sends user {}")
        h.transport.complete(first, with: Peer.choose([("cold", "{}")], uid: "server-uid", ses: "server-ses"))
        try await h.bed.runUntilIdle()
        #expect(Self.user(h.transport.request(for: second)) == Self.session)
        #expect(a.returnedValue != nil && b.returnedValue != nil)
        #expect(await h.engine.canonicalUserId == "server-uid", "one profile: the uid never flips")
    }

    // Mirrors flutter choose_wire_test "a visit parked behind a choose gate re-snapshots after a
    // mid-flight reset": the parked visit goes out as the new identity, and its own answer is
    // the fresh session; the old first answer changes nothing. As there, the visit is made once
    // the `/choose` is on the wire (its call leaves at the end of its instant, B16).
    // covers: B8, B3, B9
    @Test func aRequestParkedAtTheGateGoesAsTheNewIdentityAfterAReset() async throws {
        let h = await EngineHarness(storedUID: nil)
        let choose = h.transport.expect(.request(.post, pathSuffix: "/choose"), .deferred)
        let visit = h.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "fresh-uid")))
        h.bed.start { await $0.getContentBySelector(selector: "gate-owner", pageContext: Fixtures.homePage) }
        try await h.bed.runUntilIdle()
        h.bed.start { engine -> Bool in
            await engine.trackView(pageContext: Fixtures.homePage)
            return true
        }
        try await h.bed.runUntilIdle()
        #expect(h.transport.requests.count == 1)
        _ = try await h.bed.run { engine -> Bool in
            await engine.resetIdentity()
            return true
        }
        try await h.bed.runUntilIdle()
        #expect(Self.user(h.transport.request(for: visit)) == [:], "the visit went out as the new visitor")
        h.transport.complete(choose, with: Peer.choose([("gate-owner", "{}")], uid: "stale-uid"))
        try await h.bed.runUntilIdle()
        #expect(await h.engine.canonicalUserId == "fresh-uid")
        #expect(h.identityStore.loadUid() == "fresh-uid")
    }

    // Mirrors flutter choose_wire_test "a failed first visit does not produce an unhandled zone
    // error": the failed first request releases the gate, and the next one goes alone.
    // covers: B8
    @Test func aFailedFirstVisitReleasesTheGate() async throws {
        let h = await EngineHarness(storedUID: nil)
        // A 400 is final: not retried (DL1).
        h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(.text(400, "{}")))
        let next = h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Peer.choose([("banner", "{}")], uid: "server-uid")))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        #expect(h.logs.messages.contains { $0.contains("POST /visit (trackView) failed") })
        let content = await h.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage)
        #expect(content != nil)
        #expect(Self.user(h.transport.request(for: next)) == [:])
        await h.verify()
    }

    // MARK: - B9, every answer's user

    // iOS GravityRepository adopts the `user` of every answer; a lifecycle event's answer is one
    // (the tracker sends them). An answer to an event of an ended identity changes nothing.
    // covers: B9, B3
    @Test func aLifecycleEventsAnswerBringsTheUidLikeAnyAnswer() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse(uid: "u-renewed")))
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)  // chat_dialog_open
        await h.engine.flushTracking()
        await h.settle()
        #expect(await h.engine.canonicalUserId == "u-renewed")
        #expect(h.identityStore.loadUid() == "u-renewed")

        // The close is the old user's, sent after the reset: its answer is of an older identity.
        h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse(uid: "u-stale")))
        await h.engine.resetIdentity()
        await h.engine.flushTracking()
        await h.settle()
        #expect(await h.engine.canonicalUserId == nil)
        #expect(h.identityStore.loadUid() == nil)
        await h.verify()
    }

    // MARK: - B13, deadlines

    // covers: B13, B5, B15
    @Test func aGravityCallEndsAtItsOwnDeadlineAndALateAnswerOnlyBringsItsUser() async throws {
        // A transport that goes on after being cancelled, as some do: its answer still comes.
        let h = await EngineHarness(wrap: { CancellationIgnoringTransport(inner: $0) })
        let visit = h.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
        let view = h.bed.start { engine -> Bool in
            await engine.trackView(pageContext: Fixtures.homePage)
            return true
        }
        try await h.bed.runUntilIdle()
        h.clock.advance(by: .milliseconds(9_999))
        try await h.bed.runUntilIdle()
        #expect(view.returnedValue == nil, "the deadline is 10 s")
        h.clock.advance(by: .milliseconds(1))
        try await h.bed.runUntilIdle()
        #expect(view.returnedValue == true)
        #expect(h.logs.messages.contains { $0.contains("POST /visit (trackView) failed: timeout") })
        let shown = Locked<[String]>([])
        await h.engine.setInAppCampaignHandler { campaign in shown.withLock { $0.append(campaign.campaignId) } }
        // A transport that answers anyway, with a campaign: too late to be shown (B15).
        h.transport.complete(visit, with: Fixtures.eventResponse(uid: "u-late", campaigns: [["campaignId": "stale"]]))
        try await h.bed.runUntilIdle()
        #expect(await h.engine.canonicalUserId == "u-late", "B9: its user still counts")
        #expect(shown.withLock { $0 }.isEmpty, "B15: a campaign that came after its call's deadline is not shown")
    }

    // covers: B13, B5
    @Test func theGravityDeadlineIsConfigurableAndContentReturnsNilAtIt() async throws {
        let configuration = AssistantEngineConfiguration(
            apiKey: Fixtures.apiKey, section: Fixtures.section, gravityTimeout: .seconds(3))
        let h = await EngineHarness(configuration: configuration)
        h.transport.expect(.request(.post, pathSuffix: "/choose"), .deferred)
        let content = h.bed.start {
            await $0.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage)?.data.count ?? -1
        }
        try await h.bed.runUntilIdle()
        h.clock.advance(by: .seconds(3))
        try await h.bed.runUntilIdle()
        #expect(content.returnedValue == -1, "nil at 3 s")
    }

    // A tracking host that never answers holds up nothing else: the other URLs and the lifecycle
    // event go meanwhile (their own routes), and it ends at its own deadline as a timeout that
    // is kept, not lost: the queue pauses 5 s ±20 % and then sends it again (DL2, DL3). The
    // log records each attempt as it finishes.
    // covers: B13, AN9, DL2, DL3
    @Test func aTrackingHostThatNeverAnswersDelaysNothingElse() async throws {
        let h = await EngineHarness()
        let stalled = h.transport.expect(.get("https://stalled.example/i"), .deferred)
        h.transport.expect(.get("https://t.example/a"), .respond(.text(204, "")))
        h.transport.expect(.get("https://t.example/b"), .respond(.text(204, "")))
        h.expectEvents(1)
        let user = GravityUser(uid: "u-8f3c")
        await h.engine.track([
            .url("https://stalled.example/i", user: user), .url("https://t.example/a", user: user),
            .url("https://t.example/b", user: user), Self.dialogOpen(for: user),
        ])
        try await h.bed.runUntilIdle()
        let sent = h.transport.requests.map(\.url.absoluteString)
        #expect(sent.contains("https://t.example/a") && sent.contains("https://t.example/b"))
        #expect(sent.contains { $0.hasSuffix("/event") }, "the lifecycle event went too")
        #expect(h.transport.request(for: stalled) != nil)
        var log = await h.engine.trackingLog
        #expect(Set(log.map(\.name)) == ["https://t.example/a", "https://t.example/b", "chat_dialog_open"])
        #expect(log.allSatisfy { $0.failure == nil }, "delivered while the host stalled")
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10)], "only the stalled send's own deadline")

        h.clock.advance(by: .seconds(10) - .milliseconds(1))
        try await h.bed.runUntilIdle()
        #expect(await h.engine.trackingLog.count == 3, "not over before its deadline")
        h.clock.advance(by: .milliseconds(1))
        try await h.bed.runUntilIdle()
        log = await h.engine.trackingLog
        #expect(log.count == 4)
        #expect(log.last?.name == "https://stalled.example/i" && log.last?.failure == "timeout")
        #expect(
            h.logs.messages.contains(
                "delivery: tracking https://stalled.example/i not delivered yet (timed out); kept for later"))
        #expect(await h.engine.deliveryQueue.map(\.label) == ["https://stalled.example/i"], "kept (DL2)")
        await h.engine.flushTracking()  // its first attempt is over: the flush does not wait for the drain
        let pause = try #require(h.clock.pendingDeadlines.map(\.offset).first, "the queue's pause")
        #expect(h.clock.pendingDeadlines.count == 1, "the deadline ended with its send; only the pause sleeps")
        #expect(pause >= .seconds(14) && pause <= .seconds(16), "5 s ±20 % after the failure: \(pause)")

        let resent = h.transport.expect(.get("https://stalled.example/i"), .respond(.text(204, "")))
        h.clock.advance(to: ManualClock.Instant(offset: pause))
        try await h.bed.runUntilIdle()
        #expect(h.transport.request(for: resent) != nil, "sent again when the pause ended")
        log = await h.engine.trackingLog
        #expect(log.last?.name == "https://stalled.example/i" && log.last?.failure == nil)
        #expect(log.last?.deferred == true)
        #expect(await h.engine.pendingDeliveries == 0)
        #expect(h.clock.sleeperCount == 0, "nothing sleeps once the queue is empty")
        await h.verify()
    }

    // A burst raised while a send waits for a host that never answers: that send takes one of
    // the tracking route's places, not the route, so the burst goes at once, and the stalled
    // request still ends at its own deadline, kept for later.
    // covers: B13, DL2
    @Test func aBurstQueuedWhileAHostStallsGoesAtOnce() async throws {
        let h = await EngineHarness()
        let stalled = h.transport.expect(.get("https://stalled.example/i"), .deferred)
        let user = GravityUser(uid: "u-8f3c")
        await h.engine.track([.url("https://stalled.example/i", user: user)])
        try await h.bed.runUntilIdle()
        #expect(h.transport.request(for: stalled) != nil, "the stalled request is under way")
        let burst = (0..<40).map { "https://t.example/\($0)" }
        for url in burst { h.transport.expect(.get(url), .respond(.text(204, ""))) }
        h.expectEvents(1)
        // One at a time, as impressions come.
        for url in burst { await h.engine.track([.url(TrackingURL(url), user: user)]) }
        await h.engine.track([Self.dialogOpen(for: user)])
        try await h.bed.runUntilIdle()
        let sent = Set(h.transport.requests.map(\.url.absoluteString))
        #expect(burst.allSatisfy(sent.contains), "every URL of the burst went while the host stalled")
        #expect(sent.contains { $0.hasSuffix("/event") }, "and the lifecycle event")
        #expect(h.clock.now.offset == .zero, "without any time passing")
        var log = await h.engine.trackingLog
        #expect(Set(log.map(\.name)) == Set(burst + ["chat_dialog_open"]) && log.count == 41)
        #expect(log.allSatisfy { $0.failure == nil })
        h.clock.advance(by: .seconds(10))
        try await h.bed.runUntilIdle()
        log = await h.engine.trackingLog
        #expect(log.count == 42)
        #expect(log.last?.name == "https://stalled.example/i" && log.last?.failure == "timeout", "logged as it ended")
        #expect(await h.engine.deliveryQueue.map(\.label) == ["https://stalled.example/i"], "kept for later")
        await h.engine.flushTracking()
        await h.verify()
    }

    /// A lifecycle event with a long deadline (30 s) is under way when a tracking URL with a
    /// short one (5 s) starts at 1 s: each send keeps its own deadline on the engine's clock, so
    /// the URL ends at 6 s exactly, while the event is still on the wire (B13). The log records
    /// them as they end: the URL first. The URL timed out, a network failure, so the event's
    /// success ends the queue's pause at once and the URL goes again (DL3).
    // covers: B13, DL3
    @Test func aShortTrackingDeadlineIsKeptBehindALongerLifecycleEventDeadline() async throws {
        var configuration = AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section)
        configuration.gravityTimeout = .seconds(30)
        configuration.trackingTimeout = .seconds(5)
        let h = await EngineHarness(configuration: configuration)
        let event = h.transport.expect(.request(.post, pathSuffix: "/event"), .deferred)
        h.transport.expect(.get("https://stalled.example/i"), .deferred)
        let user = GravityUser(uid: "u-8f3c")
        await h.engine.track([Self.dialogOpen(for: user)])
        try await h.bed.runUntilIdle()
        #expect(h.transport.request(for: event) != nil, "the event is under way")
        h.clock.advance(by: .seconds(1))
        await h.engine.track([.url("https://stalled.example/i", user: user)])
        try await h.bed.runUntilIdle()
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(6)], "one watcher, towards the first deadline")
        h.clock.advance(by: .seconds(5) - .milliseconds(1))
        try await h.bed.runUntilIdle()
        #expect(await h.engine.trackingLog.isEmpty)
        h.clock.advance(by: .milliseconds(1))  // at 6 s: the URL's deadline
        try await h.bed.runUntilIdle()
        var log = await h.engine.trackingLog
        #expect(log.map(\.name) == ["https://stalled.example/i"])
        #expect(log.map(\.failure) == ["timeout"], "the URL ended at its own deadline, the event still on the wire")
        let resent = h.transport.expect(.get("https://stalled.example/i"), .respond(.text(204, "")))
        h.transport.complete(event, with: Fixtures.eventResponse())
        try await h.bed.runUntilIdle()
        #expect(h.clock.now.offset == .seconds(6), "no pause waited for")
        #expect(h.transport.request(for: resent) != nil)
        log = await h.engine.trackingLog
        #expect(log.map(\.name) == ["https://stalled.example/i", "chat_dialog_open", "https://stalled.example/i"])
        #expect(log.map(\.failure) == ["timeout", nil, nil])
        #expect(log.map(\.deferred) == [false, false, true])
        await h.verify()
    }

    /// A tracking timeout of zero ends each tracking URL at its start, as timed out, and the
    /// deadline watcher does not spin on the tracking queue every engine shares (B13).
    // covers: B13
    @Test func aZeroTrackingTimeoutEndsEachURLAtOnceWithoutStallingTheQueue() async throws {
        var configuration = AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section)
        configuration.trackingTimeout = .zero
        let h = await EngineHarness(configuration: configuration)
        h.transport.expect(.get("https://stalled.example/i"), .deferred)
        await h.engine.track([.url("https://stalled.example/i", user: GravityUser(uid: "u-8f3c"))])
        try await h.bed.runUntilIdle()
        let log = await h.engine.trackingLog
        #expect(log.map(\.failure) == ["timeout"])
        #expect(h.clock.now.offset == .zero, "without any time passing")
        // Its deadline is its start: the watcher may end it on the wire or before it gets there,
        // whichever task runs first; either way it is asked for once at most.
        await h.engine.flushTracking()
        #expect(h.transport.unexpectedRequests.isEmpty)
        #expect(h.transport.requests.filter { $0.url.host == "stalled.example" }.count <= 1)
    }

    /// Each tracking send ends at its own deadline on the engine's clock, and one sleeper
    /// watches them all: on the system's clocks the runtime keeps a sleeping task until its
    /// time even once cancelled, so a sleeper per send would keep one for every request of the
    /// last ten seconds. A URL answered at 2 s leaves the watcher asleep towards its old
    /// deadline (10 s); the next URL, sent at 3 s, adds no sleeper, and ends at 13 s exactly
    /// (B13).
    // covers: B13
    @Test func eachTrackingSendEndsAtItsOwnDeadlineAndOneSleeperWatchesThemAll() async throws {
        let h = await EngineHarness(letsTickerRunOut: true)
        let first = h.transport.expect(.get("https://t.example/a"), .deferred)
        h.transport.expect(.get("https://stalled.example/i"), .deferred)
        let user = GravityUser(uid: "u-8f3c")
        await h.engine.track([.url("https://t.example/a", user: user)])
        try await h.bed.runUntilIdle()
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10)], "the send's deadline")
        h.clock.advance(by: .seconds(2))
        h.transport.complete(first, with: .text(204, ""))
        try await h.bed.runUntilIdle()
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10)], "the watcher sleeps on")

        h.clock.advance(by: .seconds(1))  // at 3 s: the next URL, its deadline at 13 s
        await h.engine.track([.url("https://stalled.example/i", user: user)])
        try await h.bed.runUntilIdle()
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10)], "no sleeper of its own")
        h.clock.advance(by: .seconds(7))  // at 10 s: the watcher wakes, nothing due
        try await h.bed.runUntilIdle()
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(13)], "and sleeps on to the next deadline")
        h.clock.advance(by: .seconds(3) - .milliseconds(1))
        try await h.bed.runUntilIdle()
        #expect(await h.engine.trackingLog.map(\.failure) == [nil], "not over before 13 s")
        h.clock.advance(by: .milliseconds(1))  // at 13 s
        try await h.bed.runUntilIdle()
        let log = await h.engine.trackingLog
        #expect(log.map(\.failure) == [nil, "timeout"], "the stalled URL ended at its deadline")
        let left = h.clock.pendingDeadlines.map(\.offset)
        #expect(left.count == 1 && left.allSatisfy { $0 > .seconds(13) }, "only the queue's pause: \(left)")
        await h.verify()
    }

    // MARK: - In-app campaigns: priority and delay

    // Mirrors iOS GravitySDK.handleCampaignIdsResponse: highest priority first (none counts as
    // 0), one at a time, each after its delayTime; one whose delay is under way when a lock is
    // taken is dropped (B6).
    // covers: B6
    @Test func campaignsAreShownByPriorityEachAfterItsDelay() async throws {
        let h = await EngineHarness()
        let shown = Locked<[(String, Duration)]>([])
        let clock = h.clock
        await h.engine.setInAppCampaignHandler { campaign in
            shown.withLock { $0.append((campaign.campaignId, clock.now.offset)) }
        }
        h.transport.expect(
            .request(.post, pathSuffix: "/visit"),
            .respond(
                Fixtures.eventResponse(campaigns: [
                    ["campaignId": "low", "priority": 1],
                    ["campaignId": "high", "priority": 5, "delayTime": 500],
                    ["campaignId": "unranked", "delayTime": 200],
                ])))
        let view = h.bed.start { engine -> Bool in
            await engine.trackView(pageContext: Fixtures.homePage)
            return true
        }
        try await h.bed.runUntilIdle()
        #expect(shown.withLock { $0 }.isEmpty)
        h.clock.advance(by: .milliseconds(500))
        try await h.bed.runUntilIdle()
        #expect(shown.withLock { $0.map(\.0) } == ["high", "low"])
        #expect(view.returnedValue == nil, "its last campaign waits its delay")
        h.clock.advance(by: .milliseconds(200))
        try await h.bed.runUntilIdle()
        #expect(shown.withLock { $0.map(\.0) } == ["high", "low", "unranked"])
        #expect(shown.withLock { $0.map(\.1) } == [.milliseconds(500), .milliseconds(500), .milliseconds(700)])
        #expect(view.returnedValue == true)

        h.transport.expect(
            .request(.post, pathSuffix: "/visit"),
            .respond(Fixtures.eventResponse(campaigns: [["campaignId": "later", "delayTime": 1_000]])))
        let second = h.bed.start { engine -> Bool in
            await engine.trackView(pageContext: Fixtures.homePage)
            return true
        }
        try await h.bed.runUntilIdle()
        await h.engine.lockPresentation()
        h.clock.advance(by: .seconds(1))
        try await h.bed.runUntilIdle()
        #expect(!shown.withLock { $0.map(\.0) }.contains("later"), "dropped: a lock was taken during its delay")
        #expect(second.returnedValue == true)
        #expect(h.logs.messages.contains { $0.contains("in-app campaign later suppressed") })
    }

    // Mirrors flutter's newest presentation_relevance_wire_test and stale_gate_wire_test: a
    // campaign is for the identity whose request brought it. One waiting for its delay when the
    // user changes is dropped, and so is one whose answer arrives after the change; the same
    // user set again is no change, and its campaign is shown.
    // covers: B15
    @Test func aCampaignOfTheIdentityThatWasIsNeverShownToTheNextOne() async throws {
        let h = await EngineHarness()
        let shown = Locked<[String]>([])
        await h.engine.setInAppCampaignHandler { campaign in shown.withLock { $0.append(campaign.campaignId) } }
        func view() -> EngineTestBed.Call<Bool> {
            h.bed.start { engine -> Bool in
                await engine.trackView(pageContext: Fixtures.homePage)
                return true
            }
        }
        func logIn(_ user: String) async throws {
            try await h.bed.runUntilIdle()
            _ = try await h.bed.run { engine -> Bool in
                await engine.setUser(userId: user)
                return true
            }
        }
        h.transport.expect(
            .request(.post, pathSuffix: "/visit"),
            .respond(Fixtures.eventResponse(campaigns: [["campaignId": "delayed", "delayTime": 1_000]])))
        let first = view()
        try await logIn("alice")
        h.clock.advance(by: .seconds(1))
        try await h.bed.runUntilIdle()
        #expect(first.returnedValue == true)

        let late = h.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
        let second = view()
        try await logIn("bob")
        h.transport.complete(late, with: Fixtures.eventResponse(campaigns: [["campaignId": "late"]]))
        try await h.bed.runUntilIdle()
        #expect(second.returnedValue == true)
        #expect(shown.withLock { $0 }.isEmpty, "neither reached the next user")
        #expect(h.logs.messages.contains { $0.contains("in-app campaigns late dropped") })

        h.transport.expect(
            .request(.post, pathSuffix: "/visit"),
            .respond(Fixtures.eventResponse(campaigns: [["campaignId": "same-user", "delayTime": 500]])))
        let third = view()
        try await logIn("bob")
        h.clock.advance(by: .milliseconds(500))
        try await h.bed.runUntilIdle()
        #expect(shown.withLock { $0 } == ["same-user"], "the same user again is no change")
        #expect(third.returnedValue == true)
    }

    // MARK: - A payload of the shape the service sends

    // The shape of flutter's test/fixtures/in_app_survey_payload.json, which the service really
    // sent (values here are made up): `user: {}`, a `testId`, a `native` content delivered as a
    // bottom sheet, no `custom`, server-driven `variables` with `onVisibleImpression`, and engagement
    // events of five types. It decodes whole; it has nothing to load-track (no `onLoad`), and
    // an empty `user` changes no identity.
    // covers: B5, B7, B9
    @Test func aPayloadOfTheServicesOwnShapeDecodes() async throws {
        let h = await EngineHarness()
        let content: [String: Any] = [
            "contentId": "6a5f0000:b4f8", "deliveryMethod": "bottom_sheet", "contentType": "native",
            "variables": [
                "onVisibleImpression": ["action": "visible_impression"],
                "frameUI": ["close": NSNull(), "container": ["style": ["cornerRadius": 25]]],
                "elements": [["type": "text", "text": "Вам нравится магазин?"]],
            ],
            "events": ["visible_impression", "click", "follow_url", "follow_deeplink", "close"].map {
                ["type": $0, "urls": ["https://ev.example/v2/engagement?type=\($0)&decisionId=gf:1"]]
            },
        ]
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"),
            .respond(
                .json(
                    200,
                    [
                        "user": [:] as [String: Any],
                        "data": [
                            [
                                "selector": "in_app_survey_demo",
                                "payload": [
                                    [
                                        "decisionId": "gf:1", "experienceId": "6a5f0001", "variationId": "6a5f0002",
                                        "campaignId": "6a5f0003", "testId": "6a5f0004", "contents": [content],
                                    ]
                                ],
                            ]
                        ],
                    ])))
        let response = try #require(
            await h.engine.getContentBySelector(selector: "in_app_survey_demo", pageContext: Fixtures.homePage))
        let variation = try #require(response.variations.first)
        #expect(variation.campaignId == "6a5f0003")
        #expect(variation.testId == "6a5f0004")
        let decoded = try #require(variation.contents.first)
        #expect(decoded.contentType == "native")
        #expect(decoded.deliveryMethod == "bottom_sheet")
        #expect(decoded.custom == nil)
        #expect(
            decoded.events.map(\.type) == ["visible_impression", "click", "follow_url", "follow_deeplink", "close"])
        #expect(decoded.variables?["onVisibleImpression"]?["action"]?.stringValue == "visible_impression")
        #expect(decoded.loadTrackingURLs.isEmpty)
        await h.engine.flushTracking()
        #expect(await h.engine.canonicalUserId == "u-8f3c", "user {} changes nothing")
        await h.verify()
    }
}
