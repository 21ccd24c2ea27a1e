import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

// A regression that loses a result makes a test wait forever; the limit turns that into a failure.
@Suite(.timeLimit(.minutes(2))) struct PreparationEngineTests {
    static let categoryPage = PageContext(type: .category, data: ["Посуда"], location: "app://category/cups")
    static let searchPage = PageContext(type: .search, data: ["кружка"], location: "app://search?q=кружка")

    private let chooseMatcher = ScriptedTransport.Matcher.request(.post, pathSuffix: "/choose")

    private func expectFailure(
        _ result: AssistantPrepareResult, _ code: AssistantError.Code, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .failure(let error) = result else {
            Issue.record("expected .failure(\(code.rawValue)), got \(result)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == code, sourceLocation: sourceLocation)
    }

    /// The lifecycle events of one type sent so far, as `customProps`.
    private func events(_ type: String, in transport: ScriptedTransport) -> [[String: String]] {
        transport.requests.filter { $0.url.path.hasSuffix("/event") }.flatMap { request in
            (Fixtures.body(request)["data"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == type }
                .map { $0["customProps"] as? [String: String] ?? [:] }
        }
    }

    // MARK: - P1

    // covers: P1
    @Test func resultsAreEquatableAndSendable() {
        func check<T: Equatable & Sendable>(_: T.Type) {}
        check(AssistantPrepareResult.self)
        check(AssistantUnavailableReason.self)
        check(AssistantError.self)
        check(AssistantPreparationState.self)
        #expect(AssistantPrepareResult.unavailable(.disabled) != .unavailable(.notFound))
        #expect(
            AssistantPrepareResult.failure(AssistantError(code: .timeout, message: "a"))
                == .failure(AssistantError(code: .timeout, message: "a")))
    }

    // covers: P1, P5
    @Test func preparationStateFollowsTheCall() async {
        let h = await EngineHarness()
        #expect(await h.engine.preparationState == .idle)
        let choose = h.transport.expect(chooseMatcher, .deferred)
        let task = await h.startPreparing(requestsBefore: 0)
        #expect(await h.engine.preparationState == .preparing)
        h.transport.complete(choose, with: Fixtures.choose())
        #expect(await task.valueUnlessCancelled == .ready)
        #expect(await h.engine.preparationState == .ready)
        h.transport.expect(chooseMatcher, .respond(Fixtures.chooseEmpty()))
        _ = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        #expect(await h.engine.preparationState == .unavailable)
        h.transport.expect(chooseMatcher, .respond(.text(400, "")))  // final: not retried (DL1)
        _ = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        #expect(await h.engine.preparationState == .failed)
        await h.verify()
    }

    // MARK: - Latest call wins (P2)

    // covers: P2
    @Test func latestOfConcurrentPreparesWinsAndOlderOnesAreSuperseded() async {
        let h = await EngineHarness()
        let first = h.transport.expect(chooseMatcher, .deferred)
        let second = h.transport.expect(chooseMatcher, .deferred)
        let third = h.transport.expect(chooseMatcher, .deferred)
        // Equal arguments: the latest call still wins.
        let t1 = await h.startPreparing(requestsBefore: 0)
        let t2 = await h.startPreparing(requestsBefore: 1)
        #expect(await t1.valueUnlessCancelled == .superseded)
        let t3 = await h.startPreparing(requestsBefore: 2)
        #expect(await t2.valueUnlessCancelled == .superseded)
        h.transport.complete(third, with: Fixtures.choose(customJSON: PrepFixtures.configuration(title: "Третий")))
        #expect(await t3.valueUnlessCancelled == .ready)
        // The older requests answer after the newer one: nothing changes.
        h.transport.complete(first, with: Fixtures.choose(customJSON: #"{"enabled":false}"#))
        h.transport.complete(second, with: .text(500, ""))
        #expect(await h.engine.preparationState == .ready)
        h.expectEvents(1)  // chat_dialog_open
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        #expect(h.presenter.latest?.title == "Третий")
        await h.verify()
    }

    // covers: P2
    @Test func olderChooseAnsweringAfterTheNewerChangesNothing() async {
        let store = RecordingIdentityStore(uid: "u-old")
        let built = await EngineHarness(identityStore: store, wrap: { CancellationIgnoringTransport(inner: $0) })
        let engine = built.engine
        let older = built.transport.expect(chooseMatcher, .deferred)
        let newer = built.transport.expect(chooseMatcher, .deferred)
        let t1 = Task {
            await engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        }
        await built.transport.waitForRequests(1)
        let t2 = Task {
            await engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Self.categoryPage)
        }
        #expect(await t1.valueUnlessCancelled == .superseded)
        await built.transport.waitForRequests(2)

        built.transport.complete(
            newer,
            with: PrepFixtures.choose(campaigns: [("c-new", [PrepFixtures.configuration(title: "Новый")])], uid: nil))
        #expect(await t2.valueUnlessCancelled == .ready)
        // The older call's answer arrives late, disabled, with the canonical uid.
        built.transport.complete(
            older, with: PrepFixtures.choose(campaigns: [("c-old", [#"{"enabled":false}"#])], uid: "u-8f3c"))
        await store.waitForSaves(1)  // its response was absorbed: its actor turn is over
        #expect(store.saves == ["u-8f3c"])
        #expect(await engine.preparationState == .ready)

        let open = built.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        #expect(await engine.openAssistant(presenter: built.presenter) == .opened)
        #expect(built.presenter.latest?.title == "Новый")
        await built.verify()
        let data = Fixtures.body(built.transport.request(for: open))["data"] as? [[String: Any]]
        #expect((data?.first?["customProps"] as? [String: String])?["campaignId"] == "c-new")
    }

    // covers: P2
    @Test func olderChooseAnsweringFirstDoesNotFinishTheNewer() async throws {
        let store = RecordingIdentityStore(uid: "u-old")
        let built = await EngineHarness(identityStore: store, wrap: { CancellationIgnoringTransport(inner: $0) })
        let engine = built.engine
        let older = built.transport.expect(chooseMatcher, .deferred)
        let newer = built.transport.expect(chooseMatcher, .deferred)
        let t1 = Task {
            await engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        }
        await built.transport.waitForRequests(1)
        let t2 = Task {
            await engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Self.categoryPage)
        }
        #expect(await t1.valueUnlessCancelled == .superseded)
        await built.transport.waitForRequests(2)

        built.transport.complete(
            older,
            with: PrepFixtures.choose(
                campaigns: [("c-old", [PrepFixtures.configuration(title: "Старый")])], uid: "u-8f3c"))
        await store.waitForSaves(1)
        // Stop here if the older answer finished the newer call: its caller would wait forever.
        try #require(await engine.preparationState == .preparing)
        #expect(await engine.openAssistant(presenter: built.presenter) == .notReady)

        built.transport.complete(
            newer, with: PrepFixtures.choose(campaigns: [("c-new", [PrepFixtures.configuration(title: "Новый")])]))
        #expect(await t2.valueUnlessCancelled == .ready)
        built.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        #expect(await engine.openAssistant(presenter: built.presenter) == .opened)
        #expect(built.presenter.latest?.title == "Новый")
        await built.verify()
    }

    // covers: P2, P3
    @Test func olderCallsTimeoutAndCancellationDoNotTouchTheNewer() async {
        let h = await EngineHarness()
        h.transport.expect(chooseMatcher, .deferred)
        let newer = h.transport.expect(chooseMatcher, .deferred)
        let t1 = await h.startPreparing(timeout: .seconds(1), requestsBefore: 0)
        let t2 = await h.startPreparing(page: Self.categoryPage, timeout: .seconds(10), requestsBefore: 1)
        #expect(await t1.valueUnlessCancelled == .superseded)
        t1.cancel()
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(5))  // past the older call's deadline
        #expect(await h.engine.preparationState == .preparing)
        h.transport.complete(newer, with: Fixtures.choose())
        #expect(await t2.valueUnlessCancelled == .ready)
        h.clock.advance(by: .seconds(10))  // past the newer call's deadline too
        #expect(await h.engine.preparationState == .ready)
        #expect(h.clock.sleeperCount == 0)
        await h.verify()
    }

    // MARK: - Timeout (P3, S4)

    // covers: P3
    @Test func unansweredChooseTimesOutAtTenSeconds() async {
        let h = await EngineHarness()
        h.transport.expect(chooseMatcher, .deferred)
        let task = await h.startPreparing(requestsBefore: 0)
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(10) - .milliseconds(1))
        #expect(await h.engine.preparationState == .preparing)
        h.clock.advance(by: .milliseconds(1))
        expectFailure(await task.valueUnlessCancelled, .timeout)
        #expect(await h.engine.preparationState == .failed)
        await h.verify()
    }

    // covers: P3
    @Test func customTimeoutIsHonoured() async {
        let h = await EngineHarness()
        h.transport.expect(chooseMatcher, .deferred)
        let task = await h.startPreparing(timeout: .seconds(3), requestsBefore: 0)
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(3))
        expectFailure(await task.valueUnlessCancelled, .timeout)
        await h.verify()
    }

    // covers: P3, S4
    @Test func firstLaunchWithoutUIDTimesOutAndNeverInventsOne() async {
        let h = await EngineHarness(storedUID: nil)
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose(uid: nil)))
        let task = await h.startPreparing(requestsBefore: 0)
        await h.clock.waitForSleepersOrFinish(of: task)
        h.clock.advance(by: .seconds(10) - .milliseconds(1))
        #expect(await h.engine.preparationState == .preparing)
        h.clock.advance(by: .milliseconds(1))
        expectFailure(await task.valueUnlessCancelled, .timeout)
        #expect(await h.engine.canonicalUserId == nil)
        #expect(h.identityStore.loadUid() == nil)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .notReady)
        #expect(await h.engine.sendMessage("Помогите выбрать подарок") == .failure(.notReady))
        await h.verify()
    }

    // covers: S4, B3
    @Test func concurrentTrackViewBringsTheUIDBeforeTheDeadline() async {
        let h = await EngineHarness(storedUID: nil)
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose(uid: nil)))
        h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-8f3c")))
        let task = await h.startPreparing(requestsBefore: 0)
        await h.engine.trackView(pageContext: Fixtures.productPage)
        #expect(await task.valueUnlessCancelled == .ready)
        #expect(await h.engine.canonicalUserId == "u-8f3c")
        #expect(h.identityStore.loadUid() == "u-8f3c")
        await h.verify()
    }

    // MARK: - Cancellation (P4)

    // covers: P4
    @Test func cancellingTheCallerMidRequestReturnsCancelled() async {
        let h = await EngineHarness()
        let choose = h.transport.expect(chooseMatcher, .deferred)
        let task = await h.startPreparing(requestsBefore: 0)
        task.cancel()
        #expect(await task.valueUnlessCancelled == .cancelled)
        #expect(await h.engine.preparationState == .idle)
        h.transport.complete(choose, with: Fixtures.choose())  // too late: the request was cancelled
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .notReady)
        await h.verify()
    }

    // covers: P4
    @Test func cancellationIsNotReportedAsANetworkError() async {
        let built = await EngineHarness(wrap: { CancellationAsNetworkErrorTransport(inner: $0) })
        let engine = built.engine
        built.transport.expect(chooseMatcher, .deferred)
        let task = Task {
            await engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        }
        await built.transport.waitForRequests(1)
        task.cancel()
        #expect(await task.valueUnlessCancelled == .cancelled)
        await built.verify()
    }

    // covers: P4
    @Test func alreadyCancelledCallerReturnsCancelled() async {
        let h = await EngineHarness()
        let engine = h.engine
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        }
        #expect(await task.valueUnlessCancelled == .cancelled)
        await h.verify()
    }

    // MARK: - Registration and configuration (G1, C1–C8)

    // covers: G1
    @Test func missingBuilderOrHandlerFailsWithoutARequest() async {
        let none = await EngineHarness(register: false)
        expectFailure(
            await none.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage),
            .invalidConfiguration)

        let builderOnly = await EngineHarness(register: false)
        await builderOnly.engine.setAssistantProductBlockBuilder(RecordingProductBlockBuilder())
        expectFailure(
            await builderOnly.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage),
            .invalidConfiguration)

        let handlerOnly = await EngineHarness(register: false)
        await handlerOnly.engine.setAssistantActionHandler(handlerOnly.handler)
        expectFailure(
            await handlerOnly.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage),
            .invalidConfiguration)

        for h in [none, builderOnly, handlerOnly] {
            #expect(h.transport.requests.isEmpty)
            #expect(await h.engine.preparationState == .failed)
            await h.verify()
        }
    }

    // covers: C5
    @Test func emptySelectorFailsWithoutARequest() async {
        let h = await EngineHarness()
        expectFailure(
            await h.engine.prepareAssistant(assistantSelector: "", pageContext: Fixtures.productPage),
            .invalidConfiguration)
        #expect(h.transport.requests.isEmpty)
        await h.verify()
    }

    // covers: C2
    @Test func disabledConfigurationIsUnavailable() async {
        let h = await EngineHarness()
        h.transport.expect(
            chooseMatcher,
            .respond(Fixtures.choose(customJSON: #"{"enabled":false,"title":"Помощник","suggests":["a"]}"#)))
        let result = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        #expect(result == .unavailable(.disabled))
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .notReady)
        await h.verify()
    }

    // covers: C5
    @Test func emptyAnswerIsNotFound() async {
        let h = await EngineHarness()
        h.transport.expect(chooseMatcher, .respond(Fixtures.chooseEmpty()))
        h.transport.expect(chooseMatcher, .respond(.json(200, ["user": ["uid": "u-8f3c"]])))
        h.transport.expect(chooseMatcher, .respond(PrepFixtures.choose(campaigns: [("c-1", [])])))
        for _ in 0..<3 {
            let result = await h.engine.prepareAssistant(
                assistantSelector: "shopping-asistant", pageContext: Fixtures.productPage)
            #expect(result == .unavailable(.notFound))
        }
        await h.verify()
    }

    // covers: C5, C6
    @Test func contentWithoutCustomJSONIsInvalidConfiguration() async {
        let h = await EngineHarness()
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose(customJSON: nil)))
        expectFailure(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage),
            .invalidConfiguration)
        await h.verify()
    }

    // covers: C6
    @Test(arguments: [
        "{\"enabled\":true,", #"{"title":"Помощник"}"#, #"{"enabled":"true"}"#, #"{"enabled":true,"suggests":"a"}"#,
        #"{"enabled":true,"title":["a"]}"#,
    ])
    func unparsableConfigurationIsInvalid(_ json: String) async {
        let h = await EngineHarness()
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose(customJSON: json)))
        expectFailure(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage),
            .invalidConfiguration)
        await h.verify()
    }

    // covers: C4
    @Test func differentConfigurationsAreInvalidAndIdenticalOnesReady() async {
        let h = await EngineHarness()
        let one = PrepFixtures.configuration(title: "Один")
        h.transport.expect(
            chooseMatcher,
            .respond(
                PrepFixtures.choose(campaigns: [("c-1", [one]), ("c-2", [PrepFixtures.configuration(title: "Два")])])))
        expectFailure(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage),
            .invalidConfiguration)

        h.transport.expect(chooseMatcher, .respond(PrepFixtures.choose(campaigns: [("c-1", [one]), ("c-2", [one])])))
        let result = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        #expect(result == .ready)
        #expect(await h.engine.chatSnapshot.title == "Один")
        await h.verify()
    }

    // covers: C3, C1, C7
    @Test func unknownFieldsAreIgnoredAndTheStartScreenIsTheConfiguration() async {
        let h = await EngineHarness()
        let json =
            #"{"enabled":true,"title":"Помощник","subtitle":"Подберу подарок","suggests":["Подарок маме","До 3000 ₽"],"avatar":{"url":"x"},"v":2}"#
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose(customJSON: json)))
        let result = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        #expect(result == .ready)
        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.title == "Помощник")
        #expect(snapshot.subtitle == "Подберу подарок")
        #expect(snapshot.suggests == ["Подарок маме", "До 3000 ₽"])
        await h.verify()
    }

    // covers: P1
    @Test func failedChooseIsReportedWithItsCode() async {
        let h = await EngineHarness()
        h.transport.expect(chooseMatcher, .respond(.text(403, "")))
        h.transport.expect(chooseMatcher, .respond(.text(200, "not json")))
        expectFailure(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage),
            .unauthorized)
        expectFailure(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage),
            .invalidResponse)
        await h.verify()
    }

    // covers: C8
    @Test func preparingNeverSendsAMessage() async {
        let h = await EngineHarness()
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose()))
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose(customJSON: #"{"enabled":false}"#)))
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose()))
        for page in [Fixtures.productPage, Fixtures.homePage, Self.searchPage] {
            _ = await h.engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: page)
        }
        await h.verify()
        #expect(h.transport.requests.count == 3)
        #expect(h.transport.requests.allSatisfy { $0.url.path.hasSuffix("/choose") })
        #expect(await h.engine.dialogState == .empty)
        #expect(await h.engine.currentThreadId == nil)
        #expect(await h.engine.chatSnapshot.messages.isEmpty)
    }

    // covers: E4
    @Test func prepareDoesNotCallTrackView() async {
        let h = await EngineHarness()
        h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await h.engine.trackView(pageContext: Fixtures.productPage)
        await h.prepareReady()
        await h.verify()
        #expect(h.transport.requests.map(\.url.lastPathComponent) == ["visit", "choose"])
    }

    // covers: E4
    @Test func fetchingCampaignDataDoesNotPrepareTheAssistant() async {
        let h = await EngineHarness()
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose()))
        let content = await h.engine.getContentBySelector(
            selector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        #expect(content != nil)
        #expect(await h.engine.preparationState == .idle)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .notReady)
        await h.verify()
    }

    // MARK: - Re-preparation and dialogs (P6–P8)

    // covers: P6
    @Test func failedOrUnavailableRePreparationKeepsTheOpenChatAndItsDialog() async {
        let h = await EngineHarness()
        await h.openReady()
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        let messageId = await h.landOneReply()
        let thread = await h.engine.currentThreadId
        #expect(thread != nil)

        // A 500 is tried again within the deadline (DL1): four attempts, then the failure.
        for _ in 0..<4 { h.transport.expect(chooseMatcher, .respond(.text(500, ""))) }
        let failed = await h.passingTime { engine in
            await engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        }
        expectFailure(failed ?? .cancelled, .server)
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose(customJSON: #"{"enabled":false}"#)))
        #expect(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
                == .unavailable(.disabled))
        // Not even another selector that is not found ends the dialog: it never became ready.
        h.transport.expect(chooseMatcher, .respond(Fixtures.chooseEmpty()))
        #expect(
            await h.engine.prepareAssistant(assistantSelector: "other-assistant", pageContext: Fixtures.homePage)
                == .unavailable(.notFound))

        #expect(await h.engine.isAssistantOpen)
        #expect(h.presenter.count(.dismiss) == 0)
        #expect(await h.engine.presentationLocks.assistant)
        #expect(await h.engine.currentThreadId == thread)
        #expect(await h.engine.dialogState == .active)
        #expect(await h.engine.chatSnapshot.messages.map(\.id) == [messageId, "am-17"])
        await h.verify()
        #expect(!h.sentEventTypes.contains("chat_dialog_end"))
        #expect(!h.sentEventTypes.contains("chat_dialog_close"))
    }

    // covers: P7
    @Test func newPageIsReadyAgainWhileADialogExists() async {
        let h = await EngineHarness()
        await h.prepareReady()
        let messageId = await h.landOneReply()
        let thread = await h.engine.currentThreadId

        h.transport.expect(chooseMatcher, .respond(Fixtures.choose()))
        let result = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Self.categoryPage)
        #expect(result == .ready)
        #expect(await h.engine.currentThreadId == thread)
        #expect(await h.engine.chatSnapshot.messages.map(\.id) == [messageId, "am-17"])

        h.expectEvents(1)  // chat_dialog_open
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        await h.verify()
        #expect(!h.sentEventTypes.contains("chat_dialog_end"))
    }

    // covers: P8
    @Test func preparingAnotherSelectorEndsTheDialog() async {
        let h = await EngineHarness()
        await h.prepareReady()
        await h.landOneReply()
        let oldThread = await h.engine.currentThreadId
        #expect(oldThread != nil)

        h.transport.expect(
            chooseMatcher,
            .respond(
                PrepFixtures.choose(
                    campaigns: [("c-2", [PrepFixtures.configuration(title: "Другой помощник")])],
                    selector: "other-assistant")))
        h.expectEvents(1)  // chat_dialog_end
        let result = await h.engine.prepareAssistant(
            assistantSelector: "other-assistant", pageContext: Fixtures.homePage)
        #expect(result == .ready)
        #expect(await h.engine.currentThreadId == nil)
        #expect(await h.engine.dialogState == .empty)
        #expect(await h.engine.chatSnapshot.messages.isEmpty)
        #expect(await h.engine.chatSnapshot.title == "Другой помощник")
        await h.transport.waitForRequests(6)  // choose, message, 2 events, choose, chat_dialog_end
        #expect(
            events("chat_dialog_end", in: h.transport) == [["threadId": oldThread ?? "", "reason": "assistant_change"]])

        await h.landOneReply("Ещё вопрос")
        let newThread = await h.engine.currentThreadId
        #expect(newThread != nil)
        #expect(newThread != oldThread)
        let message = h.transport.requests.last { $0.url.path.hasSuffix("/v1/messages") }
        let body = Fixtures.body(message)
        #expect(body["threadId"] as? String == newThread)
        let runtime = body["runtimeContext"] as? [String: Any] ?? [:]
        #expect(runtime["selector"] as? String == "other-assistant")
        #expect(runtime["campaignId"] as? String == "c-2")
        await h.verify()
    }
}
