import Foundation

/// The shopping assistant engine: one per app or user session (§ 0), several may live in
/// one process.
///
/// The actor owns every piece of mutable state. The rules live in value-type machines
/// (`PreparationMachine`, `PresentationMachine`, `DialogMachine`, `ProductActionLedger`);
/// each public method feeds the machine an event and executes the actions it returns. Every
/// async result comes back tagged with the preparation, dialog, opening or identity it
/// belongs to, and the machine drops it when that tag is stale (P2, D13, D17, PR8).
///
/// Host callbacks (`AssistantPresenter`, `AssistantActionHandler`,
/// `AssistantProductBlockBuilder`) are `Sendable` protocols called from this actor, in order.
public actor AssistantEngine {
    // MARK: - Seams

    let configuration: AssistantEngineConfiguration
    let clock: any Clock<Duration>
    let identityStore: any IdentityStore
    let makeUUID: @Sendable () -> UUID
    /// The engine's logger; set a listener to see what passes the level (B2).
    public nonisolated let logger: AssistantLogger
    let gravity: GravityClient
    let shopping: ShoppingClient
    let tracker: Tracker
    /// Counts runnable work for deterministic replay; `nil` in production.
    let activity: ActivityMonitor?

    // MARK: - State

    var identity: IdentityState
    /// The `options` and `data[].options` of the next Gravity requests (`setOptions`).
    var gravityOptions: GravityOptions
    var contentSettings: GravityContentSettings
    var preparation = PreparationMachine()
    /// The latest ready start screen; new dialogs start from it (D14, D16).
    var latestReady: PreparedAssistant?
    var presentation = PresentationMachine()
    var dialog = DialogMachine()
    var ledger = ProductActionLedger()

    /// Messages derived from dialog entries, reused while their entry's revision and the
    /// scope (opening, dialog, identity, handler) stay the same.
    var snapshotCache: [(revision: UInt64, message: AssistantChatMessage)] = []
    var snapshotCacheScope: SnapshotCacheScope?
    /// Changes when the action handler is replaced: button availability is its answer (AC4).
    var handlerRevision: UInt64 = 0

    var builder: (any AssistantProductBlockBuilder)?
    var handler: (any AssistantActionHandler)?
    weak var presenter: (any AssistantPresenter)?
    var lastPublished: AssistantChatSnapshot?
    /// A presenter call is under way; later snapshots wait in `pendingSnapshot`.
    var delivering = false
    var pendingSnapshot: AssistantChatSnapshot?
    var lockListener: (@Sendable (PresentationLocks) -> Void)?
    var inAppCampaignHandler: (@Sendable (InAppCampaign) async -> Void)?

    var nextPreparation: UInt64 = 0
    var prepareWaiters: [PreparationID: CheckedContinuation<AssistantPrepareResult, Never>] = [:]
    var preparationWork: [PreparationID: [Task<Void, Never>]] = [:]
    var dialogRequests: [DialogTag: Task<Void, Never>] = [:]
    var replyTimers: [DialogTag: Task<Void, Never>] = [:]
    var historyReads: [DialogTag: Task<Void, Never>] = [:]
    var dialogIdleWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    var nextWaiterID: UInt64 = 0
    /// Host navigation that waits for the chat to finish closing (PR10, AC5).
    var afterClose: [AssistantAction] = []

    /// - Parameters:
    ///   - transport: the only network boundary; URLSession in production.
    ///   - clock: drives the 10 s and 120 s timeouts; a manual clock in tests.
    ///   - identityStore: where the SDK-managed uid persists (B3).
    ///   - uuid: generates thread and message IDs; deterministic in tests.
    public init(
        configuration: AssistantEngineConfiguration,
        transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(),
        identityStore: any IdentityStore = InMemoryIdentityStore(),
        uuid: @escaping @Sendable () -> UUID = { UUID() },
        logger: AssistantLogger? = nil,
        activity: ActivityMonitor? = nil
    ) {
        self.activity = activity
        self.configuration = configuration
        self.clock = clock
        self.identityStore = identityStore
        self.makeUUID = uuid
        let logger = logger ?? AssistantLogger(level: configuration.logLevel)
        logger.addSecret(configuration.apiKey)
        self.logger = logger
        func call(_ service: String) -> WireCall {
            WireCall(transport: transport, logger: logger, service: service, userAgent: configuration.userAgent)
        }
        gravity = GravityClient(
            baseURL: configuration.gravityBaseURL, apiKey: configuration.apiKey, section: configuration.section,
            device: GravityDevice(userAgent: configuration.userAgent, id: configuration.deviceId),
            call: call("gravity"))
        shopping = ShoppingClient(baseURL: configuration.shoppingBaseURL, call: call("shopping"))
        tracker = Tracker(gravity: gravity, call: call("tracking"), activity: activity)
        identityStore.setWarningHandler { [logger] in logger.log(.error, "identity store: \($0)") }
        identity = IdentityState(storedUID: identityStore.loadUID())
        gravityOptions = configuration.options
        contentSettings = configuration.contentSettings
    }

    // MARK: - Registration (G1)

    /// Registers the host's product block builder. Required before `prepareAssistant` (G1).
    public func setAssistantProductBlockBuilder(_ builder: any AssistantProductBlockBuilder) {
        self.builder = builder
    }

    /// Registers the host's action handler. Required before `prepareAssistant` (G1).
    public func setAssistantActionHandler(_ handler: any AssistantActionHandler) {
        self.handler = handler
        handlerRevision += 1
    }

    // MARK: - Inspection

    /// P1: the preparation state.
    public var preparationState: AssistantPreparationState { preparation.publicState }

    /// D1: the dialog state, independent of preparation.
    public var dialogState: AssistantDialogState { dialog.publicState }

    /// B6: who holds the presentation lock.
    public var presentationLocks: PresentationLocks { presentation.locks }

    /// Whether the chat is presented (or still closing).
    public var isAssistantOpen: Bool { presentation.state != .closed }

    /// The chat model as a presenter would see it now.
    public var chatSnapshot: AssistantChatSnapshot { makeSnapshot() }

    /// The canonical `user.uid`, once Gravity returned one (S3).
    public var canonicalUserID: String? { identity.canonicalUID }

    /// The current dialog's thread ID, if a dialog has started (D15).
    public var currentThreadID: String? { dialog.context?.threadId }

    /// Lifecycle events and tracking URLs attempted so far, in order: the latest 1,000 at least.
    public var trackingLog: [TrackingRecord] { tracker.log }

    /// Starts engine work as a task that the activity monitor counts until it ends.
    @discardableResult
    nonisolated func spawn(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if let activity { return activity.spawn(body) }
        return Task(operation: body)
    }

    /// Suspends until every queued lifecycle event and tracking URL has been attempted.
    public func flushTracking() async { await tracker.flush() }
}
