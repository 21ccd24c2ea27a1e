import Foundation
import ShoppingAssistant

/// An engine wired for tests of code that embeds it: a manual clock, a scripted transport,
/// deterministic IDs and recording host doubles — and a count of the engine's runnable work,
/// so `runUntilIdle()` can tell when nothing more will happen.
///
/// That is what makes "the engine did *not* do X" a real assertion: run until idle, then look.
/// No `Task.yield()` loops, no real time.
///
/// ## What "idle" means
///
/// Idle means no work the engine started can run until the test acts: every task waits on
/// `clock` (a timeout, a delayed reply), on a `.deferred` exchange of `transport`, or on a
/// call that a presenter of this bed (`presenter`, `makePresenter()`) holds for the test.
/// Anything else that has not returned is running work: a host callback of your own that
/// blocks, or a request to a transport of your own behind `transport`. Then `runUntilIdle()`
/// cannot return; after its limit it throws `NotIdle`, which says how much is still running.
///
/// Call the engine through `run(_:)`, or `start(_:)` for a call that stays under way while
/// the test does something else — not from a `Task` of the test's own: a call parks while
/// it waits for the engine, and only a call the bed started was counted when it began. A call
/// awaited directly from the test's body is harmless (nothing else of the test runs then).
///
/// Give this bed's presenters only to this bed's engine: they report their held calls to it.
public struct EngineTestBed: Sendable {
    /// The engine under test.
    public let engine: AssistantEngine
    /// The engine's clock: nothing times out until the test advances it.
    public let clock: ManualClock
    /// The engine's only network boundary.
    public let transport: ScriptedTransport
    /// A presenter that reports held calls to this bed; pass it to `openAssistant`.
    public let presenter: RecordingPresenter
    /// The registered action handler (unless the bed was made with `registersHostObjects: false`).
    public let handler: RecordingActionHandler
    /// The registered product block builder (unless `registersHostObjects: false`).
    public let builder: RecordingProductBlockBuilder
    /// The timeline shared by `presenter`, the presenters of `makePresenter()` and `handler`.
    public let log: HostCallLog
    /// Where the engine's thread and message IDs come from, so a test can predict the next one.
    public let uuids: SequentialUUIDGenerator
    /// Counts the engine's runnable work; shared with the clock, the transport and the presenters.
    package let activity: ActivityMonitor

    /// Thrown by `runUntilIdle()` when the engine did not become idle within the limit, or
    /// the test was cancelled first: a hang fails the test instead of stalling the run.
    public struct NotIdle: Error, CustomStringConvertible {
        /// What was still running, and why that can be.
        public let description: String
    }

    /// - Parameters:
    ///   - configuration: the engine's configuration; the Gravity key never leaves the bed.
    ///   - identityStore: where the uid persists; an empty one is a first launch. A
    ///     `RecordingIdentityStore` records the engine's writes and refuses them when told (B14).
    ///   - logger: where diagnostics go; by default one at the configuration's level.
    ///   - analytics: whether lifecycle events, page views and tracking URLs need expectations.
    ///     Answered automatically by default, so a test scripts only what it is about.
    ///   - canHandle: what `handler` answers to `canHandle` (AC4).
    ///   - registersHostObjects: register `builder` and `handler` before the test starts, as
    ///     `prepareAssistant` requires (G1); `false` to test that requirement.
    ///   - wrap: puts a transport of the test's own in front of `transport` (fault injection,
    ///     a proxy); its own waits count as running work.
    ///   - onUnexpected: called for each request nobody expected; pass
    ///     `{ Issue.record(Comment(rawValue: $0)) }` to fail the running test at once.
    ///   - deliveryStore: where events and tracking wait until delivered (DL2); pass the store
    ///     of an earlier bed to test what the next engine does with what it left.
    public init(
        configuration: AssistantEngineConfiguration = AssistantEngineConfiguration(apiKey: "test-key", section: "test"),
        identityStore: any IdentityStore = InMemoryIdentityStore(),
        logger: AssistantLogger? = nil,
        analytics: ScriptedTransport.Analytics = .answeredAutomatically,
        canHandle: @escaping @Sendable (AssistantAction) -> Bool = { _ in true },
        registersHostObjects: Bool = true,
        wrap: (ScriptedTransport) -> any HTTPTransport = { $0 },
        onUnexpected: @escaping @Sendable (String) -> Void = { _ in },
        deliveryStore: any DeliveryStore = InMemoryDeliveryStore()
    ) async {
        await self.init(
            configuration: configuration, identityStore: identityStore, logger: logger, analytics: analytics,
            canHandle: canHandle, registersHostObjects: registersHostObjects, activity: ActivityMonitor(),
            wrap: { transport, _ in wrap(transport) }, onUnexpected: onUnexpected, deliveryStore: deliveryStore)
    }

