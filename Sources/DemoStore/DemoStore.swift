import Foundation
import ShoppingAssistant

/// An in-process fake of both backends — Gravity API V2 and the Shopping API — answering at
/// the transport seam exactly as wire.md describes, so the engine's real encoders, decoders
/// and error mapping run against it. It is the default backend of the REPL and of recorded
/// transcripts.
///
/// Deterministic by construction: no randomness and no wall time. IDs come from counters
/// (`demo-u-1`, `demo-s-1`, `am-1`, `demo-d-1`), `createdAt` from `Configuration.historyEpoch`,
/// and every delay is awaited on the injected clock, honouring task cancellation.
///
/// Routing looks at the path suffix, whatever the host:
/// - Gravity (`Authorization: Bearer` required): `POST …/choose`, `…/visit`, `…/event`;
/// - Shopping (credentials rejected with 400, S5): `POST …/v1/messages`,
///   `GET …/v1/threads/{id}/messages`, `POST …/v1/feedback`;
/// - `GET` on the tracking hosts (`trackingHost`, `secondaryTrackingHost`): 204, recorded
///   (400 if it carries a key);
/// - anything else: 404 with an error body.
///
/// Faults (`DemoFault`) are armed at runtime with `inject(_:mode:)`.
public final class DemoStore: HTTPTransport, Sendable {
    /// The host of the tracking URLs in product, reply and content events.
    public static let trackingHost = "t.demo-store.example"
    /// The second tracking host, used by products with two different click URLs.
    public static let secondaryTrackingHost = "t2.demo-store.example"

    private let state: Locked<State>
    private let clock: any Clock<Duration>
    private let activity: ActivityMonitor?

    /// Creates a store. `clock` paces the slow-reply and slow-choose faults; tests pass a
    /// manual clock.
    public convenience init(
        configuration: Configuration = Configuration(), clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.init(configuration: configuration, clock: clock, activity: nil)
    }

    /// The same, on virtual time: `activity` is shared with a manual clock, so a hanging reply
    /// counts as parked.
    package init(
        configuration: Configuration = Configuration(), clock: any Clock<Duration> = ContinuousClock(),
        activity: ActivityMonitor?
    ) {
        self.activity = activity
        self.state = Locked(State(configuration: configuration))
        self.clock = clock
    }

    // MARK: - HTTPTransport

