import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// Seeded random sessions against the real actor, compared step by step with a small model.
///
/// Each seed generates a list of host and network steps (prepare, open, close, send, a reply
/// arriving, a reply timing out, new chat, identity change, taps, impressions, the app's own
/// lock). The engine runs on a manual clock and a transport that answers every endpoint from
/// an in-test server and holds message replies until a step releases them. After every step
/// the engine is left to settle (nothing runnable remains) and the model's predictions and
/// the invariants are checked. Time moves only through the manual clock.
///
/// On a failure the seed and the step list are printed; `STRESS_SEED=<seed>` reruns one seed.
@Suite(.timeLimit(.minutes(10)))
struct ModelBasedStressTests {
    static let seedCount: UInt64 = 200
    static let stepsPerSeed = 60

    /// The seeds to run: all of them, or the one named by `STRESS_SEED`.
    static var seeds: [UInt64] {
        if let text = ProcessInfo.processInfo.environment["STRESS_SEED"], let seed = UInt64(text) { return [seed] }
        return Array(1...seedCount)
    }

    /// The seeds, in ten interleaved groups that run as separate test cases, in parallel.
    static let groups = Array(0..<10)

    // covers: D2, D3, D4, D5, D8, D13, D17, O2, O3, O4, O5, O6, P6, P8, PR6, PR8, PR9, PR10, DL1
    @Test(arguments: groups) func randomSessionsKeepTheEngineInvariants(group: Int) async {
        let seeds = Self.seeds.filter { Int($0 % UInt64(Self.groups.count)) == group || Self.seeds.count == 1 }
        guard !seeds.isEmpty, Self.seeds.count > 1 || group == 0 else { return }
        var failures = 0
        for seed in seeds {
            let run = await StressRun(seed: seed, steps: Self.stepsPerSeed)
            guard let failure = await run.execute() else { continue }
            failures += 1
            print(failure)
            Issue.record(Comment(rawValue: failure))
            if failures >= 3 { break }  // enough to debug; the rest would repeat the story
        }
        print("Model-based stress: \(seeds.count) seeds × \(Self.stepsPerSeed) steps, \(failures) failing")
    }

    @Test func sameSeedGeneratesTheSameSteps() {
        var first = SplitMix64(seed: 42)
        var second = SplitMix64(seed: 42)
        let a = (0..<200).map { _ in StressStep.random(&first).description }
        let b = (0..<200).map { _ in StressStep.random(&second).description }
        #expect(a == b)
        #expect(Set(a.map { $0.prefix(4) }).count >= 8, "the generator reaches most kinds of steps")
    }
}

// MARK: - Randomness

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and the same sequence on every platform,
/// so a seed printed by a failing run replays the same session.
struct SplitMix64 {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// True with the given probability in percent.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

// MARK: - Steps

/// How a held message request ends.
enum StressReplyOutcome: Equatable, CustomStringConvertible {
    case reply
    /// An HTTP error the server answered with: it did not process the message.
    case certain(status: Int, serverCode: String?)
    /// A 503 after which the server may (or may not) have processed the message (D5).
    /// `historyHeld`: the history read it causes waits for a later step.
    case uncertain(serverProcessed: Bool, historyHeld: Bool)

    var description: String {
        switch self {
        case .reply: return "reply"
        case .certain(let status, let code): return "HTTP \(status)\(code.map { " " + $0 } ?? "")"
        case .uncertain(let processed, let held):
            return
                "HTTP 503 (server \(processed ? "processed it" : "did not process it")\(held ? ", history held" : ""))"
        }
    }
}

/// What `/choose` answers for a preparation.
enum StressConfiguration: String {
    case enabled, disabled
    /// HTTP 500: the preparation fails (P6).
    case failing
}

enum StressStep: CustomStringConvertible {
    static let mainSelector = Fixtures.assistantSelector
    static let otherSelector = "gift-assistant"

    case prepare(selector: String, configuration: StressConfiguration)
    case open(presenterBusy: Bool)
    case close
    case send
    /// Releases one held message request or history read, picked by `pick` among those held.
    case replyArrives(pick: Int, outcome: StressReplyOutcome)
    /// Advances the clock by the 120 s reply timeout (D3).
    case replyTimesOut(serverProcessed: Bool, historyHeld: Bool)
    case newChat
    case setUser(String)
    case tap(pick: Int, fromStale: Bool, double: Bool)
    case impression(pick: Int, fromStale: Bool)
    case appLock(Bool)

