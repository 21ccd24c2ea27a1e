import Foundation
import Testing

@testable import ShoppingAssistant

/// Values and drivers for the machine tests: construct a machine, feed it events, compare
/// the actions it returns with `==`.
enum MachineFixtures {
    static let selector = "assistant"
    static let section = "sec-1"
    static let appVersion = "2.0"
    static let page = PageContext(type: .product, data: ["SKU-1"], location: "app://product/1")
    static let otherPage = PageContext(type: .cart, data: ["SKU-2"], location: "app://cart")
    static let configJSON =
        #"{"enabled":true,"title":"Helper","subtitle":"Ask me","suggests":["Gift ideas","Cheaper"]}"#
    static let configuration = AssistantConfiguration(
        enabled: true, title: "Helper", subtitle: "Ask me", suggests: ["Gift ideas", "Cheaper"])
    static let settings = EngineMachine.Settings(
        section: section, appVersion: appVersion, options: GravityOptions(), contentSettings: GravityContentSettings())

    static func call(_ value: UInt64) -> CallID { CallID(value: value) }
    /// A call made from inside a host callback (H1).
    static func callFromInsideAHostCallback(_ value: UInt64) -> CallID {
        CallID(value: value, insideHostCallback: true)
    }
    static func preparation(_ value: UInt64) -> PreparationID { PreparationID(value: value) }
    static func opening(_ value: UInt64) -> OpeningID { OpeningID(value: value) }

    /// A machine with a builder and a handler registered (G1) and a stored uid.
    static func machine(storedUID: String? = "uid-1", canHandle: @escaping (AssistantAction) -> Bool = { _ in true })
        -> EngineMachine
    {
        var machine = EngineMachine(settings: settings, storedUID: storedUID)
        _ = machine.builderRegistered()
        _ = machine.handlerRegistered(canHandle: canHandle)
        return machine
    }

    // MARK: - Gravity

    /// A `/choose` answer with one variation per `json` (nil: a content without custom.json).
    static func content(
        _ jsons: [String?] = [configJSON], selector: String = selector, campaignId: String = "c-1",
        loadURLs: [String] = []
    ) -> ContentResponse {
        let variations = jsons.map { json in
            CampaignVariation(
                campaignId: campaignId, experienceId: nil, variationId: nil, decisionId: nil,
                contents: [
                    CampaignContent(
                        contentId: "ct-1", contentType: "custom", deliveryMethod: "inline",
                        custom: CustomModel(json: json),
                        events: loadURLs.isEmpty ? [] : [ContentEvent(type: "load", urls: loadURLs)],
                        variables: loadURLs.isEmpty ? nil : ["onLoad": ["action": "load"]])
                ])
        }
        return ContentResponse(data: [Campaign(selector: selector, payload: variations)])
    }

    static func answered(_ response: ContentResponse, uid: String? = "uid-1")
        -> Result<GravityClient.Answer<ContentResponse>, WireFailure>
    {
        .success(GravityClient.Answer(value: response, user: uid.map { GravityAnsweredUser(uid: $0, ses: nil) }))
    }

    static func failure(_ code: AssistantError.Code, uncertain: Bool = false) -> WireFailure {
        .failed(AssistantError(code: code, message: "\(code)"), uncertain: uncertain)
    }

    /// The envelope a Gravity request of the stored-uid user carries from `page`.
    static func envelope(_ page: PageContext = page, user: GravityUser = GravityUser(uid: "uid-1"))
        -> GravityClient
        .Envelope
    {
        GravityClient.Envelope(
            user: user,
            context: page.withSDKAttributes(
                appVersion: appVersion, sdkVersion: AssistantEngineConfiguration.wireSDKVersion,
                platform: AssistantEngineConfiguration.platform),
            options: GravityOptions())
    }

    /// `eventTime` as a machine test stamps it: its wall clock stays at the epoch (DL6).
    static let epochTime = "1970-01-01T00:00:00.000Z"