    /// Answers one request. Throws `CancellationError` when the task is cancelled while a
    /// delay or a hanging reply is pending, and the `HTTPTransportError`s of the faults.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let (decision, satisfied) = state.withLock { state in
            let decision = state.decide(request)
            // An answer without delay ends here, so "pending" means really waiting.
            if decision.delay == nil, let outcome = decision.plan.immediateOutcome {
                state.finish(decision.sequence, outcome)
            }
            return (decision, state.takeSatisfiedPendingWaiters())
        }
        for waiter in satisfied { waiter.resume() }
        if let delay = decision.delay {
            do {
                try await clock.sleep(for: delay)
            } catch {
                finish(decision.sequence, .failed("cancelled"))
                throw error
            }
            if let outcome = decision.plan.immediateOutcome { finish(decision.sequence, outcome) }
        }
        switch decision.plan {
        case .respond(let response):
            return response
        case .refuseConnection:
            throw HTTPTransportError.cannotConnect("Connection refused (demo fault \(DemoFault.gravityRefused.name))")
        case .loseConnection:
            throw HTTPTransportError.connectionLost(
                "Connection lost after the request was sent (demo fault \(DemoFault.lostAfterSend.name))")
        case .hang:
            do {
                try await DemoCancellationWaiter.suspendUntilCancelled(activity: activity)
            } catch {
                finish(decision.sequence, .failed("cancelled"))
                throw error
            }
        }
    }

    // MARK: - Configuration

    /// The current configuration.
    public var configuration: Configuration {
        state.withLock { $0.configuration }
    }

    /// Changes the configuration; the next request sees the change.
    public func updateConfiguration(_ change: (inout Configuration) -> Void) {
        state.withLock { change(&$0.configuration) }
    }

    // MARK: - Faults

    /// Every fault with a one-line description, for help and completion.
    package static var faultHelp: [(name: String, summary: String)] {
        DemoFault.allCases.map { ($0.name, $0.summary) }
    }

    /// Arms `fault`: `.once` for the next request it applies to, `.sticky` until cleared.
    /// Arming a fault again replaces its mode.
    public func inject(_ fault: DemoFault, mode: DemoFaultMode = .once) {
        state.withLock { $0.faults.inject(fault, mode: mode) }
    }

    /// Disarms `fault`.
    public func clear(_ fault: DemoFault) {
        state.withLock { $0.faults.clear(fault) }
    }

    /// Disarms every fault.
    public func clearFaults() {
        state.withLock { $0.faults.clearAll() }
    }

    /// The armed faults, in the order they were armed.
    public var activeFaults: [DemoActiveFault] {
        state.withLock { $0.faults.active }
    }

    // MARK: - Logs

    /// Every request handled, in arrival order, with its outcome.
    public var requestLog: [DemoRequestRecord] {
        state.withLock { $0.log }
    }

    /// Every tracking URL requested (product, reply and content events), in order.
    public var trackingHits: [URL] {
        state.withLock { $0.trackingHits }
    }

    /// Every custom event received on Gravity `/event`, in order.
    public var receivedEvents: [DemoGravityEvent] {
        state.withLock { $0.gravity.events }
    }

    /// Every rating received, in order.
    public var feedback: [DemoFeedbackRecord] {
        state.withLock { $0.shopping.feedback }
    }

    /// Keeps the Shopping API's threads in `fileURL`, across runs: what an earlier store left
    /// there is replayed now (its threads, replies and history are back), and every message
    /// and rating received from now on is added. The REPL keeps it in its state directory, so
    /// a restarted REPL meets the same server (D18, D19).
    public func keepThreads(in fileURL: URL) {
        state.withLock { $0.open(DemoThreadJournal(fileURL: fileURL)) }
    }

    /// Empties the request log, tracking hits, events and ratings; dialogs and users stay.
    public func clearLogs() {
        state.withLock { state in
            state.log.removeAll()
            state.trackingHits.removeAll()
            state.gravity.clearEvents()
            state.shopping.clearFeedback()
        }
    }

    /// The number of requests that have arrived and not yet ended (slow or hanging replies).
    public var pendingRequestCount: Int {
        state.withLock { $0.pendingCount }
    }

    /// Returns once at least `count` requests are pending — that is, once the code under test
    /// is really waiting on the store — or when the calling task is cancelled. Lets a test or
    /// a transcript replay act at the right moment without polling.
    public func waitUntilPending(count: Int = 1) async {
        let id = state.withLock { state in
            defer { state.nextWaiterId += 1 }
            return state.nextWaiterId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.pendingCount >= count || state.cancelledWaiters.remove(id) != nil { return true }
                    state.pendingWaiters.append(PendingWaiter(id: id, count: count, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> PendingWaiter? in
                guard let index = state.pendingWaiters.firstIndex(where: { $0.id == id }) else {
                    state.cancelledWaiters.insert(id)
                    return nil
                }
                return state.pendingWaiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
    }

    private func finish(_ sequence: Int, _ outcome: DemoRequestRecord.Outcome) {
        state.withLock { $0.finish(sequence, outcome) }
    }
}

// MARK: - Request handling

extension DemoStore {
    /// What `send` does after deciding under the lock.
    fileprivate enum Plan: Sendable {
        case respond(HTTPResponse)
        case refuseConnection
        case loseConnection
        case hang

        /// How the request log records this plan once any delay has passed; `nil` for `hang`.
        var immediateOutcome: DemoRequestRecord.Outcome? {
            switch self {
            case .respond(let response): .status(response.status)
            case .refuseConnection: .failed("connection refused")
            case .loseConnection: .failed("connection lost")
            case .hang: nil
            }
        }
    }

    fileprivate struct Decision: Sendable {
        var sequence: Int
        var delay: Duration?
        var plan: Plan
    }

    fileprivate struct PendingWaiter: Sendable {
        var id: Int
        var count: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    fileprivate struct State: Sendable {
        var configuration: Configuration
        var pendingWaiters: [PendingWaiter] = []
        var cancelledWaiters: Set<Int> = []
        var nextWaiterId = 1
        var faults = DemoFaultBoard()
        var gravity = DemoGravity()
        var shopping = DemoShopping()
        var log: [DemoRequestRecord] = []
        var nextSequence = 1
        var trackingHits: [URL] = []
        /// Where the Shopping API's messages and ratings are kept across runs, if anywhere.
        var journal: DemoThreadJournal?

        /// Sets the outcome of a logged request (a no-op if the log was cleared meanwhile).
        mutating func finish(_ sequence: Int, _ outcome: DemoRequestRecord.Outcome) {
            if let index = log.lastIndex(where: { $0.sequence == sequence }) {
                log[index].outcome = outcome
            }
        }

        var pendingCount: Int {
            log.count { $0.outcome == .pending }
        }

        /// Removes and returns the `waitUntilPending` callers whose count is reached.
        mutating func takeSatisfiedPendingWaiters() -> [CheckedContinuation<Void, Never>] {
            let pending = pendingCount
            let satisfied = pendingWaiters.filter { $0.count <= pending }
            pendingWaiters.removeAll { $0.count <= pending }
            return satisfied.map(\.continuation)
        }

        /// Routes the request, applies armed faults and runs the handler: every state change
        /// happens here, under the lock, before any await.
        mutating func decide(_ request: HTTPRequest) -> Decision {
            let route = DemoRoute(request, trackingHosts: [DemoStore.trackingHost, DemoStore.secondaryTrackingHost])
            let sequence = nextSequence
            nextSequence += 1
            log.append(
                DemoRequestRecord(
                    sequence: sequence, service: route.endpoint?.service ?? .unknown,
                    method: request.method.rawValue, path: route.loggedPath, outcome: .pending))
            func answer(_ response: HTTPResponse, after delay: Duration? = nil) -> Decision {
                Decision(sequence: sequence, delay: delay, plan: .respond(response))
            }

            guard let endpoint = route.endpoint else {
                return answer(DemoHTTP.error(404, code: "NOT_FOUND", message: "No route for \(route.loggedPath)"))
            }
            guard request.method == endpoint.method else {
                return answer(
                    DemoHTTP.error(
                        405, code: "METHOD_NOT_ALLOWED", message: "\(request.method.rawValue) is not allowed here"))
            }
            if endpoint.service != .gravity {
                // Shopping API and tracking requests never carry a key (S5, wire.md § Tracking URLs).
                var keys = gravity.seenKeys
                if let apiKey = configuration.apiKey { keys.insert(apiKey) }
                if let violation = DemoShopping.credentialViolation(request, knownKeys: keys) {
                    return answer(violation)
                }
            }
            if endpoint == .tracking {
                trackingHits.append(request.url)
                return answer(DemoHTTP.noContent())
            }

            let (delayFault, outcomeFault) = faults.take(for: endpoint)
            let delay: Duration? =
                switch delayFault {
                case .slowReply: configuration.slowReplyLatency
                case .slowChoose: configuration.slowChooseLatency
                default: nil
                }
            switch outcomeFault {
            case .gravityRefused:
                return Decision(sequence: sequence, delay: delay, plan: .refuseConnection)
            case .replyTimeout:
                return Decision(sequence: sequence, delay: delay, plan: .hang)
            case .ipNotAllowed:
                return answer(
                    DemoHTTP.error(403, code: "IP_NOT_ALLOWED", message: "Requests from this address are not allowed"),
                    after: delay)
            case .messageConflict:
                return answer(
                    DemoHTTP.error(409, code: "MESSAGE_ID_CONFLICT", message: "This message ID is already in use"),
                    after: delay)
            case .historyNotFound:
                return answer(
                    DemoHTTP.error(404, code: "SHOPPING_HISTORY_NOT_FOUND", message: "History is not available"),
                    after: delay)
            case .badGateway:
                return answer(
                    DemoHTTP.error(502, code: "BAD_GATEWAY", message: "The upstream model did not answer"), after: delay
                )
            case .serviceUnavailable:
                return answer(
                    DemoHTTP.error(503, code: "SERVICE_UNAVAILABLE", message: "The service is overloaded"),
                    after: delay)
            case .rateLimited:
                return answer(
                    DemoHTTP.error(
                        429, code: "RATE_LIMITED", message: "Too many requests", headers: ["Retry-After": "30"]),
                    after: delay)
            case .invalidReply:
                let garbage = HTTPResponse(
                    status: 200, headers: ["Content-Type": "text/html"], body: Data("<html>upstream error</html>".utf8))
                return answer(garbage, after: delay)
            case .lostAfterSend:
                _ = handle(endpoint, route: route, request: request)
                return Decision(sequence: sequence, delay: delay, plan: .loseConnection)
            case .slowReply, .slowChoose, nil:
                let response = handle(endpoint, route: route, request: request)
                if delay == nil, endpoint == .visit,
                    DemoGravity.campaignScreen(of: JSONValue.parse(request.body)?["ctx"], configuration) != nil
                {
                    return answer(response, after: configuration.campaignVisitLatency)
                }
                return answer(response, after: delay)
            }
        }

        private mutating func handle(_ endpoint: DemoEndpoint, route: DemoRoute, request: HTTPRequest)
            -> HTTPResponse
        {
            switch endpoint {
            case .choose, .visit, .event:
                return gravity.respond(to: endpoint, request: request, configuration: configuration)
            case .messages:
                journal?.append(endpoint, request)  // D18: a restarted store has this thread
                return shopping.postMessage(request, configuration: configuration)
            case .history:
                return shopping.history(request, threadId: route.threadId ?? "", configuration: configuration)
            case .feedback:
                journal?.append(endpoint, request)
                return shopping.postFeedback(request, configuration: configuration)
            case .tracking:
                return DemoHTTP.noContent()
            }
        }

        /// Replays what an earlier run received, then keeps what comes in `journal`.
        mutating func open(_ journal: DemoThreadJournal) {
            for (endpoint, request) in journal.requests() {
                switch endpoint {
                case .messages: _ = shopping.postMessage(request, configuration: configuration)
                case .feedback: _ = shopping.postFeedback(request, configuration: configuration)
                default: continue
                }
            }
            shopping.clearFeedback()  // what this run receives is what it reports
            self.journal = journal
        }
    }
}

// MARK: - Waiting for cancellation

/// Parks a task until it is cancelled: the `reply-timeout` fault's "never answers".
/// Independent of any clock, so advancing a test clock never ends it; only cancellation does.
final class DemoCancellationWaiter: Sendable {
    private struct Parked: Sendable {
        var continuation: CheckedContinuation<Void, Never>?
        var cancelled = false
    }

    private let parked = Locked(Parked())
    /// Told that the task parks and, on cancellation, that it runs again (replay quiescence).
    private let activity: ActivityMonitor?

    init(activity: ActivityMonitor?) {
        self.activity = activity
    }

    /// Suspends until the current task is cancelled, then throws `CancellationError`.
    static func suspendUntilCancelled(activity: ActivityMonitor?) async throws -> Never {
        let waiter = DemoCancellationWaiter(activity: activity)
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiter.park(continuation)
            }
        } onCancel: {
            waiter.cancel()
        }
        throw CancellationError()
    }

    private func park(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = parked.withLock { parked in
            if parked.cancelled { return true }
            parked.continuation = continuation
            return false
        }
        if resumeNow { continuation.resume() } else { activity?.end() }
    }

    private func cancel() {
        let continuation = parked.withLock { parked in
            parked.cancelled = true
            defer { parked.continuation = nil }
            return parked.continuation
        }
        if let continuation {
            activity?.begin()
            continuation.resume()
        }
    }
}
