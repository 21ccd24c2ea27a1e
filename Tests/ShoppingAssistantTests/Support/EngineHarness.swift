import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The one engine harness of our engine tests, built on the public `EngineTestBed`: a manual
/// clock, the recording host doubles and a scripted transport, all counted by the bed's
/// activity monitor, so a test can script and await single requests and also run the engine
/// until nothing can run (`settle`).
///
/// Requests pass `routes` first. With no responder it hands each one to the scripted
/// `transport`, where every request must be expected. With one (the fault matrix, the stress
/// run) it answers every endpoint itself and can arm a one-off answer or hold a request.
struct EngineHarness {
    let bed: EngineTestBed
    let routes: RoutingTransport
    let identityStore: any IdentityStore
    /// Diagnostics at `.info` and above, unless the test passed a logger of its own.
    let logs: LogCollector

    var engine: AssistantEngine { bed.engine }
    var clock: ManualClock { bed.clock }
    var transport: ScriptedTransport { bed.transport }
    var presenter: RecordingPresenter { bed.presenter }
    var handler: RecordingActionHandler { bed.handler }
    var builder: RecordingProductBlockBuilder { bed.builder }
    /// The order of dismissals and hand-overs (PR10, AC5).
    var order: HostCallLog { bed.log }
    var uuids: SequentialUUIDGenerator { bed.uuids }
    var activity: ActivityMonitor { bed.activity }

    /// - Parameters:
    ///   - storedUID: the uid persisted from an earlier launch; `nil` is a first launch.
    ///   - identityStore: a store of the test's own instead (`storedUID` is then unused).
    ///   - configuration: another configuration than the fixtures' key and section.
    ///   - register: register builder and handler (G1).
    ///   - refuse: action names the handler cannot handle (AC4).
    ///   - wrap: a transport in front of the router (cancellation behaviour, P2 and P4).
    ///   - responder: answers every request instead of the scripted transport.
    ///   - tickerSlice: the longest the engine's deadline ticker sleeps at once; by default
    ///     until the deadline, as on any clock but the system's.
    ///   - letsTickerRunOut: a ticker nothing needs any more sleeps
    ///     on, as on the system's clocks; by default it is cancelled, as on any other clock.
    ///   - dialogStore: where the dialog survives a restart (D18); none by default.
    init(
        storedUID: String? = "u-8f3c", identityStore: (any IdentityStore)? = nil,
        configuration: AssistantEngineConfiguration = AssistantEngineConfiguration(
            apiKey: Fixtures.apiKey, section: Fixtures.section),
        register: Bool = true, refuse: Set<String> = [], logger: AssistantLogger? = nil,
        wrap: (any HTTPTransport) -> any HTTPTransport = { $0 }, responder: RoutingTransport.Responder? = nil,
        tickerSlice: Duration? = nil, letsTickerRunOut: Bool? = nil, dialogStore: (any DialogStore)? = nil
    ) async {
        let store = identityStore ?? InMemoryIdentityStore(uid: storedUID)
        self.identityStore = store
        let logs = LogCollector()
        self.logs = logs
        var router: RoutingTransport?
        bed = await EngineTestBed(
            configuration: configuration, identityStore: store, logger: logger ?? logs.makeLogger(level: .info),
            analytics: .scripted, canHandle: { !refuse.contains($0.name) }, registersHostObjects: register,
            activity: ActivityMonitor(),
            wrap: { scripted, activity in
                let made = RoutingTransport(
                    activity: activity, responder: responder ?? { _, _ in .forward(to: scripted) })
                router = made
                return wrap(made)
            }, onUnexpected: { Issue.record(Comment(rawValue: $0)) }, tickerSlice: tickerSlice,
            letsTickerRunOut: letsTickerRunOut, dialogStore: dialogStore)
        guard let router else { preconditionFailure("the test bed builds its transport in its initialiser") }
        routes = router
    }

    // MARK: - Scripted steps

    /// Prepares successfully with the standard configuration.
    func prepareReady(page: PageContext = Fixtures.productPage, sourceLocation: SourceLocation = #_sourceLocation) async
    {
        transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose()))
        let result = await engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: page)
        #expect(result == .ready, sourceLocation: sourceLocation)
    }

    /// Prepares and opens the chat.
    func openReady(sourceLocation: SourceLocation = #_sourceLocation) async {
        await prepareReady(sourceLocation: sourceLocation)
        transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))  // chat_dialog_open
        let result = await engine.openAssistant(presenter: presenter)
        #expect(result == .opened, sourceLocation: sourceLocation)
    }

    /// Expects `count` lifecycle `/event` posts.
    func expectEvents(_ count: Int) {
        for _ in 0..<count {
            transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        }
    }

    /// Fails the test for unexpected requests or unmet expectations.
    func verify(sourceLocation: SourceLocation = #_sourceLocation) async {
        await engine.flushTracking()
        #expect(transport.unexpectedRequests.isEmpty, sourceLocation: sourceLocation)
        #expect(
            transport.unmetExpectations.isEmpty, "unmet: \(transport.unmetExpectations)", sourceLocation: sourceLocation
        )
    }

    /// Lifecycle event types sent so far, in order.
    var sentEventTypes: [String] {
        transport.requests.filter { $0.url.path.hasSuffix("/event") }.flatMap { request -> [String] in
            (Fixtures.body(request)["data"] as? [[String: Any]] ?? []).compactMap { $0["type"] as? String }
        }
    }

    /// Runs `start`, which starts calls with `bed.start`, as an app makes calls together: the
    /// engine's instant lasts until every one of them is started. The test's own body is not
    /// counted work, so without this a call could find its instant over (B16: its content
    /// request gone) before the test started the next.
    func together<Value>(_ start: () -> Value) -> Value {
        activity.begin()
        defer { activity.end() }
        return start()
    }

    // MARK: - Running until idle

    /// Runs `body` as counted work and waits until the engine has settled. Returns `nil` when
    /// `body` itself never finished: it waits for something no settled engine will bring. A
    /// settle that does not happen fails the test.
    func settle<Value: Sendable>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping @Sendable (AssistantEngine) async -> Value
    ) async -> Value? {
        do {
            return try await bed.run(body)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// Waits until the engine has settled, after time moved or a held request was released.
    func settle(sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await bed.runUntilIdle()
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    /// Runs `body` and lets the manual clock move from deadline to deadline whenever the engine
    /// has settled, until `body` returns: a call that retries within its deadline (DL1) sleeps
    /// on the clock between attempts.
    func passingTime<Value: Sendable>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping @Sendable (AssistantEngine) async -> Value
    ) async -> Value? {
        let call = bed.start(body)
        for _ in 0..<1_000 {
            do {
                try await bed.runUntilIdle()
            } catch {
                Issue.record("\(error)", sourceLocation: sourceLocation)
                return nil
            }
            if let value = call.returnedValue { return value }
            guard clock.advanceToNextDeadline() else { break }
        }
        Issue.record("the call never returned, however far the clock moved", sourceLocation: sourceLocation)
        return nil
    }
}
