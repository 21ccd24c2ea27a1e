import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// Rule H1 as a matrix: every host callback × every public engine call made from inside it.
/// Each case drives the engine to the callback, makes the call there, and requires that the
/// call returns within bounded virtual time, that what triggered the callback returns too,
/// and that the engine still answers afterwards.
///
/// The async callbacks (present, update, dismiss, `handle`, the in-app campaign handler) await
/// the call; the synchronous ones (the lock listener, the block builder) cannot, so they start
/// it as a task of their own, which the test bed counts.
@Suite struct HostCallbackReentrancyTests {
    /// The host callbacks of H1.
    enum Callback: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case present, update, dismiss, handle, campaign, lockListener, builder
        var testDescription: String { rawValue }
    }

    /// The public engine calls, as a callback would make them.
    enum Call: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case prepare, open, close, dismissedByPresenter, send, suggest, retry, newChat, rate, waitForReply
        case impression, tap, replyButton, trackView, triggerEvent, content, setUser, resetIdentity
        case lock, unlock, flushTracking, setOptions, setHandler, setBuilder, setListeners, render, inspect
        case shutdown
        var testDescription: String { rawValue }
    }

    // covers: H1
    @Test(arguments: Callback.allCases, Call.allCases)
    func aCallFromInsideAHostCallbackReturnsAndTheEngineStillAnswers(_ callback: Callback, _ call: Call) async throws {
        let world = await ReentrantWorld()
        try await world.drive(to: callback, making: call)
        let inner = world.inner.withLock { $0 }
        #expect(inner != nil, "\(call) made inside \(callback) did not return: it waits on itself")
        #expect(world.stepReturned, "the step that caused \(callback) did not return")
        #expect(world.virtualTime <= ReentrantWorld.bound, "it took \(world.virtualTime) of virtual time")
        try await world.engineStillAnswers(after: call)
    }
}

/// One engine on a test bed whose transport answers every endpoint, and host objects of the
/// test's own that make one engine call from inside the callback armed for it.
final class ReentrantWorld: Sendable {
    static let bound: Duration = .seconds(400)

    let harness: EngineHarness
    let presenter: ReentrantPresenter
    let handler: ReentrantHandler
    let builder: ReentrantBuilder
    /// What the call made inside the callback returned, once it returned.
    let inner = Locked<String?>(nil)
    private let step = Locked<Bool>(false)
    private let armed = Locked<(HostCallbackReentrancyTests.Callback, HostCallbackReentrancyTests.Call)?>(nil)

    var stepReturned: Bool { step.withLock { $0 } }
    var virtualTime: Duration { harness.clock.now.offset }
    var engine: AssistantEngine { harness.engine }

    init() async {
        harness = await EngineHarness(register: false, responder: ReentrantWorld.answer)
        presenter = ReentrantPresenter()
        handler = ReentrantHandler()
        builder = ReentrantBuilder()
        presenter.link.world = self
        handler.link.world = self
        builder.link.world = self
        let engine = harness.engine
        await engine.setAssistantProductBlockBuilder(builder)
        await engine.setAssistantActionHandler(handler)
        await engine.setInAppCampaignHandler { [weak self] _ in await self?.fired(.campaign) }
        await engine.setPresentationLockListener { [weak self] _ in self?.firedSync(.lockListener) }
    }

    /// Every endpoint answered at once: a configuration with suggests, a campaign on every page
    /// view, replies with products and buttons.
    @Sendable static func answer(_ endpoint: WireEndpoint, _ request: HTTPRequest) -> RoutingTransport.Answer {
        let body = Fixtures.body(request)
        switch endpoint {
        case .choose:
            let selector = (body["data"] as? [[String: Any]])?.first?["selector"] as? String
            return .respond(Fixtures.choose(selector: selector ?? Fixtures.assistantSelector))
        case .visit:
            return .respond(
                Fixtures.eventResponse(campaigns: [["campaignId": "promo", "trigger": "screenview", "priority": 1]]))
        case .event:
            return .respond(Fixtures.eventResponse())
        case .messages:
            let messageId = body["messageId"] as? String ?? "m"
            let threadId = body["threadId"] as? String ?? "t"
            return .respond(Fixtures.reply(to: messageId, threadId: threadId, assistantMessageId: "am-\(messageId)"))
        case .history:
            return .respond(.json(200, ["threadId": "t", "messages": []]))
        case .feedback, .tracking:
            return .respond(HTTPResponse(status: 204))
        }
    }

    // MARK: - Driving

