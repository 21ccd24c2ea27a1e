import Foundation
import ShoppingAssistant

// MARK: - Transports

/// Answers every request at once from memory, routing by path suffix as the demo store does:
/// Gravity `/choose`, `/visit`, `/event`; Shopping `/v1/messages`; any other GET (tracking
/// URLs) gets a 204. It records when it hands back a message reply, so that reply processing
/// can be timed from that instant.
final class InstantTransport: HTTPTransport, Sendable {
    private struct State {
        var replyBody: @Sendable (Int) -> Data
        var lastReplyHandoff: ContinuousClock.Instant?
        var messages = 0
        var events = 0
        var trackingURLs = 0
    }

    private let state: Locked<State>
    private static let jsonHeaders = ["Content-Type": "application/json"]

    init(replyBody: Data = BenchFixtures.reply(products: 3)) {
        state = Locked(State(replyBody: { _ in replyBody }))
    }

    /// Answers the `n`-th message (from 1) with `replies(n)`, e.g. to give every reply its own ID.
    init(replies: @escaping @Sendable (Int) -> Data) {
        state = Locked(State(replyBody: replies))
    }

    /// When the latest `/v1/messages` reply left the transport.
    var lastReplyHandoff: ContinuousClock.Instant? { state.withLock { $0.lastReplyHandoff } }
    var counts: (messages: Int, events: Int, trackingURLs: Int) {
        state.withLock { ($0.messages, $0.events, $0.trackingURLs) }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let path = request.url.path
        if request.method == .post, path.hasSuffix("/v1/messages") {
            let body = state.withLock { state -> Data in
                state.messages += 1
                let body = state.replyBody(state.messages)
                state.lastReplyHandoff = Timing.now
                return body
            }
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: body)
        }
        if request.method == .post, path.hasSuffix("/choose") {
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: BenchFixtures.chooseBody)
        }
        if request.method == .post, path.hasSuffix("/event") || path.hasSuffix("/visit") {
            state.withLock { $0.events += 1 }
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: BenchFixtures.eventBody)
        }
        if request.method == .get {
            state.withLock { $0.trackingURLs += 1 }
            return HTTPResponse(status: 204)
        }
        return HTTPResponse(status: 404)
    }
}

/// Sends requests for one host over the network transport and everything else to the
/// instant one: the Shopping API on the loopback server, Gravity and tracking in memory. It
/// notes when the latest network request entered and left the transport, so that an engine's
/// round trip splits into before, in and after the transport.
struct RoutingTransport: HTTPTransport {
    let networkHost: String
    let network: any HTTPTransport
    let local: InstantTransport
    private let lastNetworkCall = Locked<(entered: ContinuousClock.Instant, left: ContinuousClock.Instant)?>(nil)

    init(networkHost: String, network: any HTTPTransport, local: InstantTransport) {
        self.networkHost = networkHost
        self.network = network
        self.local = local
    }

    /// When the latest network request entered the transport and when its answer left it.
    var latestNetworkCall: (entered: ContinuousClock.Instant, left: ContinuousClock.Instant)? {
        lastNetworkCall.withLock { $0 }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.url.host == networkHost else { return try await local.send(request) }
        let entered = Timing.now
        defer {
            let left = Timing.now
            lastNetworkCall.withLock { $0 = (entered, left) }
        }
        return try await network.send(request)
    }
}

// MARK: - Host objects

/// A presenter that keeps the latest snapshot and notes when a reply became visible.
///
/// `expectReply(messages:)` arms an expectation before a message is sent; the first snapshot
/// meeting it is noted with its arrival instant, whatever arrives after it, and
/// `replyObserved()` returns that instant. Snapshots can arrive out of order (see
/// `staleDeliveries`), so waiting on "the latest snapshot" could wait forever.
final class BenchPresenter: AssistantPresenter {
    private struct State {
        var latest: AssistantChatSnapshot?
        var snapshots = 0
        /// The message count the armed expectation waits for (no message in flight).
        var expected: Int?
        var metAt: ContinuousClock.Instant?
        var waiter: CheckedContinuation<ContinuousClock.Instant, Never>?
        /// User messages a snapshot has shown settled (replied or failed).
        var settledMessages: Set<String> = []
        var staleDeliveries = 0
    }

    private let state = Locked(State())

    var availability: AssistantPresenterAvailability { .available }

    /// The latest snapshot received.
    var latest: AssistantChatSnapshot? { state.withLock { $0.latest } }
    /// How many snapshots were received.
    var snapshotCount: Int { state.withLock { $0.snapshots } }
    /// Snapshots that arrived after a newer one: a "sending" snapshot of message N after one
    /// that showed N settled. The presenter protocol promises delivery in order. The engine
    /// may coalesce snapshots (skip one that a newer one supersedes), so counts and
    /// positions prove nothing: a snapshot is stale only when the very message it shows in
    /// flight was already shown settled (the bench never retries a message).
    var staleDeliveries: Int { state.withLock { $0.staleDeliveries } }

    /// Prints a note if snapshots arrived out of order while `messages` messages were sent.
    func reportStaleDeliveries(messages: Int) {
        let stale = staleDeliveries
        guard stale > 0 else { return }
        Report.line(
            "note: for \(stale) of \(messages) messages the presenter received the \"sending\" snapshot after the "
                + "one with the reply: AssistantPresenter promises snapshots in order")
    }

