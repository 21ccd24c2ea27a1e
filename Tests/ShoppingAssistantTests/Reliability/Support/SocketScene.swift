import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

/// One engine on real sockets: a real transport of either kind (behind
/// `FaultInjectingTransport`) to a `LoopbackBackend`, time on a manual clock, every task
/// counted by an activity monitor.
///
/// A request on the wire keeps its task counted, so `settle()` returns only when nothing is
/// running and nothing is in flight: everything left waits on the engine's clock. A stalled
/// request never lets that happen, so for a stall the test first waits for the server to
/// report it, then moves the clock that ends it.
struct SocketScene {
    let backend: LoopbackBackend
    let transport: FaultInjectingTransport
    let activity = ActivityMonitor()
    let clock: ManualClock
    let engine: AssistantEngine
    let presenter = SocketPresenter()
    let handler = SocketHandler()
    let logs = Locked<[String]>([])
    let uuids = SequentialUUIDGenerator()

    static let productPage = PageContext(type: .product, data: ["SKU-123"], location: "app://product/SKU-123")

    init(
        _ kind: TransportKind, chooser: (@Sendable (SocketEndpoint, HTTPRequest) -> LoopbackFault?)? = nil,
        recordsRequests: Bool = true, storedUID: String? = "u-8f3c"
    ) async throws {
        backend = try LoopbackBackend()
        transport = try FaultInjectingTransport(kind, chooser: chooser, recordsRequests: recordsRequests)
        clock = ManualClock(activity: activity)
        let (uuids, logs) = (self.uuids, self.logs)
        engine = AssistantEngine(
            configuration: AssistantEngineConfiguration(
                apiKey: "test-key-SECRET", section: "shop-1", gravityBaseURL: backend.gravityURL,
                shoppingBaseURL: backend.shoppingURL),
            transport: transport, clock: clock, identityStore: InMemoryIdentityStore(uid: storedUID),
            uuid: { uuids.next() },
            // Notes included: a handled failure (a rating offered again) is logged as a note.
            logger: AssistantLogger(level: .info) { _, message in
                logs.withLock { lines in
                    // A soak keeps only the latest lines, so the log does not grow with it.
                    if !recordsRequests, lines.count >= 200 { lines.removeFirst(100) }
                    lines.append(message)
                }
            },
            activity: activity)
        await engine.setAssistantProductBlockBuilder(LineBuilder())
        await engine.setAssistantActionHandler(handler)
    }

    func stop() { backend.stop() }

    var logLines: [String] { logs.withLock { $0 } }

    // MARK: - Driving