    /// Brings the engine to the state `callback` needs, arms it, and performs the step that
    /// calls it; then runs until the call made inside it returned, moving virtual time on.
    func drive(to callback: HostCallbackReentrancyTests.Callback, making call: HostCallbackReentrancyTests.Call)
        async throws
    {
        let presenter = self.presenter
        switch callback {
        case .present, .lockListener, .campaign:
            try await run {
                await $0.prepareAssistant(
                    assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
            }
        case .update:
            try await open()
        case .dismiss, .handle, .builder:
            try await open()
            try await run { await $0.sendMessage("Помогите выбрать подарок") }
            try await run { await $0.waitForReply() }
        }
        armed.withLock { $0 = (callback, call) }
        let finished = step
        let started = harness.bed.start { engine in
            switch callback {
            case .present: _ = await engine.openAssistant(presenter: presenter)
            case .update: _ = await engine.sendMessage("Нужны наушники")
            case .dismiss: await engine.closeAssistant()
            case .handle:
                if let ref = await engine.chatSnapshot.messages.last?.productBlock?.products.first?.ref {
                    _ = await engine.performAssistantProductAction(product: ref, action: .tap)
                }
            case .campaign: await engine.trackView(pageContext: Fixtures.productPage)
            case .lockListener: await engine.lockPresentation()
            case .builder:
                if let block = await engine.chatSnapshot.messages.last?.productBlock {
                    _ = await engine.renderProductBlock(
                        block, layout: AssistantProductLayout(availableWidth: 80, isInteractionEnabled: true))
                }
            }
            finished.withLock { $0 = true }
            return true
        }
        for _ in 0..<200 {
            try await harness.bed.runUntilIdle()
            if inner.withLock({ $0 }) != nil, started.returnedValue != nil { break }
            guard virtualTime <= Self.bound, harness.clock.advanceToNextDeadline() else { break }
        }
    }

    /// After the case: the engine answers a call, and a fresh preparation and opening work
    /// (or, after a shutdown, are refused at once).
    func engineStillAnswers(after call: HostCallbackReentrancyTests.Call) async throws {
        armed.withLock { $0 = nil }
        let presenter = self.presenter
        let prepared = try await run {
            await $0.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        }
        #expect(prepared != nil, "prepareAssistant did not return after the case")
        if call == .shutdown { return }
        #expect(prepared == .ready, "prepareAssistant after the case: \(String(describing: prepared))")
        let closed: Bool? = try await run { engine in
            await engine.closeAssistant()
            return true
        }
        #expect(closed == true, "closeAssistant did not return after the case")
        let opened = try await run { await $0.openAssistant(presenter: presenter) }
        #expect(opened == .opened, "openAssistant after the case: \(String(describing: opened))")
    }

    private func open() async throws {
        let presenter = self.presenter
        _ = try await run {
            await $0.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        }
        let opened = try await run { await $0.openAssistant(presenter: presenter) }
        #expect(opened == .opened)
    }

    /// Runs `body` on the engine, moving virtual time until it returns.
    @discardableResult
    private func run<Value: Sendable>(_ body: @escaping @Sendable (AssistantEngine) async -> Value) async throws
        -> Value?
    {
        let call = harness.bed.start(body)
        for _ in 0..<200 {
            try await harness.bed.runUntilIdle()
            if let value = call.returnedValue { return value }
            guard harness.clock.advanceToNextDeadline() else { break }
        }
        return call.returnedValue
    }

    // MARK: - Callbacks

    /// An async callback fired: if it is the armed one, the call is made here and awaited.
    func fired(_ callback: HostCallbackReentrancyTests.Callback) async {
        guard let call = take(callback) else { return }
        let result = await perform(call)
        inner.withLock { $0 = result }
    }

    /// A synchronous callback fired: if it is the armed one, the call is started from here.
    func firedSync(_ callback: HostCallbackReentrancyTests.Callback) {
        guard let call = take(callback) else { return }
        harness.bed.start { _ in
            let result = await self.perform(call)
            self.inner.withLock { $0 = result }
            return true
        }
    }

    private func take(_ callback: HostCallbackReentrancyTests.Callback) -> HostCallbackReentrancyTests.Call? {
        armed.withLock { armed in
            guard let (armedCallback, call) = armed, armedCallback == callback else { return nil }
            armed = nil
            return call
        }
    }

    /// Makes `call` on the engine and describes what it returned.
    private func perform(_ call: HostCallbackReentrancyTests.Call) async -> String {
        let engine = self.engine
        let snapshot = await engine.chatSnapshot
        let lastReply = snapshot.messages.last { $0.role == .assistant }
        let ref = snapshot.messages.last { $0.productBlock != nil }?.productBlock?.products.first?.ref
        switch call {
        case .prepare:
            return
                "\(await engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage))"
        case .open: return "\(await engine.openAssistant(presenter: ReentrantPresenter.spare))"
        case .close:
            await engine.closeAssistant()
            return "closed"
        case .dismissedByPresenter:
            await engine.assistantWasDismissed()
            return "dismissed"
        case .send: return "\(await engine.sendMessage("Ещё вопрос"))"
        case .suggest: return "\(await engine.sendSuggest(at: 0))"
        case .retry: return "\(await engine.retryMessage(id: snapshot.messages.last?.id ?? "none"))"
        case .newChat:
            await engine.startNewChat()
            return "new chat"
        case .rate:
            return "\(await engine.rateReply(assistantMessageId: lastReply?.id ?? "none", rating: .like))"
        case .waitForReply:
            await engine.waitForReply()
            return "waited"
        case .impression, .tap:
            guard let ref else { return "no product on screen" }
            return
                "\(await engine.performAssistantProductAction(product: ref, action: call == .tap ? .tap : .visibleImpression))"
        case .replyButton:
            return "\(await engine.performReplyButton(assistantMessageId: lastReply?.id ?? "none", index: 0))"
        case .trackView:
            await engine.trackView(pageContext: Fixtures.homePage)
            return "tracked"
        case .triggerEvent:
            await engine.triggerEvent(
                events: [CustomEvent(type: "custom", name: "Custom", customProps: ["k": "v"])],
                pageContext: Fixtures.homePage)
            return "triggered"
        case .content:
            return "\(await engine.getContentBySelector(selector: "entry", pageContext: Fixtures.homePage) != nil)"
        case .setUser:
            await engine.setUser(userId: "alice")
            return "user set"
        case .resetIdentity:
            await engine.resetIdentity()
            return "reset"
        case .lock:
            await engine.lockPresentation()
            return "locked"
        case .unlock:
            await engine.unlockPresentation()
            return "unlocked"
        case .flushTracking:
            await engine.flushTracking()
            return "flushed"
        case .setOptions:
            await engine.setOptions(GravityOptions())
            return "options set"
        case .setHandler:
            await engine.setAssistantActionHandler(handler)
            return "handler set"
        case .setBuilder:
            await engine.setAssistantProductBlockBuilder(builder)
            return "builder set"
        case .setListeners:
            await engine.setPresentationLockListener { [weak self] _ in self?.firedSync(.lockListener) }
            await engine.setInAppCampaignHandler { [weak self] _ in await self?.fired(.campaign) }
            return "listeners set"
        case .render:
            guard let block = snapshot.messages.last(where: { $0.productBlock != nil })?.productBlock else {
                return "no block"
            }
            let rendering = await engine.renderProductBlock(
                block, layout: AssistantProductLayout(availableWidth: 40, isInteractionEnabled: true))
            return "rendered \(rendering?.height ?? 0)"
        case .inspect:
            let state = await (engine.preparationState, engine.dialogState, engine.isAssistantOpen)
            return "\(state)"
        case .shutdown:
            await engine.shutdown()
            return "shut down"
        }
    }
}

/// A presenter whose callbacks fire the world's armed call.
final class ReentrantPresenter: AssistantPresenter {
    /// Another presenter, for an `openAssistant` made from inside a callback.
    static let spare = ReentrantPresenter()