    static func random(_ rng: inout SplitMix64) -> StressStep {
        switch rng.below(100) {
        case 0..<12:
            let selector = rng.chance(85) ? mainSelector : otherSelector
            let roll = rng.below(100)
            return .prepare(selector: selector, configuration: roll < 76 ? .enabled : roll < 88 ? .disabled : .failing)
        case 12..<26: return .open(presenterBusy: rng.chance(10))
        case 26..<30: return .close
        case 30..<45: return .send
        case 45..<60:
            let pick = rng.below(8)
            let outcome: StressReplyOutcome
            switch rng.below(100) {
            case 0..<65: outcome = .reply
            case 65..<72: outcome = .certain(status: 500, serverCode: nil)
            case 72..<76: outcome = .certain(status: 409, serverCode: "MESSAGE_ID_CONFLICT")
            case 76..<80: outcome = .certain(status: 401, serverCode: nil)
            default: outcome = .uncertain(serverProcessed: rng.chance(50), historyHeld: rng.chance(40))
            }
            return .replyArrives(pick: pick, outcome: outcome)
        case 60..<64: return .replyTimesOut(serverProcessed: rng.chance(50), historyHeld: rng.chance(40))
        case 64..<68: return .newChat
        case 68..<71: return .setUser("user-\(rng.below(3))")
        case 71..<82: return .tap(pick: rng.below(16), fromStale: rng.chance(25), double: rng.chance(25))
        case 82..<96: return .impression(pick: rng.below(16), fromStale: rng.chance(25))
        default: return .appLock(rng.chance(50))
        }
    }

    var description: String {
        switch self {
        case .prepare(let selector, let configuration):
            return "prepare \(selector)\(configuration == .enabled ? "" : " (\(configuration.rawValue))")"
        case .open(let busy): return "open\(busy ? " on a busy presenter" : "")"
        case .close: return "close"
        case .send: return "send"
        case .replyArrives(let pick, let outcome): return "reply arrives #\(pick): \(outcome)"
        case .replyTimesOut(let processed, let held):
            return "reply times out (server \(processed ? "processed it" : "did not")\(held ? ", history held" : ""))"
        case .newChat: return "new chat"
        case .setUser(let user): return "setUser \(user)"
        case .tap(let pick, let stale, let double):
            return "tap\(double ? " twice" : "") #\(pick)\(stale ? " (preferring a stale ref)" : "")"
        case .impression(let pick, let stale): return "impression #\(pick)\(stale ? " (preferring a stale ref)" : "")"
        case .appLock(let on): return on ? "app locks presentation" : "app unlocks presentation"
        }
    }
}

// MARK: - The server

/// The backend the transport answers from: configurations, replies and thread histories.
final class StressServer: Sendable {
    /// What the server answers (or answered) to one message.
    struct Answer: Sendable, Hashable {
        let messageId: String
        let assistantMessageId: String
        let itemIds: [String]

        /// Items at even positions have a SKU and a URL; the others cannot be opened (PR1).
        static func openable(_ index: Int) -> Bool { index.isMultiple(of: 2) }

        /// The reply of message number `n` has `n % 4` products.
        init(messageId: String) {
            self.messageId = messageId
            let number = Int(messageId.suffix(12), radix: 16) ?? 0
            assistantMessageId = "am-\(number)"
            itemIds = (0..<(number % 4)).map { "p-\(number)-\($0)" }
        }

        func json(idKey: String) -> [String: Any] {
            let items: [[String: Any]] = itemIds.enumerated().map { index, itemId in
                var item: [String: Any] = [
                    "itemId": itemId, "name": "Товар \(itemId)",
                    "events": [
                        ["type": "visible_impression", "urls": ["https://t.example/vi?i=\(itemId)"]],
                        ["type": "click", "urls": ["https://t.example/c?i=\(itemId)"]],
                    ],
                ]
                if Self.openable(index) {
                    item["sku"] = "SKU-\(itemId)"
                    item["url"] = "https://shop.example/p/\(itemId)"
                }
                return item
            }
            return [
                idKey: assistantMessageId, "replyTo": messageId, "messageId": messageId, "role": "assistant",
                "text": "Ответ на \(messageId)", "products": ["title": "Подборка", "items": items],
                "ui": ["suggests": ["Ещё"]],
            ]
        }
    }

    private struct State {
        var configuration = StressConfiguration.enabled
        var holdHistory = false
        var threads: [String: [Answer]] = [:]
    }

    private let state = Locked(State())

    func setConfiguration(_ configuration: StressConfiguration) { state.withLock { $0.configuration = configuration } }

    /// Whether history reads from now on wait for a later step.
    func setHoldHistory(_ hold: Bool) { state.withLock { $0.holdHistory = hold } }

    /// The server processed the message: its reply is in the thread's history from now on.
    func processed(_ answer: Answer, thread: String) {
        state.withLock { $0.threads[thread, default: []].append(answer) }
    }