    /// The same, on a monitor the caller made, with the monitor handed to `wrap` so a transport
    /// of our own tests can count its waits as parked.
    package init(
        configuration: AssistantEngineConfiguration,
        identityStore: any IdentityStore,
        logger: AssistantLogger?,
        analytics: ScriptedTransport.Analytics,
        canHandle: @escaping @Sendable (AssistantAction) -> Bool,
        registersHostObjects: Bool,
        activity: ActivityMonitor,
        wrap: (ScriptedTransport, ActivityMonitor) -> any HTTPTransport,
        onUnexpected: @escaping @Sendable (String) -> Void,
        tickerSlice: Duration? = nil,
        letsTickerRunOut: Bool? = nil,
        deliveryStore: any DeliveryStore = InMemoryDeliveryStore(),
        dialogStore: (any DialogStore)? = nil
    ) async {
        self.activity = activity
        let clock = ManualClock(activity: activity)
        self.clock = clock
        transport = ScriptedTransport(
            clock: clock, analytics: analytics, activity: activity, onUnexpected: onUnexpected)
        let log = HostCallLog()
        self.log = log
        presenter = RecordingPresenter(availability: .available, log: log, activity: activity)
        handler = RecordingActionHandler(log: log, canHandle: canHandle)
        builder = RecordingProductBlockBuilder()
        let uuids = SequentialUUIDGenerator()
        self.uuids = uuids
        engine = AssistantEngine(
            configuration: configuration, transport: wrap(transport, activity), clock: clock,
            identityStore: identityStore, uuid: { uuids.next() }, logger: logger, deliveryStore: deliveryStore,
            dialogStore: dialogStore,
            wallClock: { Self.wallClockStart.addingTimeInterval(clock.now.offset.secondsValue) }, deliverySeed: 42,
            activity: activity, tickerSlice: tickerSlice, letsTickerRunOut: letsTickerRunOut)
        if registersHostObjects {
            await engine.setAssistantProductBlockBuilder(builder)
            await engine.setAssistantActionHandler(handler)
        }
    }

    /// The wall clock's time when the bed's manual clock reads zero: events are stamped with it
    /// plus the manual clock's time (DL6), so a test's `eventTime` never depends on the day.
    public static let wallClockStart = Date(timeIntervalSince1970: 1_796_551_200)  // 2026-12-06T10:00:00Z

    /// Another presenter that reports its held calls to this bed, for a second screen or for a
    /// presenter the test lets go of (O5).
    public func makePresenter(availability: AssistantPresenterAvailability = .available) -> RecordingPresenter {
        RecordingPresenter(availability: availability, log: log, activity: activity)
    }

    /// Returns once the engine is idle (see the type's documentation). Throws `NotIdle` if it
    /// is still running after `limit` of real time — a guard for a hang, generous so a loaded
    /// machine never trips it; nothing waits for it to pass — or if the test was cancelled.
    /// If the process cannot even run that guard a minute after `limit` (every Dispatch thread
    /// blocked), a watchdog thread ends it with status 70 and a line naming this wait.
    public func runUntilIdle(limit: Duration = .seconds(60)) async throws {
        enum Outcome: Sendable { case idle, cancelled, timedOut }
        let activity = self.activity
        let outcome = await withTaskGroup(of: Outcome.self) { group -> Outcome in
            group.addTask { await activity.waitUntilIdle() ? .idle : .cancelled }
            group.addTask {
                await wallClockWait(limit, for: "the engine becoming idle")
                return Task.isCancelled ? .cancelled : .timedOut
            }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            return first
        }
        switch outcome {
        case .idle:
            return
        case .cancelled:
            throw NotIdle(description: "cancelled while waiting for the engine to become idle; \(runningWork)")
        case .timedOut:
            throw NotIdle(description: "the engine did not become idle within \(limit); \(runningWork)")
        }
    }

    /// Runs `body` on the engine as counted work and returns its value once the engine is
    /// idle; `nil` if `body` is still waiting then — on the clock, a deferred exchange or a
    /// held presenter call — which is what a test of a timeout checks before moving the clock.
    public func run<Value: Sendable>(
        limit: Duration = .seconds(60), _ body: @escaping @Sendable (AssistantEngine) async -> Value
    ) async throws -> Value? {
        let call = start(body)
        try await runUntilIdle(limit: limit)
        return call.returnedValue
    }

    /// Starts `body` on the engine as counted work and returns at once, for a call that is to
    /// stay under way (a close while its dismissal is held) while the test acts.
    ///
    /// The task holds the engine only while `body` runs: a task lets go of its closure a moment
    /// after the activity monitor counts it ended, and a test that checks that a shut-down
    /// engine is released must not see the bed's own task keep it.
    @discardableResult
    public func start<Value: Sendable>(_ body: @escaping @Sendable (AssistantEngine) async -> Value) -> Call<Value> {
        let call = Call<Value>()
        activity.spawn { [weak engine = self.engine] in
            guard let engine else { return }  // the bed went away before the call began
            let value = await body(engine)
            call.returned(value)
        }
        return call
    }

    /// A call to the engine that `start(_:)` started.
    public final class Call<Value: Sendable>: Sendable {
        private let result = Locked<Value?>(nil)
        private let waiters = Waitlist()

        init() {}

        /// The call's value if it has returned, `nil` while it is under way.
        public var returnedValue: Value? { result.withLock { $0 } }

        /// Suspends until the call returns, not until the engine is idle; `nil` if the test was
        /// cancelled first, so a call that never returns fails the test instead of hanging it.
        public func value() async -> Value? {
            await waiters.wait { [result] in result.withLock { $0 != nil } }
            return returnedValue
        }

        fileprivate func returned(_ value: Value) {
            result.withLock { $0 = value }
            waiters.recheck()
        }
    }

    private var runningWork: String {
        """
        \(activity.busy) task(s) still running, \(clock.sleeperCount) asleep on the clock. A host callback that \
        has not returned counts as running, unless a presenter of this bed holds it; so does a wait in a transport \
        other than the scripted one.
        """
    }
}

extension Duration {
    /// The duration in seconds, as a wall-clock interval.
    fileprivate var secondsValue: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
