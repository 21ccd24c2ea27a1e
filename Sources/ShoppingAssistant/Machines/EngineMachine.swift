import Foundation

/// Every rule of behavior.md, as one value type.
///
/// The engine actor owns one of these. Each public call and each thing that happens (an
/// answer, a deadline, a presenter returning) is an event: a `mutating func` named after what
/// happened, which moves the state and returns the `EngineAction`s to perform. The actor
/// performs them and feeds what it learns back as events; it decides nothing.
///
/// The state is made of sub-machines, one per rule section: `identity` (B3, S3, S4),
/// `preparation` (P1–P8, C1–C8, G1), `presentation` (O1–O9, B6, PR10 ordering), `dialog`
/// (D1–D17) and `products` (PR4–PR9). The root's events live in extensions named after their
/// section (`EngineMachine+Preparation.swift`, …); docs/ARCHITECTURE.md maps rule IDs to them.
///
/// Pure: no I/O, no clock, no JSON or bytes. Requests are values the actor's clients encode,
/// answers arrive decoded, and host callbacks the rules need answers from (the action
/// handler's synchronous `canHandle`, AC4) come in as arguments.
struct EngineMachine: Sendable {
    /// What the engine was configured with, as the rules need it.
    struct Settings: Sendable, Hashable {
        /// Gravity `sec` and the Shopping API tenant (S2).
        var section: String
        /// `attributes.app_version` (B4).
        var appVersion: String
        /// The `options` and `data[].options` of Gravity requests (`setOptions`).
        var options: GravityOptions
        var contentSettings: GravityContentSettings
        /// Each Gravity call's own deadline (B13).
        var gravityTimeout: Duration = .seconds(10)
        /// The push-permission status the host last set (`setNotificationPermissionStatus`,
        /// B11): `device.permission` of every request decided from then on.
        var notificationPermission = NotificationPermissionStatus.unknown
        /// Whether the engine has a dialog store: the dialog is saved on every change (D18).
        var keepsDialog = false
        /// How long after its last change a stored dialog is still restored (D20).
        var dialogRetention: Duration = .seconds(24 * 60 * 60)
    }

    /// A Gravity call of the host waiting for its answer.
    enum HostRequest: Sendable, Hashable {
        case trackView
        case triggerEvent
        case content(selector: String)
    }

    /// An identity change waiting for the chat to finish closing, so that the close is still
    /// the old user's (AN3).
    enum IdentityChange: Sendable, Hashable {
        case setUser(userId: String, sessionId: String?)
        case reset
        /// `restoreUserId`: a uid the app kept elsewhere (B14).
        case restoreUID(String)
    }

    var settings: Settings
    var identity: IdentityState
    var preparation = PreparationMachine()
    var presentation = PresentationMachine()
    var dialog = DialogMachine()
    /// The dialog an earlier run stored, until the first opening after a `.ready` preparation
    /// restores or forgets it (D18, D20); gone as soon as the dialog changes in this run.
    var restorable: StoredDialog?
    var products = ProductActionLedger()

    /// G1: a builder and a handler are registered.
    var hasBuilder = false
    var hasHandler = false

    var nextPreparation: UInt64 = 0
    /// Whose `prepareAssistant` call each preparation answers.
    var preparers: [PreparationID: CallID] = [:]
    /// Host Gravity calls waiting for their answer; `abandoned` once their caller was
    /// cancelled and returned (the answer is still read for its `user`, B9).
    var hostRequests: [CallID: (request: HostRequest, abandoned: Bool)] = [:]
    /// The `openAssistant` call whose presenter the chat being presented is on.
    var presentingCall: CallID?
    /// Host callbacks under way, by ID, with what each was for.
    var hostCalls: [HostCallID: HostCallPurpose] = [:]
    var nextHostCall: UInt64 = 0
    /// Gravity requests waiting for the first answer of a session (B8).
    var sessionGate = SessionGate()
    /// Content calls waiting for the rest of their instant, and merged `/choose` requests on
    /// their way (B16).
    var contentBatcher = ContentBatcher()
    /// Gravity requests sent and not answered yet, with their deadline on the engine's clock;
    /// one that passed its deadline (B13) is not.
    var gravityInFlight: [RequestID: Duration] = [:]
    /// Gravity requests sent as nobody (`"user":{}`) and not answered yet: each opens a profile
    /// of its own, taken only while the engine knows none (B8).
    var sentAsNobody: Set<RequestID> = []
    /// Queued records raised before any identity was known, waiting to learn who they leave as
    /// until the session's first request has answered (B8, DL7), by owner request.
    var ownerWaiters: [UInt64] = []
    /// In-app campaigns on their way to the host, one at a time (B6).
    var campaigns = InAppCampaignQueue()
    /// Completions and notes held until the host has seen what they are about (`HostMilestone`).
    var held = HeldActions()
    /// The newest dialog revision the presenter of the chat shown has returned from.
    var deliveredRevision: UInt64 = 0
    /// The `chat_message_send` of the message in flight, bound to its identity and page,
    /// held until the message's outcome (see `run(_:user:page:)` of the dialog's actions).
    var trackingAfterOutcome: [TrackingJob] = []
    /// Tracking caused by an event that also gave the presenter a snapshot: it leaves with the
    /// next event (usually the presenter returning), so that delivering it does not compete
    /// with the presenter for the machine, and never waits for a presenter that does not return.
    var trackingAfterPresenter: [TrackingJob] = []
    /// Identity changes waiting for the chat to close.
    var pendingIdentityChanges: [IdentityChange] = []
    /// The uid the app's listener last heard of (B14); `.none` before the first report.
    var reportedUID: String??
    /// A uid an event brought for the listener (an answer's, a restored one, `nil` for a reset).
    var uidToReport: String??
    /// `getUserId()` callers waiting for a first answer on its way (B14, B8).
    var userIdCalls: [CallID] = []
    /// The engine was shut down (H2): every later call is refused and nothing else happens.
    var isShutDown = false
    /// The wall clock's time as the event being decided happened: the `eventTime` of what it
    /// raises (DL6). Time is data here; the actor sets it before each event.
    var wallNow = Date(timeIntervalSince1970: 0)
    /// The engine's clock as the event being decided happened, as the time since the engine
    /// began (the offsets its deadlines are kept in): when a Gravity call's deadline falls, and
    /// whether an in-app campaign is still relevant (B15). Set by the actor before each event.
    var clockNow: Duration = .zero