    /// A lifecycle event as wire.md names it, bound to `user` and `page` (AN1–AN3).
    /// `identityEpoch` is the identity it was sent for: the current one's (1 unless the test
    /// changed it), or 0 for an ended identity's (AN3), whose answer changes nothing (B9).
    static func event(
        _ type: String, _ props: [String: String], page: PageContext = page,
        user: GravityUser = GravityUser(uid: "uid-1"), identityEpoch: UInt64 = 1
    ) -> EngineAction {
        let name = type.replacingOccurrences(of: "_", with: " ")
        return .track([
            .event(
                GravityCustomEvent(type: type, name: name, customProps: props, eventTime: epochTime),
                envelope: envelope(page, user: user),
                identityEpoch: identityEpoch)
        ])
    }

    /// The tracking jobs of `actions`, in order, as one list.
    static func trackedJobs(_ actions: [EngineAction]) -> [TrackingJob] {
        actions.flatMap { action -> [TrackingJob] in
            if case .track(let jobs) = action { return Array(jobs) } else { return [] }
        }
    }

    /// One `.track` action of `jobs`, which must not be empty.
    static func track(_ jobs: [TrackingJob]) -> EngineAction {
        guard let batch = TrackingJobs(jobs) else { preconditionFailure("a .track action with no job") }
        return .track(batch)
    }

    /// The jobs of a `.track` action built by `event(_:_:)`.
    static func jobs(_ action: EngineAction) -> [TrackingJob] { trackedJobs([action]) }

    // MARK: - Shopping API

    static func product(
        itemId: String = "p-1", sku: String? = "SKU-1",
        clicks: [String] = ["https://t.example/c1", "https://t.example/c1"],
        impressions: [String] = ["https://t.example/vi1"]
    ) -> JSONValue {
        var item: [String: JSONValue] = [
            "itemId": .string(itemId), "name": "Mug",
            "events": [
                ["type": "click", "urls": .array(clicks.map(JSONValue.string))],
                ["type": "visible_impression", "urls": .array(impressions.map(JSONValue.string))],
            ],
        ]
        if let sku { item["sku"] = .string(sku) }
        return .object(item)
    }

    static let supportButton: JSONValue = [
        "type": "button", "value": "Support", "action": "open_support_chat", "topic": "gifts",
    ]
    static let urlButton: JSONValue = [
        "type": "button", "value": "Delivery", "action": "follow_url", "url": "https://shop.example/delivery",
    ]

    /// A `/v1/messages` reply to `messageId`.
    static func reply(
        to messageId: String, assistantMessageId: String? = "am-1", products: [JSONValue] = [product()],
        buttons: [JSONValue] = [supportButton, urlButton], suggests: [String] = ["Cheaper", "For him"],
        impressions: [String] = ["https://t.example/ri"]
    ) throws -> ReplyContent {
        var body: [String: JSONValue] = [
            "threadId": "t", "messageId": .string(messageId), "text": "Here are ideas",
            "products": ["title": "Gifts", "items": .array(products)],
            "ui": ["suggests": .array(suggests.map(JSONValue.string)), "buttons": .array(buttons)],
            "events": [["type": "impression", "urls": .array(impressions.map(JSONValue.string))]],
        ]
        if let assistantMessageId { body["assistantMessageId"] = .string(assistantMessageId) }
        return try #require(ReplyContent(json: .object(body), idKey: .assistantMessageId))
    }