    func presentAssistant(_ chat: AssistantChatSnapshot) async { receive(chat) }
    func updateAssistant(_ chat: AssistantChatSnapshot) async { receive(chat) }
    func dismissAssistant() async {}

    /// Drops the latest snapshot (and with it the dialog storage it shares).
    func forget() {
        state.withLock { $0.latest = nil }
    }

    /// Arms the expectation of a snapshot with `count` messages and nothing in flight.
    func expectReply(messages count: Int) {
        state.withLock { state in
            state.expected = count
            state.metAt = nil
        }
    }

    /// Suspends until the armed expectation is met; returns when the snapshot arrived.
    func replyObserved() async -> ContinuousClock.Instant {
        await withCheckedContinuation { continuation in
            let metAt = state.withLock { state -> ContinuousClock.Instant? in
                if let metAt = state.metAt { return metAt }
                state.waiter = continuation
                return nil
            }
            if let metAt { continuation.resume(returning: metAt) }
        }
    }

    private func receive(_ chat: AssistantChatSnapshot) {
        let now = Timing.now
        let waiter = state.withLock {
            state -> (CheckedContinuation<ContinuousClock.Instant, Never>, ContinuousClock.Instant)? in
            state.latest = chat
            state.snapshots += 1
            let count = chat.messages.count
            // From the end: the last user message is the last or the one before it.
            if let lastUserMessage = chat.messages.last(where: { $0.role == .user })?.id {
                if !chat.isSending {
                    state.settledMessages.insert(lastUserMessage)
                } else if state.settledMessages.contains(lastUserMessage) {
                    state.staleDeliveries += 1
                }
            }
            guard let expected = state.expected, state.metAt == nil, !chat.isSending, count == expected else {
                return nil
            }
            state.metAt = now
            defer { state.waiter = nil }
            return state.waiter.map { ($0, now) }
        }
        if let (continuation, instant) = waiter { continuation.resume(returning: instant) }
    }
}

/// A builder whose rendering is one line per product plus a title.
struct BenchBuilder: AssistantProductBlockBuilder {
    struct Rendering: AssistantProductBlockRendering {
        let height: Int
    }

    func build(block: AssistantProductBlock, layout: AssistantProductLayout) -> any AssistantProductBlockRendering {
        Rendering(height: 1 + max(1, block.products.count))
    }
}

/// Accepts every action and does nothing with it.
struct BenchHandler: AssistantActionHandler {
    func canHandle(_ action: AssistantAction) -> Bool { true }
    func handle(_ action: AssistantAction) async {}
}

// MARK: - Engines

enum BenchEngine {
    static let page = PageContext(type: .product, data: ["SKU-1001"], location: BenchFixtures.page)
    /// `BENCH_DEBUG` set: engines print their debug log to stderr.
    static let debugLog = ProcessInfo.processInfo.environment["BENCH_DEBUG"] != nil

    /// An engine with a known uid (so no wait for identity), builder and handler registered.
    static func make(
        transport: any HTTPTransport, shoppingBaseURL: URL? = nil, gravityBaseURL: URL? = nil,
        gravityTimeout: Duration = .seconds(10), deliveryStore: any DeliveryStore = InMemoryDeliveryStore()
    ) async -> AssistantEngine {
        let engine = AssistantEngine(
            configuration: AssistantEngineConfiguration(
                apiKey: BenchFixtures.apiKey, section: BenchFixtures.section, gravityBaseURL: gravityBaseURL,
                shoppingBaseURL: shoppingBaseURL, gravityTimeout: gravityTimeout),
            transport: transport, identityStore: InMemoryIdentityStore(uid: BenchFixtures.uid),
            deliveryStore: deliveryStore)
        if debugLog {
            engine.logger.level = .debug
            engine.logger.setListener { level, message in
                FileHandle.standardError.write(Data("[\(level)] \(message.prefix(300))\n".utf8))
            }
        }
        await engine.setAssistantProductBlockBuilder(BenchBuilder())
        await engine.setAssistantActionHandler(BenchHandler())
        return engine
    }

    /// Prepares the start screen; stops the bench if that fails, since nothing else can run.
    static func prepare(_ engine: AssistantEngine) async {
        let result = await engine.prepareAssistant(
            assistantSelector: BenchFixtures.assistantSelector, pageContext: page)
        guard result == .ready else { fatalError("prepareAssistant returned \(result)") }
    }

    static func open(_ engine: AssistantEngine, on presenter: BenchPresenter) async {
        let result = await engine.openAssistant(presenter: presenter)
        guard result == .opened else { fatalError("openAssistant returned \(result)") }
    }

    /// An engine prepared and open on `presenter`.
    static func openChat(
        transport: any HTTPTransport, presenter: BenchPresenter, shoppingBaseURL: URL? = nil
    ) async -> AssistantEngine {
        let engine = await make(transport: transport, shoppingBaseURL: shoppingBaseURL)
        await prepare(engine)
        await open(engine, on: presenter)
        return engine
    }

    /// Sends one message and stops the bench if the engine refuses it.
    static func send(_ engine: AssistantEngine, _ text: String) async {
        if case .failure(let refusal) = await engine.sendMessage(text) {
            fatalError("sendMessage refused: \(refusal)")
        }
    }
}

/// Keeps results alive so the optimiser cannot drop the work that made them.
enum Sink {
    private static let storage = Locked(0)

    static func consume(_ value: Int) {
        storage.withLock { $0 &+= value }
    }
}