    init(settings: Settings, storedUID: String?) {
        self.settings = settings
        identity = IdentityState(storedUID: storedUID)
        dialog.keepsReceived = settings.keepsDialog
    }

    // MARK: - Registration (G1, AC4)

    /// `setAssistantProductBlockBuilder`.
    mutating func builderRegistered() -> [EngineAction] {
        hasBuilder = true
        return []
    }

    /// `setAssistantActionHandler`: which buttons are offered is asked again (AC4).
    mutating func handlerRegistered(canHandle: (AssistantAction) -> Bool) -> [EngineAction] {
        hasHandler = true
        let before = dialog.revision
        dialog.handlerChanged(canHandle: canHandle)
        return dialog.revision == before ? [] : publish()
    }

    // MARK: - Inspection

    /// P1.
    var preparationState: AssistantPreparationState { preparation.publicState }
    /// D1.
    var dialogState: AssistantDialogState { dialog.publicState }
    /// B6.
    var locks: PresentationLocks { presentation.locks }
    /// The chat is presented, or still being presented or closed.
    var isAssistantOpen: Bool { !presentation.isClosed }
    /// S3.
    var canonicalUserId: String? { identity.canonicalUID }
    /// D15.
    var currentThreadId: String? { dialog.context?.threadId }

    /// The chat model as a presenter sees it now (O9, D16, C7, D2), under the refs of the
    /// current opening (PR6). Cheap: it shares the dialog's storage.
    func snapshot() -> AssistantChatSnapshot {
        let start = dialog.context?.start.prepared.configuration ?? preparation.lastReady?.configuration
        let scope = ChatScope(
            opening: presentation.currentOpening?.value ?? 0, dialog: dialog.epoch, identity: identity.epoch)
        let sending = dialog.isSending
        // C7: the start screen's suggests before the first message, the last reply's after; none while sending (D2).
        let suggests = dialog.items.isEmpty ? (start?.suggests ?? []) : (sending ? [] : dialog.replySuggests)
        return AssistantChatSnapshot(
            title: start?.title ?? "", subtitle: start?.subtitle,
            messages: AssistantChatMessages(
                items: dialog.items, turns: dialog.turns, scope: scope, restoredOffers: dialog.restoredOffers),
            suggests: suggests, isSending: sending,
            // D2: no second message in flight; P5, D14: a new dialog needs a ready start screen.
            canSend: !sending && (dialog.context != nil || preparation.lastReady != nil), changedMessageIndices: nil)
    }

    /// The revision of what `snapshot()` shows.
    var snapshotRevision: UInt64 { dialog.revision }

    // MARK: - Shared helpers

    /// The user, page (with the SDK attributes, B4), options and push-permission status (B11) a
    /// Gravity request made now carries; `user` overrides the current identity (AN3).
    ///
    /// Everything in it is what it is when the request is decided — when the host's call is
    /// made, when a lifecycle event happens — and stays so until the request is sent: a
    /// lifecycle event queued behind others, or a request waiting at the session gate (B8), keeps
    /// the permission of its moment, as it keeps its user and page (AN3).
    func envelope(_ page: PageContext, user: GravityUser? = nil) -> GravityClient.Envelope {
        envelope(sent: sdkContext(page), user: user)
    }