    /// A history holding `messageId` and, when `replyId` is given, the reply to it between
    /// replies to other messages (D5).
    static func history(messageId: String, replyId: String?) -> [HistoryMessage] {
        var messages = [
            HistoryMessage(id: "m-0", role: "user", replyTo: nil, json: ["id": "m-0", "text": "Earlier"]),
            HistoryMessage(
                id: "am-0", role: "assistant", replyTo: "m-0",
                json: ["id": "am-0", "replyTo": "m-0", "text": "Another answer"]),
            HistoryMessage(id: messageId, role: "user", replyTo: nil, json: ["id": .string(messageId)]),
        ]
        if let replyId {
            messages.append(
                HistoryMessage(
                    id: replyId, role: "assistant", replyTo: messageId,
                    json: ["id": .string(replyId), "replyTo": .string(messageId), "text": "From history"]))
        }
        return messages
    }

    // MARK: - Drivers

    /// `prepareAssistant` whose configuration's instant ends with no other content call (B16):
    /// what the call and the end of its instant returned.
    @discardableResult
    static func prepareAlone(
        _ machine: inout EngineMachine, _ call: CallID, selector: String = selector, page: PageContext = page,
        timeout: Duration = .seconds(10)
    ) -> [EngineAction] {
        machine.prepareCalled(call, selector: selector, page: page, timeout: timeout)
            + machine.timerFired(.contentWindow)
    }

    /// `getContentBySelector` whose instant ends with no other content call (B16): what the
    /// call and the end of its instant returned.
    @discardableResult
    static func contentAlone(
        _ machine: inout EngineMachine, _ call: CallID, selector: String, page: PageContext = page
    ) -> [EngineAction] {
        machine.contentCalled(call, selector: selector, page: page) + machine.timerFired(.contentWindow)
    }

    /// Prepares `selector` to `.ready` and returns what the last event returned.
    @discardableResult
    static func prepareReady(
        _ machine: inout EngineMachine, call: CallID = call(100), selector: String = selector,
        page: PageContext = page
    ) -> [EngineAction] {
        prepareAlone(&machine, call, selector: selector, page: page)
        let id = PreparationID(value: machine.nextPreparation)
        return machine.gravityAnswered(
            .configuration(id), .content(answered(content(selector: selector))), identityEpoch: machine.identity.epoch)
    }

    /// A machine whose preparation of `selector` is ready.
    static func readyMachine() -> EngineMachine {
        var machine = machine()
        prepareReady(&machine)
        return machine
    }