    /// Runs `body` as counted work and waits until the engine has settled.
    func settle<Value: Sendable>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping @Sendable (AssistantEngine) async -> Value
    ) async -> Value? {
        let call = start(body)
        return await finish(call, sourceLocation: sourceLocation)
    }

    /// A call under way, counted by the activity monitor.
    struct Call<Value: Sendable>: Sendable {
        let result: Locked<(value: Value?, waiters: [CheckedContinuation<Value, Never>])>

        /// Waits for the call to return (not for the engine to settle).
        func value() async -> Value {
            await withCheckedContinuation { continuation in
                let ready = result.withLock { state -> Value? in
                    if let value = state.value { return value }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    func start<Value: Sendable>(_ body: @escaping @Sendable (AssistantEngine) async -> Value) -> Call<Value> {
        let call = Call<Value>(result: Locked((nil, [])))
        let engine = self.engine
        activity.spawn {
            let value = await body(engine)
            let waiters = call.result.withLock { state in
                state.value = value
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: value) }
        }
        return call
    }

    /// Waits until the engine has settled; the call's value, or `nil` if it never returned.
    func finish<Value: Sendable>(_ call: Call<Value>, sourceLocation: SourceLocation = #_sourceLocation) async
        -> Value?
    {
        let activity = self.activity
        let settled = await withinHangGuard("the engine settles", sourceLocation: sourceLocation) { () -> Bool in
            await activity.waitUntilIdle()
            return true
        }
        if settled == nil {
            Issue.record(
                """
                still running: \(activity.busy) tasks; asleep: \(clock.sleeperCount) engine timers, \
                \(transport.normalClock.sleeperCount) + \(transport.faultClock.sleeperCount) deadlines; \
                \(backend.server.openConnections) connections open
                """, sourceLocation: sourceLocation)
        }
        return call.result.withLock { $0.value }
    }

    /// For a stalling fault: waits until the server holds the faulted request, then moves the
    /// clock that ends it (the engine's own timeout, or the transport's deadline), and waits
    /// until the client has closed that connection.
    func endStall(of endpoint: SocketEndpoint, sourceLocation: SourceLocation = #_sourceLocation) async {
        let (server, clock, faultClock) = (backend.server, clock, transport.faultClock)
        let index = await withinHangGuard("the server stalls", sourceLocation: sourceLocation) { () -> Int? in
            let stalling: @Sendable (LoopbackHTTPServer.ReceivedRequest) -> Bool = {
                $0.header(LoopbackFault.header).flatMap(LoopbackFault.init(rawValue:))?.stalls == true
            }
            guard let index = await server.firstRequest(where: stalling),
                await server.stalled(onRequest: index)
            else { return nil }
            if endpoint.engineTimeout != nil {
                await clock.waitForSleepers(1)
            } else {
                await faultClock.waitForSleepers(1)
            }
            return index
        }
        guard let index = index ?? nil else { return }
        if let timeout = endpoint.engineTimeout {
            clock.advance(by: timeout)
        } else {
            faultClock.advance(by: transport.kind.deadline)
        }
        let hungUp = await withinHangGuard("the client closes the stalled connection", sourceLocation: sourceLocation) {
            await server.clientHungUp(onRequest: index)
        }
        #expect(hungUp == true, "the timeout's cancellation closes the connection", sourceLocation: sourceLocation)
    }

    /// Nothing left running or open: no task, no timer, no deadline, no connection.
    func expectSettled(sourceLocation: SourceLocation = #_sourceLocation) async {
        let backend = self.backend
        let closed = await withinHangGuard("every connection closes", sourceLocation: sourceLocation) {
            let first = await backend.server.allConnectionsClosed()
            let second = await backend.otherHost.allConnectionsClosed()
            return first && second
        }
        #expect(closed == true, sourceLocation: sourceLocation)
        #expect(activity.busy == 0, "nothing left running", sourceLocation: sourceLocation)
        #expect(clock.sleeperCount == 0, "no engine timer left", sourceLocation: sourceLocation)
        #expect(transport.normalClock.sleeperCount == 0, "no deadline left", sourceLocation: sourceLocation)
        #expect(transport.faultClock.sleeperCount == 0, "no deadline left", sourceLocation: sourceLocation)
        #expect(await engine.dialogState != .sending, sourceLocation: sourceLocation)
        #expect(await engine.preparationState != .preparing, sourceLocation: sourceLocation)
    }
}

/// A presenter that keeps the latest snapshot.
final class SocketPresenter: AssistantPresenter {
    private let state = Locked<(latest: AssistantChatSnapshot?, dismissals: Int)>((nil, 0))
    var availability: AssistantPresenterAvailability { .available }
    var latest: AssistantChatSnapshot? { state.withLock { $0.latest } }
    var dismissals: Int { state.withLock { $0.dismissals } }
    func presentAssistant(_ chat: AssistantChatSnapshot) async { state.withLock { $0.latest = chat } }
    func updateAssistant(_ chat: AssistantChatSnapshot) async { state.withLock { $0.latest = chat } }
    func dismissAssistant() async { state.withLock { $0.dismissals += 1 } }
}

/// An action handler that handles everything and records what it was asked to do.
final class SocketHandler: AssistantActionHandler {
    private let handled = Locked<[AssistantAction]>([])
    var actions: [AssistantAction] { handled.withLock { $0 } }
    func canHandle(_ action: AssistantAction) -> Bool { true }
    func handle(_ action: AssistantAction) async { handled.withLock { $0.append(action) } }
}

/// A product block as one line per product plus a title.
struct LineBuilder: AssistantProductBlockBuilder {
    struct Rendering: AssistantProductBlockRendering {
        let height: Int
    }

    func build(block: AssistantProductBlock, layout: AssistantProductLayout) -> any AssistantProductBlockRendering {
        Rendering(height: 1 + max(1, block.products.count))
    }
}