    /// The same, for a page already as sent to Gravity (`sdkContext`).
    func envelope(sent page: PageContext, user: GravityUser? = nil) -> GravityClient.Envelope {
        GravityClient.Envelope(
            user: user ?? identity.wire, context: page, options: settings.options,
            permission: settings.notificationPermission)
    }

    /// The page as it is sent to Gravity (B4).
    func sdkContext(_ page: PageContext) -> PageContext {
        page.withSDKAttributes(
            appVersion: settings.appVersion, sdkVersion: AssistantEngineConfiguration.wireSDKVersion,
            platform: AssistantEngineConfiguration.platform)
    }

    /// Tracking URLs, requested as the current user (or `user`, AN3); identical URLs within one
    /// action once (AN5).
    func trackURLs(_ urls: [String], user: GravityUser? = nil) -> [EngineAction] {
        trackURLs(urls.map { TrackingURL($0) }, user: user)
    }

    /// Tracking URLs as a reply holds them (AN5, AN7): their text is made where they are requested.
    func trackURLs(_ urls: some RandomAccessCollection<TrackingURL>, user: GravityUser? = nil) -> [EngineAction] {
        jobs(urls, user: user).map { [.track($0)] } ?? []
    }

    /// The jobs of one `.track` of `urls`, as the current user (or `user`, AN3), identical URLs
    /// once (AN5); `nil` when there are none. A single URL takes no array: impressions come
    /// many a second while a carousel scrolls.
    func jobs(_ urls: some RandomAccessCollection<TrackingURL>, user: GravityUser? = nil) -> TrackingJobs? {
        guard !urls.isEmpty else { return nil }
        let user = user ?? identity.wire
        // The usual impression: one URL.
        if urls.count == 1 { return TrackingJobs(.url(urls[urls.startIndex], user: user)) }
        var unique: [TrackingURL] = []
        if urls.count <= 8 {  // the usual one or two: no set to build
            for url in urls where !unique.contains(url) { unique.append(url) }  // AN5
        } else {
            var seen: Set<TrackingURL> = []
            unique = urls.filter { seen.insert($0).inserted }  // AN5
        }
        return TrackingJobs(unique.map { .url($0, user: user) })
    }

    /// A lifecycle event through `/event` (AN1), bound to the current identity (or `user`)
    /// and the dialog's page (or `sentPage`, a page as sent to Gravity) (AN2, AN3). Properties
    /// are IDs only, never chat text; those without a value are left out.
    func lifecycle(
        _ type: LifecycleEvent, props: KeyValuePairs<String, String?>, user: GravityUser? = nil,
        sentPage: PageContext? = nil
    ) -> EngineAction {
        // The dialog's page as sent was made once, when the dialog started (B4): a message's
        // events do not make it again, each with its dictionary of SDK attributes.
        let page =
            sentPage ?? dialog.context?.start.page
            ?? sdkContext(preparation.lastReady?.pageContext ?? PageContext(type: .other))
        var customProps = [String: String](minimumCapacity: props.count)
        for (key, value) in props {
            if let value { customProps[key] = value }
        }
        let event = GravityCustomEvent(
            type: type.rawValue, name: type.displayName, customProps: customProps, eventTime: EventTime.format(wallNow))
        // An event bound to another user than the current one (an ended identity's, AN3) is of an
        // older identity: its answer's `user` changes nothing (B9).
        let epoch = user == nil ? identity.epoch : 0
        return .track(TrackingJobs(.event(event, envelope: envelope(sent: page, user: user), identityEpoch: epoch)))
    }

    /// A new snapshot for an open presenter, and the impressions of replies it shows for the
    /// first time (AN7).
    mutating func publish() -> [EngineAction] {
        guard presentation.currentOpening != nil else { return [] }
        return run(presentation.snapshotChanged())
    }

    /// Resumes `call` with `result`.
    func complete(_ call: CallID, _ result: CallResult) -> EngineAction { .complete(call, result) }
}

/// The lifecycle events of wire.md § Assistant lifecycle events, one name each.
enum LifecycleEvent: String, Sendable, Hashable, CaseIterable {
    case dialogOpen = "chat_dialog_open"
    case messageSend = "chat_message_send"
    case messageReply = "chat_message_reply"
    case messageError = "chat_message_error"
    case feedback = "chat_feedback"
    case action = "chat_action"
    case dialogClose = "chat_dialog_close"
    case dialogEnd = "chat_dialog_end"

    /// The event's `name` on the wire: its type in words (`chat dialog open`). Spelled out:
    /// Foundation's `replacingOccurrences` goes through `NSString` on Linux, and took about
    /// 40 % of a message's machine work.
    var displayName: String {
        switch self {
        case .dialogOpen: "chat dialog open"
        case .messageSend: "chat message send"
        case .messageReply: "chat message reply"
        case .messageError: "chat message error"
        case .feedback: "chat feedback"
        case .action: "chat action"
        case .dialogClose: "chat dialog close"
        case .dialogEnd: "chat dialog end"
        }
    }
}
