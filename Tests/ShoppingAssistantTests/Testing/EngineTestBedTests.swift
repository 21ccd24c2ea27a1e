import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The test support embedders get: the test bed, its idle detection and the doubles. These
/// test the support, not engine rules, so they claim none.
@Suite(.timeLimit(.minutes(2))) struct EngineTestBedTests {
    private static func bed() async -> EngineTestBed {
        await EngineTestBed(
            configuration: AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section),
            identityStore: InMemoryIdentityStore(uid: "u-8f3c"), onUnexpected: { Issue.record(Comment(rawValue: $0)) })
    }

    private static func open(_ bed: EngineTestBed, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        bed.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose()))
        let prepared = try await bed.run {
            await $0.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        }
        try #require(prepared == .ready, sourceLocation: sourceLocation)
        let presenter = bed.presenter
        let opened = try await bed.run { await $0.openAssistant(presenter: presenter) }
        try #require(opened == .opened, sourceLocation: sourceLocation)
    }

    @Test func analyticsAreAnsweredAndRecordedWithoutBeingScripted() async throws {
        let bed = await Self.bed()
        try await Self.open(bed)
        try await bed.run { await $0.trackView(pageContext: Fixtures.homePage) }
        bed.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m")))
        _ = try await bed.run { await $0.sendMessage("Помогите выбрать подарок") }
        _ = try await bed.run { await $0.flushTracking() }

        let paths = bed.transport.analyticsRequests.map { "\($0.method.rawValue) \($0.url.path)" }
        #expect(paths.filter { $0.hasSuffix("/event") }.count == 3, "open, send, reply: \(paths)")
        #expect(paths.contains { $0.hasSuffix("/visit") })
        #expect(paths.contains { $0.hasPrefix("GET ") }, "the reply's impression URL")
        #expect(bed.transport.unexpectedRequests.isEmpty)
        #expect(bed.transport.unmetExpectations.isEmpty)
        #expect(bed.presenter.latest?.messages.map(\.role) == [.user, .assistant])
    }

    @Test func anExpectationStillAnswersAnAnalyticsRequestItMatches() async throws {
        let bed = await Self.bed()
        let visit = bed.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(PrepFixtures.campaigns(["c-shown"])))
        let campaigns = CollectedValues<String>()
        await bed.engine.setInAppCampaignHandler { campaigns.append($0.campaignId) }
        try await bed.run { await $0.trackView(pageContext: Fixtures.homePage) }
        #expect(bed.transport.request(for: visit) != nil)
        #expect(bed.transport.analyticsRequests.isEmpty)
        #expect(campaigns.all == ["c-shown"])
    }

    @Test func runningUntilIdleShowsWhatHasNotHappenedYet() async throws {
        let bed = await Self.bed()
        try await Self.open(bed)
        let post = bed.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        let sent = try await bed.run { await $0.sendMessage("Помогите выбрать подарок") }
        let messageId = try #require(try sent?.get())

        // Idle while the reply is outstanding: nothing else was sent, nothing was read back.
        let before = bed.transport.requests.count
        try await bed.runUntilIdle()
        #expect(bed.transport.requests.count == before)
        #expect(!bed.transport.requests.contains { $0.url.path.contains("/v1/threads/") })
        #expect(await bed.engine.dialogState == .sending)
        #expect(bed.clock.sleeperCount == 1, "the reply timeout")

        bed.transport.complete(post, with: Fixtures.reply(to: messageId))
        try await bed.runUntilIdle()
        #expect(await bed.engine.dialogState == .active)
        #expect(bed.presenter.latest?.messages.map(\.id) == [messageId, "am-17"])
        #expect(bed.clock.sleeperCount == 0)
    }

    @Test func aCallTheBedsPresenterHoldsIsParkedNotRunning() async throws {
        let bed = await Self.bed()
        try await Self.open(bed)
        bed.presenter.hold(.dismiss)
        let closed: Void? = try await bed.run { await $0.closeAssistant() }
        #expect(closed == nil, "the close waits for the held dismissal")
        #expect(bed.presenter.isHolding(.dismiss))
        #expect(await bed.engine.presentationLocks.assistant)
        #expect(bed.log.entries == [.dismissStarted])

        bed.presenter.release(.dismiss)
        try await bed.runUntilIdle()
        #expect(await !bed.engine.isAssistantOpen)
        #expect(bed.log.entries == [.dismissStarted, .dismissEnded])
    }

    @Test func aHostCallOfAnotherPresenterCountsAsRunningAndTheWaitFailsInsteadOfHanging() async throws {
        let bed = await Self.bed()
        bed.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose()))
        _ = try await bed.run {
            await $0.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        }
        let own = RecordingPresenter()
        #expect(try await bed.run { await $0.openAssistant(presenter: own) } == .opened)
        own.hold(.dismiss)
        let closing = bed.start { await $0.closeAssistant() }
        try #require(await own.waitUntilHolding(.dismiss))
        #expect(bed.activity.busy > 0, "the held call of a presenter the bed does not know is running work")

        let waiting = Task { try await bed.runUntilIdle() }
        waiting.cancel()
        await #expect(throws: EngineTestBed.NotIdle.self) { try await waiting.value }

        own.release(.dismiss)
        #expect(await closing.value() != nil)
        try await bed.runUntilIdle()
        #expect(await !bed.engine.isAssistantOpen)
    }

    @Test func theHandlerRefusesWhatItWasToldTo() throws {
        let handler = RecordingActionHandler(refusing: ["open_support_chat"])
        #expect(!handler.canHandle(.openSupportChat(payload: [:])))
        #expect(handler.canHandle(.followUrl(try #require(URL(string: "https://shop.example/delivery")))))
    }
}