    func respond(_ endpoint: WireEndpoint, _ request: HTTPRequest) -> RoutingTransport.Answer {
        switch endpoint {
        case .choose:
            // The canonical uid Gravity returns for whatever the request was made as (S3).
            let body = Fixtures.body(request)
            let user = body["user"] as? [String: Any]
            let sent = user?["uid"] as? String ?? user?["custom"] as? String ?? "anonymous"
            let canonical = sent.hasPrefix("u-") ? sent : "u-\(sent)"
            // The answer names the selector asked for, as the service does.
            let selector = (body["data"] as? [[String: Any]])?.first?["selector"] as? String ?? ""
            switch state.withLock({ $0.configuration }) {
            case .enabled:
                return .respond(
                    Fixtures.choose(
                        customJSON: Fixtures.configurationJSON, uid: canonical, ses: "s-1", selector: selector))
            case .disabled:
                return .respond(
                    Fixtures.choose(customJSON: #"{"enabled":false}"#, uid: canonical, ses: "s-1", selector: selector))
            case .failing:
                return .respond(.text(500, ""))
            }
        case .messages:
            return .hold
        case .history:
            if state.withLock({ $0.holdHistory }) { return .hold }
            return .respond(history(thread: Self.thread(of: request)))
        case .visit, .event, .feedback, .tracking:
            return .respond(HTTPResponse(status: 204))
        }
    }

    /// The thread's history as it stands now.
    func history(thread: String) -> HTTPResponse {
        let answers = state.withLock { $0.threads[thread] ?? [] }
        let messages: [[String: Any]] = answers.flatMap { answer -> [[String: Any]] in
            [["id": answer.messageId, "role": "user", "text": "…"], answer.json(idKey: "id")]
        }
        return .json(200, ["threadId": thread, "messages": messages])
    }

    /// The thread ID of a history request: `/v1/threads/{id}/messages`.
    static func thread(of request: HTTPRequest) -> String {
        let components = request.url.pathComponents
        return components.firstIndex(of: "threads").map { components[$0 + 1] } ?? ""
    }
}

// MARK: - The model

/// What the engine should show and answer, maintained independently of it.
struct StressModel {
    enum UserStatus: Equatable, CustomStringConvertible {
        case sending, sent
        case failed(AssistantError.Code, retryable: Bool)

        var description: String {
            switch self {
            case .sending: return "sending"
            case .sent: return "sent"
            case .failed(let code, let retryable): return "failed(\(code.rawValue)\(retryable ? ", retry" : ""))"
            }
        }
    }

    enum Entry: Equatable {
        case user(id: String, text: String, status: UserStatus)
        case reply(StressServer.Answer)
    }

    /// A product ref handed out by the snapshot of the current opening.
    struct CurrentRef: Equatable {
        let ref: AssistantProductRef
        let itemId: String
        let canOpen: Bool
        /// The opening it was handed out in (the count of presentations so far).
        let opening: Int
    }

    var userId: String?
    var prepReady = false
    /// The selector of the latest ready start screen, if any (D14, D16).
    var latestReady: String?
    var open = false
    var appLock = false
    /// The selector the current dialog is bound to; `nil` when no dialog has started.
    var dialogSelector: String?
    var entries: [Entry] = []
    var sending: String?
    /// A history read in flight after an uncertain outcome (D5): the error the message fails
    /// with if the history has no reply, and whether the server processed the message.
    var reconciling: (code: AssistantError.Code, serverProcessed: Bool)?
    var impressed: Set<AssistantProductRef> = []
    var currentRefs: [CurrentRef] = []
    var staleRefs: [AssistantProductRef] = []
    /// Refs that went stale while the chat stayed open: a new chat or an assistant change
    /// in the same opening. Rechecked after every step, as new products take their places.
    var staleInOpening: [AssistantProductRef] = []
    /// Message and item IDs of ended dialogs: never visible again (D13, D17).
    var retiredMessageIds: Set<String> = []
    var retiredItemIds: Set<String> = []
    var acceptedTaps: [String] = []
    var presents = 0
    var dismisses = 0
    var messagePosts = 0
    var historyReads = 0

    var dialogState: AssistantDialogState {
        if sending != nil { return .sending }
        return dialogSelector == nil ? .empty : .active
    }

    /// New chat, identity change, assistant change (D13).
    mutating func endDialog() {
        for entry in entries {
            switch entry {
            case .user(let id, _, _): retiredMessageIds.insert(id)
            case .reply(let answer):
                retiredMessageIds.insert(answer.assistantMessageId)
                retiredItemIds.formUnion(answer.itemIds)
            }
        }
        entries = []
        sending = nil
        reconciling = nil
        dialogSelector = nil
    }

    mutating func closeChat() {
        guard open else { return }
        open = false
        dismisses += 1
    }

    mutating func land(_ answer: StressServer.Answer) {
        setStatus(answer.messageId, .sent)
        entries.append(.reply(answer))
        sending = nil
        reconciling = nil
    }

    mutating func fail(_ messageId: String, _ code: AssistantError.Code, retryable: Bool) {
        setStatus(messageId, .failed(code, retryable: retryable))
        sending = nil
        reconciling = nil
    }

    /// An uncertain outcome of the message in flight: the history is read (D5).
    mutating func reconcile(_ answer: StressServer.Answer, code: AssistantError.Code, processed: Bool, held: Bool) {
        historyReads += 1
        if held {
            reconciling = (code, processed)
        } else if processed {
            land(answer)
        } else {
            fail(answer.messageId, code, retryable: true)
        }
    }

    private mutating func setStatus(_ messageId: String, _ status: UserStatus) {
        for index in entries.indices {
            if case .user(messageId, let text, _) = entries[index] {
                entries[index] = .user(id: messageId, text: text, status: status)
            }
        }
    }
}

// MARK: - One seeded run

/// Everything the invariants read from the engine, taken in one actor turn.
struct StressProbe: Sendable {
    let open: Bool
    let locks: PresentationLocks
    let dialogState: AssistantDialogState
    let snapshot: AssistantChatSnapshot
    let threadId: String?
}

extension AssistantEngine {
    func stressProbe() -> StressProbe {
        StressProbe(
            open: isAssistantOpen, locks: presentationLocks, dialogState: dialogState, snapshot: chatSnapshot,
            threadId: currentThreadId)
    }
}

final class StressRun {
    let seed: UInt64
    let steps: [StressStep]
    let h: EngineHarness
    let server: StressServer
    let lockEvents = CollectedValues<PresentationLocks>()
    /// Can hold its next dismissal, so a second tap can arrive while the close of the first is
    /// under way (PR9); a held dismissal parks uncounted, like a request the transport holds.
    let presenter: RecordingPresenter
    var model = StressModel()
    var trace: [String] = []
    var problems: [String] = []

    init(seed: UInt64, steps count: Int) async {
        self.seed = seed
        var rng = SplitMix64(seed: seed)
        steps = (0..<count).map { _ in StressStep.random(&rng) }
        let server = StressServer()
        self.server = server
        h = await EngineHarness(storedUID: "u-0", responder: { server.respond($0, $1) })
        presenter = h.bed.makePresenter()
        let events = lockEvents
        await h.engine.setPresentationLockListener { events.append($0) }
        // A new engine reads its delivery store first (DL3): a step that sends nothing must not
        // find that read still under way.
        await h.settle()
    }

    /// Runs every step; returns a report of the first step that broke the model or an invariant.
    func execute() async -> String? {
        for (index, step) in steps.enumerated() {
            await perform(step, index: index)
            let probe = await h.engine.stressProbe()
            refreshRefs(probe)
            checkInvariants(probe)
            await checkStaleInOpening()
            if !problems.isEmpty { return report(failedAt: index) }
        }
        // Let every held request end, so no task is left parked.
        for held in h.routes.held {
            h.routes.release(held.id, with: .success(.text(500, "")))
        }
        await h.settle()
        check(h.routes.held.isEmpty, "requests still held after the run")
        check(h.clock.sleeperCount == 0, "\(h.clock.sleeperCount) timers left after the run")
        check(h.activity.busy == 0, "work still running after the run")
        return problems.isEmpty ? nil : report(failedAt: steps.count)
    }

    private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { problems.append(message()) }
    }

    private func report(failedAt index: Int) -> String {
        let stepList = steps.enumerated().map { offset, step in
            let marker = offset == index ? " ← failed here" : ""
            let outcome = offset < trace.count ? "  ⇒ \(trace[offset])" : ""
            return "  \(offset + 1). \(step)\(outcome)\(marker)"
        }
        return """
            Model-based stress: seed \(seed) failed at step \(index + 1) of \(steps.count):
              \(problems.joined(separator: "\n  "))
            Rerun this seed alone: STRESS_SEED=\(seed) swift test --filter ModelBasedStressTests
            Steps:
            \(stepList.joined(separator: "\n"))
            """
    }

    // MARK: Steps

    private func perform(_ step: StressStep, index: Int) async {
        switch step {
        case .prepare(let selector, let configuration):
            server.setConfiguration(configuration)
            let call = h.bed.start {
                await $0.prepareAssistant(assistantSelector: selector, pageContext: Fixtures.productPage)
            }
            await h.settle()
            if configuration == .failing {
                // A 500 is tried again after 1 s, 2 s and 4 s within the 10 s deadline (DL1).
                for step in [1, 2, 4] {
                    h.clock.advance(by: .seconds(step))
                    await h.settle()
                }
            }
            let result = call.returnedValue
            switch (configuration, result) {
            case (.enabled, .ready?), (.disabled, .unavailable(.disabled)?): break
            case (.failing, .failure(let error)?) where error.code == .server && error.httpStatus == 500: break
            default: check(false, "prepare (\(configuration.rawValue)) returned \(Self.show(result))")
            }
            if configuration == .enabled {
                model.prepReady = true
                if let current = model.dialogSelector, current != selector { model.endDialog() }  // P8
                model.latestReady = selector
            } else {
                model.prepReady = false  // P6: the dialog and an open chat stay
            }
            trace.append("\(Self.show(result))")

        case .open(let busy):
            if busy { presenter.setAvailability(.busy) }
            let presenter = self.presenter
            let result = await h.settle { await $0.openAssistant(presenter: presenter) }
            presenter.setAvailability(.available)
            let expected: AssistantOpenResult
            if model.open {
                expected = .alreadyOpen
            } else if !model.prepReady {
                expected = .notReady
            } else {
                expected = busy ? .invalidPresenter : .opened
            }
            check(result == expected, "open returned \(Self.show(result)), expected \(expected)")
            if expected == .opened {
                model.open = true
                model.presents += 1
                model.impressed = []
            }
            trace.append("\(Self.show(result))")

        case .close:
            _ = await h.settle { await $0.closeAssistant() }
            model.closeChat()
            trace.append("closed")

        case .send:
            let text = "сообщение \(index + 1)"
            let result = await h.settle { await $0.sendMessage(text) }
            let expected: AssistantSendRefusal?
            if model.sending != nil {
                expected = .busy  // D2
            } else if model.dialogSelector == nil && model.latestReady == nil {
                expected = .notReady
            } else {
                expected = nil
            }
            switch (result, expected) {
            case (.success(let messageId)?, nil):
                model.entries.append(.user(id: messageId, text: text, status: .sending))
                model.sending = messageId
                if model.dialogSelector == nil { model.dialogSelector = model.latestReady }
                model.messagePosts += 1
                trace.append("sent \(messageId.suffix(4))")
            case (.failure(let refusal)?, let expected?) where refusal == expected:
                trace.append("refused: \(refusal)")
            default:
                check(false, "send returned \(Self.show(result)), expected \(expected.map { "\($0)" } ?? "success")")
                trace.append("\(Self.show(result))")
            }

        case .replyArrives(let pick, let outcome):
            let held = h.routes.held.filter { $0.endpoint == .messages || $0.endpoint == .history }
            guard !held.isEmpty else {
                trace.append("nothing waiting")
                return
            }
            let target = held[pick % held.count]
            if target.endpoint == .history {
                await historyArrives(target)
                return
            }
            let body = Fixtures.body(target.request)
            let messageId = body["messageId"] as? String ?? ""
            let thread = body["threadId"] as? String ?? ""
            let answer = StressServer.Answer(messageId: messageId)
            let isCurrent = messageId == model.sending
            switch outcome {
            case .reply:
                server.processed(answer, thread: thread)
                h.routes.release(target.id, with: .success(.json(200, answer.json(idKey: "assistantMessageId"))))
            case .certain(let status, let code):
                let response = code.map { Fixtures.errorBody(status, code: $0) } ?? .text(status, "")
                h.routes.release(target.id, with: .success(response))
            case .uncertain(let processed, let historyHeld):
                if processed { server.processed(answer, thread: thread) }
                server.setHoldHistory(historyHeld)
                h.routes.release(target.id, with: .success(.text(503, "")))
            }
            await h.settle()
            server.setHoldHistory(false)
            if isCurrent {
                switch outcome {
                case .reply: model.land(answer)
                case .certain(500, _): model.fail(messageId, .server, retryable: true)
                case .certain(409, _): model.fail(messageId, .messageConflict, retryable: false)  // D8
                case .certain: model.fail(messageId, .unauthorized, retryable: true)
                case .uncertain(let processed, let historyHeld):
                    model.reconcile(answer, code: .server, processed: processed, held: historyHeld)  // D5
                }
            }
            trace.append("\(isCurrent ? "current" : "late") message \(messageId.suffix(4)): \(outcome)")

        case .replyTimesOut(let processed, let historyHeld):
            // While a reply is awaited its 120 s deadline passes; while the history check after an
            // uncertain outcome is in flight, its own 30 s deadline passes and the message fails.
            let inFlight = model.reconciling == nil ? model.sending : nil
            let stalledCheck = model.reconciling.flatMap { reconciling in
                model.sending.map { (messageId: $0, code: reconciling.code) }
            }
            if let inFlight, processed, let thread = await h.engine.currentThreadId {
                server.processed(StressServer.Answer(messageId: inFlight), thread: thread)
            }
            server.setHoldHistory(historyHeld)
            h.clock.advance(by: .seconds(120))
            await h.settle()
            server.setHoldHistory(false)
            if let inFlight {
                // D3, D5: the reply deadline passed; the history decides.
                model.reconcile(
                    StressServer.Answer(messageId: inFlight), code: .timeout, processed: processed, held: historyHeld)
            } else if let stalledCheck {
                model.fail(stalledCheck.messageId, stalledCheck.code, retryable: true)  // D5: the check gave up
            }
            trace.append(
                inFlight.map { "timed out \($0.suffix(4))" }
                    ?? stalledCheck.map { "history check for \($0.messageId.suffix(4)) gave up" }
                    ?? "no reply timer running")

        case .newChat:
            _ = await h.settle { await $0.startNewChat() }
            model.endDialog()
            trace.append("new dialog")

        case .setUser(let user):
            let refsBefore = model.staleRefs + model.currentRefs.map(\.ref)
            _ = await h.settle { await $0.setUser(userId: user) }
            guard user != model.userId else {
                trace.append("same user: no change")
                return
            }
            model.userId = user
            model.endDialog()
            model.prepReady = false
            model.latestReady = nil
            model.closeChat()
            // PR8, D17: every ref from before the change is stale, for taps and impressions alike.
            let results = await h.settle { engine in
                var results: [AssistantInteractionResult] = []
                for ref in refsBefore {
                    results.append(await engine.performAssistantProductAction(product: ref, action: .tap))
                    results.append(await engine.performAssistantProductAction(product: ref, action: .visibleImpression))
                }
                return results
            }
            check(
                results?.allSatisfy { $0 == .staleReference } == true,
                "refs from before the identity change: \(Self.show(results?.map(\.rawValue)))")
            trace.append("identity changed; \(refsBefore.count) old refs stale")

        case .tap(let pick, let fromStale, let double):
            guard let (ref, current) = chooseRef(pick: pick, fromStale: fromStale) else {
                trace.append("no product to tap")
                return
            }
            let got = double ? await doubleTap(ref) : await singleTap(ref)
            let taps = double ? 2 : 1
            if let current, current.canOpen {
                // PR9, PR10: one accepted tap; the second press lands while the close is under way.
                let expected: [AssistantInteractionResult] = double ? [.duplicate, .accepted] : [.accepted]
                check(
                    got == expected,
                    "tap on \(current.itemId) returned \(got.map(\.rawValue)), expected \(expected.map(\.rawValue))")
                model.acceptedTaps.append(current.itemId)
                model.closeChat()
            } else {
                let expected: AssistantInteractionResult = current == nil ? .staleReference : .notActionable
                check(
                    got == Array(repeating: expected, count: taps),
                    "tap returned \(got.map(\.rawValue)), expected \(expected.rawValue)")
            }
            trace.append("\(current?.itemId ?? "stale ref"): \(got.map(\.rawValue))")

        case .impression(let pick, let fromStale):
            guard let (ref, current) = chooseRef(pick: pick, fromStale: fromStale) else {
                trace.append("no product shown")
                return
            }
            let result = await h.settle {
                await $0.performAssistantProductAction(product: ref, action: .visibleImpression)
            }
            let expected: AssistantInteractionResult
            if current == nil {
                expected = .staleReference  // PR8
            } else {
                expected = model.impressed.insert(ref).inserted ? .accepted : .duplicate  // PR6
            }
            check(result == expected, "impression returned \(Self.show(result)), expected \(expected)")
            trace.append("\(current?.itemId ?? "stale ref"): \(result?.rawValue ?? "never returned")")

        case .appLock(let on):
            _ = await h.settle { engine in
                if on { await engine.lockPresentation() } else { await engine.unlockPresentation() }
            }
            model.appLock = on
            trace.append(on ? "app lock held" : "app lock released")
        }
    }

    /// Releases a held history read with the thread's history as the server has it now.
    private func historyArrives(_ held: RoutingTransport.Held) async {
        let thread = StressServer.thread(of: held.request)
        let currentThread = await h.engine.currentThreadId
        let isCurrent = model.reconciling != nil && thread == currentThread
        h.routes.release(held.id, with: .success(server.history(thread: thread)))
        await h.settle()
        if isCurrent, let messageId = model.sending, let reconciling = model.reconciling {
            if reconciling.serverProcessed {
                model.land(StressServer.Answer(messageId: messageId))
            } else {
                model.fail(messageId, reconciling.code, retryable: true)
            }
        }
        trace.append("\(isCurrent ? "current" : "late") history read released")
    }

    /// One press of one card.
    private func singleTap(_ ref: AssistantProductRef) async -> [AssistantInteractionResult] {
        let result = await h.settle { await $0.performAssistantProductAction(product: ref, action: .tap) }
        return result.map { [$0] } ?? []
    }

    /// Two presses of one card, the second while the close of the first is under way. Returns
    /// the results in the order they came back.
    private func doubleTap(_ ref: AssistantProductRef) async -> [AssistantInteractionResult] {
        let results = Locked<[AssistantInteractionResult]>([])
        let engine = h.engine
        presenter.hold(.dismiss)
        for _ in 0..<2 {
            h.activity.spawn {
                let result = await engine.performAssistantProductAction(product: ref, action: .tap)
                results.withLock { $0.append(result) }
            }
        }
        await h.settle()
        if presenter.isHolding(.dismiss) {
            // O5, PR10: while closing, the lock is still held and the handler has not run.
            let locks = await engine.presentationLocks
            check(locks.assistant, "the assistant's lock was released before the chat finished closing")
            check(await engine.isAssistantOpen, "the chat counts as closed before its dismissal ended")
            check(h.handler.actions.count == model.acceptedTaps.count, "the handler ran before the close completed")
            presenter.release(.dismiss)
            await h.settle()
        }
        presenter.release(.dismiss)  // the next one is not held
        return results.withLock { $0 }
    }

    /// A value for the step list, or "never returned" when the call did not finish.
    private static func show<Value>(_ value: Value?) -> String {
        value.map { "\($0)" } ?? "never returned"
    }

    /// A ref to act on: one of the open chat's products, or one that went stale.
    private func chooseRef(pick: Int, fromStale: Bool) -> (AssistantProductRef, StressModel.CurrentRef?)? {
        let current = model.currentRefs
        let stale = model.staleRefs
        if !current.isEmpty, !fromStale || stale.isEmpty {
            let chosen = current[pick % current.count]
            return (chosen.ref, chosen)
        }
        guard !stale.isEmpty else { return nil }
        return (stale[pick % stale.count], nil)
    }

    /// Takes the refs the open chat shows now; the ones no longer shown become stale.
    private func refreshRefs(_ probe: StressProbe) {
        var now: [StressModel.CurrentRef] = []
        if probe.open {
            for message in probe.snapshot.messages {
                for product in message.productBlock?.products ?? [] {
                    now.append(
                        StressModel.CurrentRef(
                            ref: product.ref, itemId: product.itemId, canOpen: product.canOpen, opening: model.presents)
                    )
                }
            }
        }
        let kept = Set(now.map(\.ref))
        if !probe.open || model.currentRefs.contains(where: { $0.opening != model.presents }) {
            model.staleInOpening = []
        }
        for old in model.currentRefs where !kept.contains(old.ref) {
            model.staleRefs.append(old.ref)
            if probe.open && old.opening == model.presents { model.staleInOpening.append(old.ref) }
        }
        model.staleRefs = Array(model.staleRefs.suffix(48))
        model.currentRefs = now
    }

    // MARK: Invariants

    private func checkInvariants(_ probe: StressProbe) {
        let snapshot = probe.snapshot
        // O5, O6: the assistant's lock is held exactly while presented; the app's is its own.
        check(probe.open == model.open, "isAssistantOpen \(probe.open), model \(model.open)")
        check(
            probe.locks == PresentationLocks(app: model.appLock, assistant: probe.open),
            "locks \(probe.locks) while open=\(probe.open), app lock=\(model.appLock)")
        if let last = lockEvents.all.last { check(last == probe.locks, "the lock listener last heard \(last)") }
        check(
            presenter.count(.present) == model.presents,
            "presented \(presenter.count(.present))×, model \(model.presents)")
        check(
            presenter.count(.dismiss) == model.dismisses,
            "dismissed \(presenter.count(.dismiss))×, model \(model.dismisses)")

        // D2: at most one message in flight, and the snapshot agrees with the dialog state.
        let sendingMessages = snapshot.messages.filter { $0.status == .sending }
        check(sendingMessages.count <= 1, "\(sendingMessages.count) messages sending at once")
        check(
            snapshot.isSending == (probe.dialogState == .sending),
            "isSending \(snapshot.isSending), \(probe.dialogState)")
        check(snapshot.isSending == (sendingMessages.count == 1), "isSending without exactly one sending message")
        check(probe.dialogState == model.dialogState, "dialog \(probe.dialogState), model \(model.dialogState)")
        check(
            snapshot.canSend == (!snapshot.isSending && (model.dialogSelector != nil || model.latestReady != nil)),
            "canSend \(snapshot.canSend)")
        let heldPosts = h.routes.held.filter { $0.endpoint == .messages }
        let perThread = Dictionary(grouping: heldPosts) { Fixtures.body($0.request)["threadId"] as? String ?? "" }
        check(perThread.values.allSatisfy { $0.count == 1 }, "two messages in flight in one thread")
        let historyReads = h.routes.held.filter { $0.endpoint == .history }
        let readsPerThread = Dictionary(grouping: historyReads) { StressServer.thread(of: $0.request) }
        for (thread, reads) in readsPerThread {
            check(reads.count + (perThread[thread]?.count ?? 0) == 1, "a message and its history read both in flight")
        }
        let waitingForReply = model.sending != nil && model.reconciling == nil
        let postHere = probe.threadId.flatMap { perThread[$0]?.count } ?? 0
        let readHere = probe.threadId.flatMap { readsPerThread[$0]?.count } ?? 0
        check(postHere == (waitingForReply ? 1 : 0), "\(postHere) message requests in flight in this dialog")
        check(readHere == (model.reconciling == nil ? 0 : 1), "\(readHere) history reads in flight in this dialog")
        // D3, D5: a deadline runs exactly while a reply or the history check after it is awaited.
        check(h.clock.sleeperCount == (model.sending != nil ? 1 : 0), "\(h.clock.sleeperCount) timers running")

        // The visible chat is exactly the model's.
        let expected = model.entries.map(Self.describe)
        let shown = snapshot.messages.map(Self.describe)
        check(shown == expected, "messages \(shown), model \(expected)")

        // D13, D17: nothing of an ended dialog or an old identity is visible.
        let visibleIds = Set(snapshot.messages.map(\.id))
        let visibleItems = Set(snapshot.messages.flatMap { $0.productBlock?.products.map(\.itemId) ?? [] })
        check(visibleIds.isDisjoint(with: model.retiredMessageIds), "an ended dialog's message is visible")
        check(visibleItems.isDisjoint(with: model.retiredItemIds), "an ended dialog's product is visible")

        // PR10: the handler ran once per accepted tap, with that product.
        let handled = h.handler.actions.map { action -> String in
            if case .openProduct(let product) = action { return product.itemId }
            return "unexpected \(action.name)"
        }
        check(handled == model.acceptedTaps, "handler calls \(handled), accepted taps \(model.acceptedTaps)")

        // D4, D5: nothing resent; history read once per uncertain outcome.
        let posts = h.routes.requests(to: .messages).count
        check(posts == model.messagePosts, "\(posts) message requests, model \(model.messagePosts)")
        let reads = h.routes.requests(to: .history).count
        check(reads == model.historyReads, "\(reads) history reads, model \(model.historyReads)")
        check(h.activity.busy == 0, "the engine did not settle")
    }

    /// PR8: a ref from before a new chat stays stale in the same opening, even once the new
    /// dialog shows products in the same places.
    private func checkStaleInOpening() async {
        let refs = model.staleInOpening
        guard !refs.isEmpty else { return }
        let results = await h.settle { engine in
            var results: [AssistantInteractionResult] = []
            for ref in refs {
                results.append(await engine.performAssistantProductAction(product: ref, action: .visibleImpression))
            }
            return results
        }
        check(
            results?.allSatisfy { $0 == .staleReference } == true,
            "refs from an ended dialog in this opening: \(Self.show(results?.map(\.rawValue)))")
    }

    private static func describe(_ entry: StressModel.Entry) -> String {
        switch entry {
        case .user(let id, let text, let status): return "user \(id.suffix(4)) '\(text)' \(status)"
        case .reply(let answer):
            let items = answer.itemIds.enumerated().map { "\($1)\(StressServer.Answer.openable($0) ? "" : "(closed)")" }
            return "reply \(answer.assistantMessageId) [\(items.joined(separator: ","))]"
        }
    }

    private static func describe(_ message: AssistantChatMessage) -> String {
        switch message.role {
        case .user:
            let status: StressModel.UserStatus
            switch message.status {
            case .sending: status = .sending
            case .sent: status = .sent
            case .failed(let error): status = .failed(error.code, retryable: message.canRetry)
            }
            return "user \(message.id.suffix(4)) '\(message.text)' \(status)"
        case .assistant:
            let items = (message.productBlock?.products ?? []).map { "\($0.itemId)\($0.canOpen ? "" : "(closed)")" }
            return "reply \(message.id) [\(items.joined(separator: ","))]"
        }
    }
}
