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
/// handler) run outside the engine's ordering, each channel in order (the presenter's calls
/// one at a time, hand-overs one at a time, campaigns one at a time), and any of them may call
/// and await any engine method (H1); the synchronous ones (`canHandle`, the block builder, the
/// lock listener) are called from the actor. `shutdown()` ends an engine (H2).
public actor AssistantEngine {
    // MARK: - Seams

    let configuration: AssistantEngineConfiguration
    let clock: any Clock<Duration>
    let identityStore: any IdentityStore
    /// Where the current dialog survives a restart (D18); `nil`: it lives in memory only.
    let dialogStore: (any DialogStore)?
    /// Writes to `dialogStore`, off the actor.
    let dialogWriter: DialogWriter?
    let makeUUID: @Sendable () -> UUID
    /// The engine's logger; set a listener to see what passes the level (B2).
    public nonisolated let logger: AssistantLogger
    let gravity: GravityClient
    let shopping: ShoppingClient
    /// Where `/event`, `/visit` and tracking URLs wait until Gravity has them (DL2).
    let outbox: Outbox
    /// The IDs of the records this engine hands the outbox.
    var recordIDs = RecordIDs()
    /// The wall clock: `eventTime` (DL6) and the queue's `maxAge` (DL4).
    let wallClock: @Sendable () -> Date
    /// Counts runnable work for deterministic replay; `nil` in production.
    let activity: ActivityMonitor?
    /// Time on the engine's clock since it was created; deadlines are kept on it.
    let elapsed: @Sendable () -> Duration

    // MARK: - The rules

    // `@exclusivity(unchecked)` on the state that `run(_:)` and every call touch: only the
    // actor reaches it, and no closure it hands out (to the machine, a task, the host) touches
    // it, so no two accesses can overlap; the run-time check costs a thread-local look-up and
    // a bookkeeping entry each time, several per call.
    @exclusivity(unchecked) var machine: EngineMachine

    // MARK: - Host objects

    var builder: (any AssistantProductBlockBuilder)?
    var handler: (any AssistantActionHandler)?
    /// The presenter of each presentation still on screen, held weakly: a presenter that goes
    /// away counts as a dismissal (O5).
    @exclusivity(unchecked) var presenters: [OpeningID: WeakPresenter] = [:]
    var lockListener: (@Sendable (PresentationLocks) -> Void)?
    /// The app's listener for the canonical uid (B14).
    var userIdListener: (@Sendable (String?) -> Void)?
    var inAppCampaignHandler: (@Sendable (InAppCampaign) async -> Void)?

    // MARK: - Execution (mechanism only)

    /// The public calls under way: parked callers, results not yet taken, offered presenters.
    @exclusivity(unchecked) var calls = CallsInProgress()
    /// Requests in flight, so that a stale one can be let go.
    @exclusivity(unchecked) var requests: [RequestID: Task<Void, Never>] = [:]
    /// The records kept for requests waiting at the session gate (B8), by request.
    @exclusivity(unchecked) var keptAtGate: [RequestID: UUID] = [:]
    /// Queued records raised before any identity, waiting to learn who they leave as (DL7), and
    /// which of them wait parked (not runnable work, for replay quiescence).
    @exclusivity(unchecked) var ownerRequests = OwnerRequests()
    /// Every task the engine started and that has not ended, for a shutdown to wait for (H2).
    let tasks = EngineTasks()
    @exclusivity(unchecked) var timers = EngineTimers()
    /// The task sleeping until `tickerTarget`: the earliest deadline, or an instant before it
    /// (or with no deadline left at all) where the ticker runs out (`letsTickerRunOut`).
    var ticker: Task<Void, Never>?
    var tickerTarget: Duration?
    /// Counts the tickers started, so that a replaced one that wakes anyway knows it.
    var tickerGeneration: UInt64 = 0
    /// The longest the ticker sleeps at once, or `nil` to sleep until the deadline: a second
    /// on the system's clocks, which keep a cancelled sleep until it was to end; the ticker is
    /// still cancelled there whenever an earlier deadline replaces it (see `SlicedSleep`).
    let tickerSlice: Duration?
    /// Whether a ticker no deadline needs any more is left to run out rather than cancelled:
    /// on the system's clocks, where a sleeping task costs a wake a second (`SlicedSleep`),
    /// off the round trip, while ending it and starting the next woke two threads beside the
    /// round trip (the reply timer of nearly every message is cancelled by its reply, and the
    /// next message's timer would start a ticker again). On a manual or virtual clock a
    /// sleeper is visible — a replay advances time to it — so the ticker sleeps only until a
    /// deadline that still exists there.
    let letsTickerRunOut: Bool

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - configuration: the key, the section, the services' URLs and what is reported (B1).
    ///   - transport: the only network boundary; `URLSessionTransport` in production.
    ///   - clock: drives the 10 s and 120 s timeouts; a manual clock in tests.
    ///   - identityStore: where the SDK-managed uid persists (B3).
    ///   - uuid: generates thread and message IDs; deterministic in tests. By default
    ///     random (version 4), from system randomness read a few KiB at a time.
    ///   - logger: where diagnostics go; by default one at the configuration's level (B2).
    ///   - deliveryStore: where events and tracking wait until Gravity has them (DL2–DL5);
    ///     `FileDeliveryStore` keeps them across restarts, the in-memory default only while
    ///     the process lives.
    ///   - wallClock: the time events are stamped with (DL6) and the queue's age is measured
    ///     on (DL4); fixed in tests.
    public init(
        configuration: AssistantEngineConfiguration,
        transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(),
        identityStore: any IdentityStore = InMemoryIdentityStore(),
        uuid: @escaping @Sendable () -> UUID = { RandomUUIDs.next() },
        logger: AssistantLogger? = nil,
        deliveryStore: any DeliveryStore = InMemoryDeliveryStore(),
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(
            configuration: configuration, transport: transport, clock: clock, identityStore: identityStore, uuid: uuid,
            logger: logger, deliveryStore: deliveryStore, wallClock: wallClock, activity: nil)
    }

    /// Creates an engine whose conversation survives a restart (D18–D20).
    ///
    /// - Parameters:
    ///   - configuration: the key, the section, the services' URLs and what is reported (B1);
    ///     `dialogRetention` says how long a stored dialog is still restored (D20).
    ///   - transport: the only network boundary; `URLSessionTransport` in production.
    ///   - clock: drives the 10 s and 120 s timeouts; a manual clock in tests.
    ///   - identityStore: where the SDK-managed uid persists (B3).
    ///   - uuid: generates thread and message IDs; deterministic in tests.
    ///   - logger: where diagnostics go; by default one at the configuration's level (B2).
    ///   - deliveryStore: where events and tracking wait until Gravity has them (DL2–DL5).
    ///   - dialogStore: where the current dialog is saved on every change and read back when
    ///     the engine is created, to be restored on the first opening after a `.ready`
    ///     preparation of the same assistant under the same identity (D18). `FileDialogStore`
    ///     keeps it beside the identity file; a store that fails costs only the restore (D20).
    ///   - wallClock: the time events are stamped with (DL6) and a stored dialog's age is
    ///     measured on (D20); fixed in tests.
    public init(
        configuration: AssistantEngineConfiguration,
        transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(),
        identityStore: any IdentityStore = InMemoryIdentityStore(),
        uuid: @escaping @Sendable () -> UUID = { RandomUUIDs.next() },
        logger: AssistantLogger? = nil,
        deliveryStore: any DeliveryStore = InMemoryDeliveryStore(),
        dialogStore: any DialogStore,
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(
            configuration: configuration, transport: transport, clock: clock, identityStore: identityStore, uuid: uuid,
            logger: logger, deliveryStore: deliveryStore, dialogStore: dialogStore, wallClock: wallClock,
            activity: nil)
    }

    /// The same, counting the engine's runnable work on `activity`, so that a replay on
    /// virtual time can tell when nothing can run (transcripts, tests).
    package init(
        configuration: AssistantEngineConfiguration,
        transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(),
        identityStore: any IdentityStore = InMemoryIdentityStore(),
        uuid: @escaping @Sendable () -> UUID = { RandomUUIDs.next() },
        logger: AssistantLogger? = nil,
        deliveryStore: any DeliveryStore = InMemoryDeliveryStore(),
        dialogStore: (any DialogStore)? = nil,
        wallClock: @escaping @Sendable () -> Date = { Date() },
        deliverySeed: UInt64? = nil,
        activity: ActivityMonitor?,
        tickerSlice: Duration? = nil,
        letsTickerRunOut: Bool? = nil
    ) {
        self.activity = activity
        self.configuration = configuration
        self.clock = clock
        self.tickerSlice = tickerSlice ?? SlicedSleep.slice(for: clock)
        self.letsTickerRunOut = letsTickerRunOut ?? clock.isSystemClock
        elapsed = stopwatch(on: clock)
        self.identityStore = identityStore
        self.dialogStore = dialogStore
        self.makeUUID = uuid
        self.wallClock = wallClock
        let logger = logger ?? AssistantLogger(level: configuration.logLevel)
        logger.addSecret(configuration.apiKey)
        self.logger = logger
        dialogWriter = dialogStore.map { DialogWriter(store: $0, logger: logger, activity: activity) }
        func call(_ service: String) -> WireCall {
            WireCall(transport: transport, logger: logger, service: service, userAgent: configuration.userAgent)
        }
        gravity = GravityClient(
            baseURL: configuration.gravityBaseURL, apiKey: configuration.apiKey, section: configuration.section,
            device: GravityDevice(userAgent: configuration.deviceUserAgent, id: configuration.deviceId),
            call: call("gravity"), retry: RetryLoop(clock: clock, deadline: configuration.gravityTimeout))
        var shopping = ShoppingClient(baseURL: configuration.shoppingBaseURL, call: call("shopping"))
        shopping.keepsReceived = dialogStore != nil  // D18: each reply as received, only when it is stored
        self.shopping = shopping
        outbox = Outbox(
            store: deliveryStore, settings: configuration.offlineQueue,
            wiring: Outbox.Wiring(
                call: call("tracking"), gravityCall: call("gravity"), gravityBaseURL: configuration.gravityBaseURL,
                apiKey: configuration.apiKey,
                clock: clock, wallClock: wallClock, activity: activity, eventTimeout: configuration.gravityTimeout,
                urlTimeout: configuration.trackingTimeout, logCapacity: configuration.trackingLogCapacity,
                seed: deliverySeed ?? UInt64.random(in: 0...UInt64.max),
                letsWatcherRunOut: letsTickerRunOut ?? clock.isSystemClock),
            logger: logger)
        identityStore.setWarningHandler { [logger] in logger.log(.error, "identity store: \($0)") }
        machine = EngineMachine(
            settings: EngineMachine.Settings(
                section: configuration.section,
                appVersion: configuration.appVersion ?? AssistantEngineConfiguration.sdkVersion,
                options: configuration.options,
                contentSettings: configuration.contentSettings, gravityTimeout: configuration.gravityTimeout),
            storedUID: identityStore.loadUid())
        machine.settings.keepsDialog = dialogStore != nil
        machine.dialog.keepsReceived = dialogStore != nil
        machine.settings.dialogRetention = configuration.dialogRetention
        if let dialogStore, let stored = Self.readDialog(from: dialogStore, logger: logger) {
            machine.dialogStoreRead(stored)  // D18: restored on the first opening after `.ready`
        }
        // B9: a lifecycle event's answer brings a `user` too; the machine takes it as any other.
        outbox.setIdentityListener { [weak self] user, epoch, asNobody in
            self?.spawn { [weak self] in
                await self?.handle {
                    $0.lifecycleEventAnswered(user: user, identityEpoch: epoch, sentAsNobody: asNobody)
                }
            }
        }
        outbox.setOwnerSource { [weak self] in await self?.queuedRecordOwner() }
        outbox.setOpenerListener { [weak self] owner, user, epoch in
            self?.spawn { [weak self] in
                await self?.handle { $0.queuedOpenerFinished(owner, user: user, identityEpoch: epoch) }
            }
        }
        outbox.open()
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
    public var trackingLog: [TrackingRecord] { outbox.log }

    /// Suspends until every record kept before this call — the app's events and page views,
    /// lifecycle events, tracking URLs — has had its first attempt (retries within its deadline
    /// included, DL1): a `triggerEvent` returns once its events are kept, before they leave.
    public func flushTracking() async {
        handle { $0.flushRequested() }  // tracking held for the presenter leaves now
        await outbox.flushFirstAttempts()
    }

    // MARK: - The delivery queue (DL2–DL8)

    /// Makes one fresh attempt at everything queued now, whatever pause the queue was in, and
    /// returns when the drain stops: delivered, or failing again (DL8). At once when the queue
    /// is off.
    public func flushQueue() async {
        guard !machine.isShutDown else { return }
        await outbox.flushQueue()
    }

    /// How many records the delivery store holds (DL8): accepted, not yet delivered or dropped.
    public var pendingDeliveries: Int { outbox.pendingCount }

    /// Forgets everything queued; nothing cleared reaches the wire afterwards, and a request
    /// on the wire now is not queued again whatever it meets (DL8). Identity changes never
    /// clear the queue; this is how an app does when it must.
    public func clearQueue() async {
        handle { $0.queueCleared() }
        await outbox.clear()
    }

    /// The queue's limits and switch now (DL4).
    public var offlineQueueSettings: OfflineQueueSettings { outbox.settings }

    /// Changes the queue's limits or turns it on or off while the engine runs (DL4): a lower
    /// `maxEntries` drops the oldest now; turned on, the queue drains.
    public func setOfflineQueueSettings(_ settings: OfflineQueueSettings) {
        outbox.setSettings(settings)
    }

    /// What waits in the delivery queue now, oldest first: for a debug screen or the REPL.
    public var deliveryQueue: [PendingDelivery] { outbox.entries }

    /// The engine's tasks still running, by kind, for tests that check a shutdown left none.
    package nonisolated var runningTaskKinds: [String] { tasks.kinds.map { "\($0)" } }

    // MARK: - Shutdown (H2)

    /// Shuts the engine down (H2): every request and deadline is cancelled, queued tracking is
    /// given `flushDeadline` on the engine's clock to leave and is dropped after it, and every
    /// caller still waiting returns — a preparation with `.cancelled`, a call waiting for the
    /// host with what was decided for it, a Gravity call without its answer. Returns once
    /// nothing the engine started runs any more (host callbacks under way are the host's own).
    /// A delivery the shutdown cancels that succeeds all the same, within the deadline, is
    /// forgotten by the store before it closes, so the next engine does not send it again (DL5).
    ///
    /// Every later call is refused at once: `prepareAssistant` returns `.cancelled`,
    /// `openAssistant` and the sends `.notReady`, product actions and reply buttons
    /// `.staleReference`, `rateReply` `.unknownReply`, `getContentBySelector` `nil`; the other
    /// calls do nothing. The presenter is not called: a chat still on screen is the host's to
    /// remove. Shutting down twice is harmless.
    public func shutdown(flushDeadline: Duration = .seconds(2)) async {
        let wasRunning = !machine.isShutDown
        _ = await call { $0.shutdownCalled($1) }
        guard wasRunning else { return }
        presenters = [:]
        calls.dropOfferedPresenters()
        // Queued tracking gets the deadline; the cancelled requests and the ticker end at once
        // on any transport that honours cancellation, and are waited for within it too.
        let (outbox, tasks, clock) = (self.outbox, self.tasks, self.clock)
        let over = OneTimeSignal(activity: activity)
        let deadlinePassed = OneTimeSignal(activity: activity)
        let work = unlisted {
            await outbox.flushFirstAttempts()
            await tasks.waitForEngineTasks()
            over.fire()
        }
        let deadline = unlisted {
            try? await clock.sleep(for: flushDeadline)
            over.fire()
            deadlinePassed.fire()
        }
        await over.wait()
        work.cancel()
        // What is left stays in the store for the next engine (DL8); a send that succeeds as
        // it is cancelled is still removed, within the deadline (DL5).
        await outbox.stop(waitingForSendsUntil: deadlinePassed)
        deadline.cancel()
        await dialogWriter?.flush()  // the next engine on the store reads this one's last state
    }

    /// Work of the shutdown itself: counted for replay quiescence, but not among the tasks the
    /// shutdown waits for.
    private nonisolated func unlisted(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        activity.map { $0.spawn(body) } ?? Task(operation: body)
    }

    /// An engine released without a shutdown stops waiting for its requests and deadlines;
    /// what is queued still leaves, and what does not stays in the store (AN4, DL5).
    deinit {
        for request in requests.values { request.cancel() }
        ticker?.cancel()
    }
}

/// A presenter held weakly (O5).
struct WeakPresenter {
    weak var presenter: (any AssistantPresenter)?
}