    /// Opens the chat and lets the presenter finish presenting; returns what that returned.
    @discardableResult
    static func open(_ machine: inout EngineMachine, call: CallID = call(200)) throws -> [EngineAction] {
        let actions = machine.openCalled(call, presenter: .available, presenterAlive: true)
        let present = try #require(
            hostCalls(actions).first { if case .present = $0.call { return true } else { return false } })
        return machine.hostCallFinished(present.id)
    }

    /// Sends `text` and returns the tag of its attempt in flight.
    static func send(
        _ machine: inout EngineMachine, _ text: String = "Gift ideas", messageId: String = "m-1",
        call: CallID = call(300)
    ) throws -> DialogTag {
        try sendReturningActions(&machine, text, messageId: messageId, call: call).tag
    }

    /// Sends `text` with the chat open: the tag of its attempt in flight, and the update with
    /// the "sending" snapshot, still under way.
    static func sendWithItsUpdate(
        _ machine: inout EngineMachine, _ text: String = "Gift ideas", messageId: String = "m-1",
        call: CallID = call(300)
    ) throws -> (tag: DialogTag, sending: HostCallID) {
        let (tag, actions) = try sendReturningActions(&machine, text, messageId: messageId, call: call)
        return (tag, try #require(hostCalls(actions).first?.id, "no update for the sending message: \(actions)"))
    }

    private static func sendReturningActions(
        _ machine: inout EngineMachine, _ text: String, messageId: String, call: CallID
    ) throws -> (tag: DialogTag, actions: [EngineAction]) {
        let actions = machine.sendCalled(call, text: text, messageId: messageId, newThreadId: "thread-1")
        let held = machine.held.entries.contains { $0.action == .complete(call, .send(.success(messageId))) }
        try #require(
            actions.last == .complete(call, .send(.success(messageId))) || held, "send refused: \(actions)")
        return (DialogTag(dialog: machine.dialog.epoch, messageId: messageId, attempt: 1), actions)
    }

    /// Sends a message and lands a reply to it.
    static func sendAndReply(
        _ machine: inout EngineMachine, messageId: String = "m-1", assistantMessageId: String = "am-1",
        buttons: [JSONValue] = [supportButton, urlButton]
    ) throws {
        let tag = try send(&machine, messageId: messageId)
        _ = machine.shoppingAnswered(
            .message(tag),
            .reply(
                .success(try reply(to: messageId, assistantMessageId: assistantMessageId, buttons: buttons))),
            canHandle: { _ in true })
    }

    /// Lets the presenter return from every host call under way, and from those that follow,
    /// until none is left; returns everything that returned.
    @discardableResult
    static func finishHostCalls(_ machine: inout EngineMachine) -> [EngineAction] {
        var all: [EngineAction] = []
        while let id = machine.hostCalls.keys.min(by: { $0.value < $1.value }) {
            all += machine.hostCallFinished(id)
        }
        return all
    }

    /// The ID the machine's next host call will get.
    static func nextHostCall(_ machine: EngineMachine) -> HostCallID { HostCallID(value: machine.nextHostCall + 1) }

    /// The host call under way for `purpose`.
    static func hostCall(_ machine: EngineMachine, _ purpose: HostCallPurpose) throws -> HostCallID {
        try #require(machine.hostCalls.first { $0.value == purpose }?.key, "no host call under way for \(purpose)")
    }

    /// Lets the host return from the call under way for `purpose`; what the machine returned.
    static func finish(_ machine: inout EngineMachine, _ purpose: HostCallPurpose) throws -> [EngineAction] {
        machine.hostCallFinished(try hostCall(machine, purpose))
    }

    /// The presenter's call under way, whatever it is.
    static func presenterCall(_ machine: EngineMachine) throws -> HostCallID {
        try #require(
            machine.hostCalls.first {
                switch $0.value {
                case .present, .update, .dismiss: return true
                case .handOver, .campaign: return false
                }
            }?.key, "no presenter call under way")
    }

    /// The host calls among `actions`, with their IDs.
    static func hostCalls(_ actions: [EngineAction]) -> [(id: HostCallID, call: HostCall)] {
        actions.compactMap { if case .callHost(let id, let call) = $0 { return (id, call) } else { return nil } }
    }

    /// The host calls among `actions`, without their IDs.
    static func hostCallKinds(_ actions: [EngineAction]) -> [HostCall] { hostCalls(actions).map(\.call) }

    /// The completions among `actions`.
    static func completions(_ actions: [EngineAction]) -> [EngineAction] {
        actions.filter { if case .complete = $0 { return true } else { return false } }
    }

    /// The tracking URLs queued by `actions`, in order.
    static func trackedURLs(_ actions: [EngineAction]) -> [String] {
        actions.flatMap { action -> [String] in
            guard case .track(let jobs) = action else { return [] }
            return jobs.compactMap { if case .url(let url, _) = $0 { return url.string } else { return nil } }
        }
    }

    /// `actions` without the Gravity calls' own deadlines (B13), for a test about something else.
    static func withoutGravityDeadlines(_ actions: [EngineAction]) -> [EngineAction] {
        actions.filter { action in
            switch action {
            case .startTimer(.gravity, _), .cancelTimer(.gravity): return false
            default: return true
            }
        }
    }

    /// `actions` without log lines.
    static func withoutLogs(_ actions: [EngineAction]) -> [EngineAction] {
        actions.filter { if case .log = $0 { return false } else { return true } }
    }
}

extension GravityEvent {
    /// The event as a machine test sends it: stamped at the epoch (DL6).
    func stamped() -> GravityEvent {
        var event = self
        event.fields["eventTime"] = .text(MachineFixtures.epochTime)
        return event
    }
}