    let link = WorldLink()
    var world: ReentrantWorld? { link.world }

    var availability: AssistantPresenterAvailability { .available }

    func presentAssistant(_ chat: AssistantChatSnapshot) async { await world?.fired(.present) }
    func updateAssistant(_ chat: AssistantChatSnapshot) async { await world?.fired(.update) }
    func dismissAssistant() async { await world?.fired(.dismiss) }
}

/// An action handler whose `handle` fires the world's armed call.
final class ReentrantHandler: AssistantActionHandler {
    let link = WorldLink()
    var world: ReentrantWorld? { link.world }

    func canHandle(_ action: AssistantAction) -> Bool { true }
    func handle(_ action: AssistantAction) async { await world?.fired(.handle) }
}

/// A block builder whose `build` fires the world's armed call (as a task: it is synchronous).
final class ReentrantBuilder: AssistantProductBlockBuilder {
    struct Rendering: AssistantProductBlockRendering { let height: Int }

    let link = WorldLink()
    var world: ReentrantWorld? { link.world }

    func build(block: AssistantProductBlock, layout: AssistantProductLayout) -> any AssistantProductBlockRendering {
        world?.firedSync(.builder)
        return Rendering(height: 3)
    }
}

/// The world a host object fires, held weakly: the world owns its host objects.
final class WorldLink: Sendable {
    private struct Weak { weak var world: ReentrantWorld? }
    private let state = Locked(Weak())

    var world: ReentrantWorld? {
        get { state.withLock { $0.world } }
        set { state.withLock { $0.world = newValue } }
    }
}
