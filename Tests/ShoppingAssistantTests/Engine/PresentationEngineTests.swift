import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

// A regression that loses a result makes a test wait forever; the limit turns that into a failure.
@Suite(.timeLimit(.minutes(2))) struct PresentationEngineTests {
    private let chooseMatcher = ScriptedTransport.Matcher.request(.post, pathSuffix: "/choose")
    private let visitMatcher = ScriptedTransport.Matcher.request(.post, pathSuffix: "/visit")

    /// Records lock changes and in-app campaigns the engine hands out.
    private func listen(_ engine: AssistantEngine) async -> (
        locks: CollectedValues<PresentationLocks>, campaigns: CollectedValues<String>
    ) {
        let locks = CollectedValues<PresentationLocks>()
        let campaigns = CollectedValues<String>()
        await engine.setPresentationLockListener { locks.append($0) }
        await engine.setInAppCampaignHandler { campaigns.append($0.campaignId) }
        return (locks, campaigns)
    }

    // MARK: - Open results (O1–O4)

    // covers: O1, O5
    @Test func openPresentsTheChatOnceAndTakesTheLock() async {
        let h = await EngineHarness()
        let (locks, _) = await listen(h.engine)
        await h.openReady()
        #expect(h.presenter.count(.present) == 1)
        #expect(await h.engine.isAssistantOpen)
        #expect(locks.all == [PresentationLocks(app: false, assistant: true)])
        await h.verify()
    }

    // covers: O4
    @Test func openingTwiceIsAlreadyOpenAndPresentsOnce() async {
        let h = await EngineHarness()
        await h.openReady()
        let second = RecordingPresenter()
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .alreadyOpen)
        #expect(await h.engine.openAssistant(presenter: second) == .alreadyOpen)
        #expect(h.presenter.count(.present) == 1)
        #expect(second.calls.isEmpty)
        await h.verify()
        #expect(h.sentEventTypes == ["chat_dialog_open"])
    }

    // covers: O2
    @Test func notReadyBeforeAnyPreparation() async {
        let h = await EngineHarness()
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .notReady)
        #expect(h.presenter.calls.isEmpty)
        #expect(await h.engine.presentationLocks == PresentationLocks())
        await h.verify()
    }

    // covers: O2, P2
    @Test func notReadyWhileANewerPrepareIsInFlight() async {
        let h = await EngineHarness()
        await h.prepareReady()
        let choose = h.transport.expect(chooseMatcher, .deferred)
        let task = await h.startPreparing(page: Fixtures.homePage, requestsBefore: 1)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .notReady)
        #expect(h.presenter.calls.isEmpty)
        h.transport.complete(choose, with: Fixtures.choose())
        #expect(await task.valueUnlessCancelled == .ready)
        h.expectEvents(1)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        await h.verify()
    }

    // covers: O2
    @Test func notReadyAfterAFailedOrUnavailablePreparation() async {
        let h = await EngineHarness()
        await h.prepareReady()
        h.transport.expect(chooseMatcher, .respond(.text(400, "")))
        _ = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .notReady)
        h.transport.expect(chooseMatcher, .respond(Fixtures.chooseEmpty()))
        _ = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .notReady)
        #expect(h.presenter.calls.isEmpty)
        await h.verify()
    }

    // covers: O3
    @Test(arguments: [AssistantPresenterAvailability.closed, .notVisible, .busy])
    func unavailablePresenterIsInvalid(_ availability: AssistantPresenterAvailability) async {
        let h = await EngineHarness()
        await h.prepareReady()
        h.presenter.setAvailability(availability)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .invalidPresenter)
        #expect(h.presenter.calls.isEmpty)
        #expect(await !h.engine.isAssistantOpen)
        #expect(await h.engine.presentationLocks == PresentationLocks())
        h.presenter.setAvailability(.available)
        h.expectEvents(1)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        await h.verify()
    }

    // MARK: - Locks (B6, O5, O6)

    // covers: B6
    @Test func appLockIsIdempotentAndReportedOnChange() async {
        let h = await EngineHarness()
        let (locks, _) = await listen(h.engine)
        await h.engine.lockPresentation()
        await h.engine.lockPresentation()
        #expect(await h.engine.presentationLocks == PresentationLocks(app: true))
        await h.engine.unlockPresentation()
        #expect(await h.engine.presentationLocks == PresentationLocks())
        await h.engine.unlockPresentation()
        #expect(locks.all == [PresentationLocks(app: true), PresentationLocks()])
        await h.verify()
    }

    // covers: O5, O6
    @Test func appLockSurvivesTheAssistantsOpenAndClose() async {
        let h = await EngineHarness()
        let (locks, _) = await listen(h.engine)
        await h.engine.lockPresentation()
        await h.openReady()
        #expect(await h.engine.presentationLocks == PresentationLocks(app: true, assistant: true))
        h.expectEvents(1)  // chat_dialog_close
        await h.engine.closeAssistant()
        #expect(h.presenter.count(.dismiss) == 1)
        #expect(await !h.engine.isAssistantOpen)
        #expect(await h.engine.presentationLocks == PresentationLocks(app: true))
        #expect(
            locks.all == [
                PresentationLocks(app: true), PresentationLocks(app: true, assistant: true),
                PresentationLocks(app: true),
            ])
        await h.verify()
    }

    // covers: O5
    @Test func lockIsHeldUntilTheDismissalCompletes() async {
        let h = await EngineHarness()
        await h.openReady()
        h.presenter.hold(.dismiss)
        h.expectEvents(1)  // chat_dialog_close
        let engine = h.engine
        let closing = Task { await engine.closeAssistant() }
        await h.presenter.waitUntilHolding(.dismiss)
        #expect(await h.engine.presentationLocks.assistant)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .alreadyOpen)
        h.presenter.release(.dismiss)
        await closing.valueUnlessCancelled
        #expect(await h.engine.presentationLocks == PresentationLocks())
        await h.verify()
    }

    // covers: O5, O6
    @Test func presenterDismissingByItselfReleasesOnlyTheAssistantLock() async {
        let h = await EngineHarness()
        await h.engine.lockPresentation()
        await h.openReady()
        h.expectEvents(1)  // chat_dialog_close
        await h.engine.assistantWasDismissed()
        #expect(await !h.engine.isAssistantOpen)
        #expect(h.presenter.count(.dismiss) == 0)
        #expect(await h.engine.presentationLocks == PresentationLocks(app: true))
        await h.verify()
    }

    // covers: O6
    @Test func failedOpenLeavesTheAppLockInPlace() async {
        let h = await EngineHarness()
        await h.engine.lockPresentation()
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .notReady)
        #expect(await h.engine.presentationLocks == PresentationLocks(app: true))
        await h.prepareReady()
        h.presenter.setAvailability(.busy)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .invalidPresenter)
        #expect(await h.engine.presentationLocks == PresentationLocks(app: true))
        await h.verify()
    }

    // covers: O5, O6
    @Test func deallocatedPresenterClosesTheChatAndReleasesOnlyTheAssistantLock() async {
        let h = await EngineHarness()
        let (locks, _) = await listen(h.engine)
        await h.engine.lockPresentation()
        await h.prepareReady()
        h.expectEvents(1)  // chat_dialog_open
        var presenter: RecordingPresenter? = RecordingPresenter()
        weak let weakPresenter = presenter
        #expect(await h.engine.openAssistant(presenter: presenter!) == .opened)
        presenter = nil
        #expect(weakPresenter == nil)

        // The next change of the chat finds the presenter gone: the chat counts as closed.
        h.expectEvents(1)  // chat_dialog_close
        await h.engine.startNewChat()
        #expect(await !h.engine.isAssistantOpen)
        #expect(await h.engine.presentationLocks == PresentationLocks(app: true))
        #expect(locks.all.last == PresentationLocks(app: true))
        // A new presenter can open it again.
        h.expectEvents(1)  // chat_dialog_open
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        await h.verify()
    }

    // covers: O5
    @Test func openingAgainAfterThePresenterWentAwayPresentsAnew() async {
        let h = await EngineHarness()
        await h.prepareReady()
        h.expectEvents(1)  // chat_dialog_open
        var presenter: RecordingPresenter? = RecordingPresenter()
        #expect(await h.engine.openAssistant(presenter: presenter!) == .opened)
        presenter = nil
        // Nothing changed in the chat since; the host opens it from a new screen.
        h.expectEvents(2)  // chat_dialog_close, chat_dialog_open
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        #expect(h.presenter.count(.present) == 1)
        #expect(await h.engine.presentationLocks == PresentationLocks(app: false, assistant: true))
        await h.verify()
    }

    // MARK: - In-app campaigns (B6, O7)

    // covers: B6
    @Test func campaignsWhileTheAppLockIsHeldAreDroppedNotReplayed() async {
        let h = await EngineHarness()
        let (_, campaigns) = await listen(h.engine)
        h.transport.expect(visitMatcher, .respond(PrepFixtures.campaigns(["c-before"])))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        #expect(campaigns.all == ["c-before"])

        await h.engine.lockPresentation()
        h.transport.expect(visitMatcher, .respond(PrepFixtures.campaigns(["c-locked"])))
        await h.engine.trackView(pageContext: Fixtures.productPage)
        h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(PrepFixtures.campaigns(["c-step"])))
        await h.engine.triggerEvent(
            events: [CustomEvent(type: "add-to-cart", name: "Add")], pageContext: Fixtures.productPage)
        // Fetching content is never blocked.
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose(selector: "banner")))
        let content = await h.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.productPage)
        #expect(content?.variations.count == 1)
        #expect(campaigns.all == ["c-before"])

        await h.engine.unlockPresentation()
        #expect(campaigns.all == ["c-before"])
        h.transport.expect(visitMatcher, .respond(PrepFixtures.campaigns(["c-after"])))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        #expect(campaigns.all == ["c-before", "c-after"])
        await h.verify()
    }

    // covers: O7
    @Test func campaignsWhileTheChatIsOpenAreSuppressedAndNotReplayed() async {
        let h = await EngineHarness()
        let (_, campaigns) = await listen(h.engine)
        await h.openReady()
        await h.engine.flushTracking()  // chat_dialog_open is sent before the host's own event

        h.transport.expect(visitMatcher, .respond(PrepFixtures.campaigns(["c-open"])))
        await h.engine.trackView(pageContext: Fixtures.productPage)
        // Event sending continues, and a step transition it announces is suppressed too.
        let event = h.transport.expect(
            .request(.post, pathSuffix: "/event"), .respond(PrepFixtures.campaigns(["c-step"])))
        await h.engine.triggerEvent(
            events: [CustomEvent(type: "add-to-cart", name: "Add")], pageContext: Fixtures.productPage)
        await h.settle()  // kept when the call returned (DL5); sent by now
        #expect(h.transport.request(for: event) != nil)
        // Campaign fetching continues and inline content is not blocked.
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose()))
        #expect(
            await h.engine.getContentBySelector(selector: "inline-banner", pageContext: Fixtures.productPage) != nil)
        #expect(campaigns.all.isEmpty)

        h.expectEvents(1)  // chat_dialog_close
        await h.engine.closeAssistant()
        #expect(campaigns.all.isEmpty)
        h.transport.expect(visitMatcher, .respond(PrepFixtures.campaigns(["c-closed"])))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        #expect(campaigns.all == ["c-closed"])
        await h.verify()
    }

    // MARK: - What the chat opens on (O9)

    // covers: O9
    @Test func chatOpensOnTheStartScreenOfTheLatestReadyPreparation() async {
        let h = await EngineHarness()
        h.transport.expect(
            chooseMatcher, .respond(Fixtures.choose(customJSON: PrepFixtures.configuration(title: "Старый"))))
        _ = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        let latest = PrepFixtures.configuration(
            title: "Новый", subtitle: "Помогу с выбором", suggests: ["Кружка", "Чайник"])
        h.transport.expect(chooseMatcher, .respond(Fixtures.choose(customJSON: latest)))
        _ = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        h.expectEvents(1)
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        guard case .present(let snapshot)? = h.presenter.calls.first else {
            Issue.record("the chat was not presented: \(h.presenter.calls)")
            return
        }
        #expect(snapshot.title == "Новый")
        #expect(snapshot.subtitle == "Помогу с выбором")
        #expect(snapshot.suggests == ["Кружка", "Чайник"])
        #expect(snapshot.messages.isEmpty)
        await h.verify()
    }

    // covers: O9
    @Test func chatOpensOnTheDialogInMemory() async {
        let h = await EngineHarness()
        await h.prepareReady()
        let messageId = await h.landOneReply("Помогите выбрать подарок")
        h.transport.expect(
            chooseMatcher, .respond(Fixtures.choose(customJSON: PrepFixtures.configuration(title: "Новая страница"))))
        #expect(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
                == .ready)

        h.expectEvents(1)  // chat_dialog_open
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        guard case .present(let snapshot)? = h.presenter.calls.first else {
            Issue.record("the chat was not presented: \(h.presenter.calls)")
            return
        }
        #expect(snapshot.messages.map(\.id) == [messageId, "am-17"])
        #expect(snapshot.messages.first?.text == "Помогите выбрать подарок")
        #expect(snapshot.suggests == ["Покажи дешевле", "А для мужчины?"])
        await h.verify()
    }
}
