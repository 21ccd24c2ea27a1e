import Foundation

/// The shopping assistant engine: one per app or user session (§ 0), several may live in
/// one process.
///
/// Every rule lives in `EngineMachine`, a value type the actor owns. Each public method feeds
/// it an event and performs the `EngineAction`s it returns, in `run(_:)`, the one place where
/// the engine does anything: send requests, keep deadlines, call the host, resume callers.
/// Everything that happens meanwhile (an answer, a deadline, the presenter returning) is fed
/// back as an event. The actor decides nothing. See docs/ARCHITECTURE.md.
///
/// Host callbacks (`AssistantPresenter`, `AssistantActionHandler`, the in-app campaign
/// handler) are called one at a time, in order, from a serial queue; the synchronous ones
/// (`canHandle`, the block builder) are called from the actor.
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
    /// Time on the engine's clock since it was created; deadlines are kept on it.
    let elapsed: @Sendable () -> Duration

    // MARK: - The rules

    var machine: EngineMachine

    // MARK: - Host objects

    var builder: (any AssistantProductBlockBuilder)?
    var handler: (any AssistantActionHandler)?
    /// The presenter of each presentation still on screen, held weakly: a presenter that goes
    /// away counts as a dismissal (O5).
    var presenters: [OpeningID: WeakPresenter] = [:]
    /// The presenter `openAssistant` was given, until the machine names its presentation.
    var presenterBeingOpened: (any AssistantPresenter)?
    var lockListener: (@Sendable (PresentationLocks) -> Void)?
    var inAppCampaignHandler: (@Sendable (InAppCampaign) async -> Void)?

    // MARK: - Execution (mechanism only)

    /// Callers parked until the machine completes their call.
    var parked: [CallID: CheckedContinuation<CallResult, Never>] = [:]
    /// Parked callers no longer counted as runnable work (replay quiescence).
    var parkedCounted: Set<CallID> = []
    var nextCall: UInt64 = 0
    /// Requests in flight, so that a stale one can be let go.
    var requests: [RequestID: Task<Void, Never>] = [:]
    var timers = EngineTimers()
    /// The task sleeping until `tickerTarget`, the earliest deadline, if any.
    var ticker: Task<Void, Never>?
    var tickerTarget: Duration?
    /// Counts the tickers started, so that a replaced one that wakes anyway knows it.
    var tickerGeneration: UInt64 = 0
    /// The longest the ticker sleeps at once, or `nil` to sleep until the deadline: a second
    /// on the system's clocks, which keep a cancelled sleep until it was to end, and the
    /// ticker is cancelled after nearly every message (see `SlicedSleep`).
    let tickerSlice: Duration?
    /// Host callbacks waiting their turn, and whether the task that performs them runs.
    var hostQueue: [(number: UInt64, call: HostCall)] = []
    var hostQueueRunning = false
    /// Set while a request's own task feeds its answer to the machine: host calls the answer
    /// queues are then performed by that task once the event has run, instead of by a new one.
    var answerTaskDrains = false
    /// The tracking an answer caused, held while the answer's first host call (the reply's
    /// update) is on its way, so that its delivery does not compete with the reply. It leaves as soon as anything else happens on the engine (that
    /// host call returning, another answer, a call, a deadline) or a flush asks for it, so
    /// tracking keeps its order and never waits for a presenter that does not return.
    var trackingHeldForAnswer: [Tracker.Job] = []
    var lastHostCall: UInt64 = 0
    /// Completions that follow host calls in the same batch of actions: they take effect once
    /// that host call has returned, so a call returns after the host saw what it caused.
    var completionsAfterHostCall: [UInt64: [(call: CallID, result: CallResult)]] = [:]

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - configuration: the key, the section, the services' URLs and what is reported (B1).
    ///   - transport: the only network boundary; `URLSessionTransport` in production.
    ///   - clock: drives the 10 s and 120 s timeouts; a manual clock in tests.
    ///   - identityStore: where the SDK-managed uid persists (B3).
    ///   - uuid: generates thread and message IDs; deterministic in tests.
    ///   - logger: where diagnostics go; by default one at the configuration's level (B2).
    public init(
        configuration: AssistantEngineConfiguration,
        transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(),
        identityStore: any IdentityStore = InMemoryIdentityStore(),
        uuid: @escaping @Sendable () -> UUID = { UUID() },
        logger: AssistantLogger? = nil
    ) {
        self.init(
            configuration: configuration, transport: transport, clock: clock, identityStore: identityStore, uuid: uuid,
            logger: logger, activity: nil)
    }

    /// The same, counting the engine's runnable work on `activity`, so that a replay on
    /// virtual time can tell when nothing can run (transcripts, tests).
    package init(
        configuration: AssistantEngineConfiguration,
        transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(),
        identityStore: any IdentityStore = InMemoryIdentityStore(),
        uuid: @escaping @Sendable () -> UUID = { UUID() },
        logger: AssistantLogger? = nil,
        activity: ActivityMonitor?,
        tickerSlice: Duration? = nil
    ) {
        self.activity = activity
        self.configuration = configuration
        self.clock = clock
        self.tickerSlice = tickerSlice ?? SlicedSleep.slice(for: clock)
        elapsed = Self.stopwatch(on: clock)
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
        tracker = Tracker(
            gravity: gravity, call: call("tracking"), activity: activity,
            logCapacity: configuration.trackingLogCapacity)
        identityStore.setWarningHandler { [logger] in logger.log(.error, "identity store: \($0)") }
        machine = EngineMachine(
            settings: EngineMachine.Settings(
                section: configuration.section, appVersion: configuration.appVersion, options: configuration.options,
                contentSettings: configuration.contentSettings),
            storedUID: identityStore.loadUid())
    }

    private static func stopwatch(on clock: any Clock<Duration>) -> @Sendable () -> Duration {
        func start<C: Clock>(_ clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
            let start = clock.now
            return { start.duration(to: clock.now) }
        }
        return start(clock)
    }

    // MARK: - Registration (G1)

    /// Registers the host's product block builder. Required before `prepareAssistant` (G1).
    public func setAssistantProductBlockBuilder(_ builder: any AssistantProductBlockBuilder) {
        self.builder = builder
        handle { $0.builderRegistered() }
    }

    /// Registers the host's action handler. Required before `prepareAssistant` (G1). Which
    /// reply buttons are offered follows the new handler's `canHandle` (AC4).
    public func setAssistantActionHandler(_ handler: any AssistantActionHandler) {
        self.handler = handler
        handle { $0.handlerRegistered(canHandle: handler.canHandle) }
    }

    // MARK: - Inspection

    /// The state of the latest preparation (P1); an older call, late or cancelled, never changes it (P2).
    public var preparationState: AssistantPreparationState { machine.preparationState }

    /// D1: the dialog state, independent of preparation.
    public var dialogState: AssistantDialogState { machine.dialogState }

    /// B6: who holds the presentation lock.
    public var presentationLocks: PresentationLocks { machine.locks }

    /// Whether the chat is presented (or still opening or closing).
    public var isAssistantOpen: Bool { machine.isAssistantOpen }

    /// The chat model as a presenter would see it now.
    public var chatSnapshot: AssistantChatSnapshot { machine.snapshot() }

    /// The canonical `user.uid`, once Gravity returned one (S3).
    public var canonicalUserId: String? { machine.canonicalUserId }

    /// The current dialog's thread ID, if a dialog has started (D15).
    public var currentThreadId: String? { machine.currentThreadId }

    /// The latest lifecycle events and tracking URLs attempted, oldest first; the log keeps
    /// the newest `configuration.trackingLogCapacity` records.
    public var trackingLog: [TrackingRecord] { tracker.log }

    /// Suspends until every queued lifecycle event and tracking URL has been attempted, or the
    /// calling task is cancelled.
    public func flushTracking() async {
        releaseHeldTracking()  // held only to let a reply reach the screen first
        await tracker.flush()
    }
}

/// A presenter held weakly (O5).
struct WeakPresenter {
    weak var presenter: (any AssistantPresenter)?
}
