import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@testable import AssistantREPL
@testable import AssistantTranscripts

/// A session recorded in a terminal replays: the file has no colour or escape bytes, each
/// input once, and impressions where a replay has them — it is the recording a pipe makes.
@Suite(.timeLimit(.minutes(2))) struct TerminalRecordingTests {
    static let lines = [":product KIT-1001", ":open", "подарок", ":wait 2s", ":right", ":tap 4", ":quit"]

    private func record(terminal: Bool) async throws -> (Transcript, [String], REPLEnvironment.Policy) {
        var options = CommandLineOptions()
        options.recordPath = "unused.transcript"
        let printed = Locked<[String]>([])
        let policy = REPLEnvironment.Policy.commandLine(options, interactive: terminal, width: 80, stateDirectory: nil)
        let (environment, recorder) = await TranscriptRecorder.recordedEnvironment(
            policy: policy,
            output: REPLOutput(style: terminal ? .colored : .plain) { line in printed.withLock { $0.append(line) } },
            summary: TranscriptRecorder.summary(onDemoStore: true))
        await environment.session.run(reader: ScriptLineReader(lines: Self.lines), observer: recorder)
        return (recorder.transcript, printed.withLock { $0 }, policy)
    }

    @Test func aTerminalRecordingIsThePipesRecordingAndReplays() async throws {
        let (terminal, screen, policy) = try await record(terminal: true)
        let (piped, _, _) = try await record(terminal: false)
        if case .real = policy.time { Issue.record("a recorded demo session runs on virtual time") }
        #expect(!policy.settings.echoesInput, "the line editor shows the input already")
        #expect(screen.contains { $0.contains("\u{1b}[") }, "the terminal got colours")
        #expect(!screen.contains { $0.hasPrefix("> ") }, "no second echo of the input")
        let text = TranscriptFormat.render(terminal)
        #expect(!text.contains("\u{1b}"))
        // The same steps, output and requests; requests a step sends concurrently (a tap's
        // event and the next screen's /visit) may be recorded in either order, and a replay
        // takes them in any order.
        #expect(terminal.segments.count == piped.segments.count)
        for (mine, theirs) in zip(terminal.segments, piped.segments) {
            #expect(mine.step == theirs.step)
            #expect(mine.output == theirs.output, "\(mine.step)")
            let sorted = { (segment: Transcript.Segment) in
                segment.exchanges.map { TranscriptFormat.renderExchange($0).joined(separator: "\n") }.sorted()
            }
            #expect(sorted(mine) == sorted(theirs), "\(mine.step)")
        }
        #expect(terminal.segments.count == Self.lines.count, "each input once")
        #expect(terminal.segments.flatMap(\.output).filter { $0.hasPrefix("(impressions: ") }.count == 1)
        let replay = await TranscriptReplayer.replay(try TranscriptFormat.parse(text))
        #expect(replay.report(file: "terminal") == nil)
    }

    @Test func aStepClockRunsOnlyWhileStarted() async throws {
        let base = VirtualClock()
        let clock = StepClock(base: base)
        #expect(clock.now.offset == .zero)
        base.advance(by: .seconds(5))
        #expect(clock.now.offset == .zero, "stopped: the base clock's time does not count")
        clock.start()
        base.advance(by: .seconds(2))
        clock.stop()
        base.advance(by: .seconds(7))
        #expect(clock.now.offset == .seconds(2))

        let woke = Locked(false)
        let sleeper = Task {
            try await clock.sleep(until: clock.now.advanced(by: .seconds(1)), tolerance: nil)
            woke.withLock { $0 = true }
        }
        base.advance(by: .seconds(30))
        clock.start()  // the sleeper now sleeps on the base clock
        #expect(await base.waitForSleepers(1))
        base.advance(by: .seconds(1))
        try await sleeper.value
        #expect(woke.withLock { $0 })
        #expect(clock.now.offset == .seconds(3))
    }

    /// A piped session on real time waits, after each command, for the tracking it queued; that
    /// wait is not impression time (a replay has none): a slow tracking host, or a loaded
    /// machine, earns no card an impression there. Here the reply's impression URL is held
    /// while the clock moves 5 s.
    @Test func theWaitForAStepsTrackingIsNoImpressionTime() async throws {
        let clock = ManualClock()
        let held = HeldRequest { $0.url.path == "/ri" }
        var policy = REPLEnvironment.Policy.commandLine(
            CommandLineOptions(), interactive: false, width: 200, stateDirectory: nil)
        policy.time = .clock(clock)
        policy.wrapTransport = REPLEnvironment.TransportWrapper { held.wrapping($0) }
        let printed = Locked<[String]>([])
        let environment = await REPLEnvironment(
            policy: policy, output: REPLOutput(sink: { line in printed.withLock { $0.append(line) } }))
        let stepper = environment.session.stepper
        let stepClock = try #require(stepper.stepClock, "a piped session on real time has a step clock")
        for line in [":product KIT-1001", ":open"] { _ = await stepper.run(line) }
        let before = stepClock.now

        let step = Task { await stepper.run("подарок") }
        await held.waitUntilHeld()
        // The request may be held while the command still runs (its clock running); the command
        // ends without waiting for it, in a few turns of the executor. If the clock never stops
        // (it runs through the wait for tracking), the suite's time limit ends the loop and the
        // expectation below fails.
        while stepClock.isRunning, !Task.isCancelled { await Task.yield() }
        clock.advance(by: .seconds(5))  // while the step waits for its tracking
        held.release()
        _ = await step.value

        #expect(stepClock.now.offset - before.offset == .zero, "the clock stood still while tracking went out")
        #expect(printed.withLock { $0 }.contains { $0.hasPrefix("assistant › ") })
        #expect(!printed.withLock { $0 }.contains { $0.hasPrefix("(impressions: ") })
    }

    /// On real time a recording keeps a latency of a second or more, in whole seconds, except a
    /// tracker delivery's: nothing the user sees waits for one, and a slow one (a loaded
    /// machine's as much as a slow host's) would only move the next delivery into a later step
    /// of the replay than the live session had it in.
    @Test func aRealTimeRecordingKeepsNoLatencyOfATrackerDelivery() async throws {
        let clock = ManualClock()
        var policy = REPLEnvironment.Policy.commandLine(
            CommandLineOptions(), interactive: false, width: 80, stateDirectory: nil)
        policy.time = .clock(clock)
        let recorder = TranscriptRecorder(policy: policy, summary: "latencies")
        let slow = ScriptedTransport(clock: clock)
        let answer = HTTPResponse.json(200, ["campaigns": [String]()])
        for _ in 0..<2 {
            slow.expect(.request(.post, pathSuffix: "/event"), .respondAfter(.milliseconds(2_500), answer))
        }
        let transport = recorder.recording(slow)
        let request = HTTPRequest(method: .post, url: try #require(URL(string: "https://api.gravity.example/event")))
        recorder.stepBegan("подарок")

        let delivery = Task {
            try await TrackerDeliveryScope.$isActive.withValue(true) { try await transport.send(request) }
        }
        let awaited = Task { try await transport.send(request) }
        await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(2_500))
        _ = try await (delivery.value, awaited.value)
        recorder.stepEnded()

        let latencies = recorder.transcript.segments.last?.exchanges.map { exchange -> Duration? in
            if case .response(_, let latency, _) = exchange.outcome { latency } else { nil }
        }
        #expect(latencies?.sorted { ($0 ?? .zero) < ($1 ?? .zero) } == [.zero, .seconds(2)])
    }

    /// The tracker's deliveries, and only they, run in `TrackerDeliveryScope`: the recorder
    /// tells them apart by it, as nothing on the wire does.
    @Test func onlyTheTrackersDeliveriesRunInItsScope() async throws {
        let seen = Locked<[(path: String, tracker: Bool)]>([])
        var policy = REPLEnvironment.Policy.commandLine(
            CommandLineOptions(), interactive: false, width: 80, stateDirectory: nil)
        policy.wrapTransport = REPLEnvironment.TransportWrapper { inner in
            ScopeNotingTransport(inner: inner) { request in
                seen.withLock { $0.append((request.url.path, TrackerDeliveryScope.isActive)) }
            }
        }
        let environment = await REPLEnvironment(policy: policy, output: REPLOutput(sink: { _ in }))
        let stepper = environment.session.stepper
        for line in [":product KIT-1001", ":open", "подарок", ":quit"] { _ = await stepper.run(line) }

        let requests = seen.withLock { $0 }
        let delivered = Set(requests.filter(\.tracker).map(\.path))
        let awaited = Set(requests.filter { !$0.tracker }.map(\.path))
        #expect(delivered == ["/v2/event", "/ri", "/l"], "\(delivered)")
        #expect(awaited == ["/v2/visit", "/v2/choose", "/v1/messages"], "\(awaited)")
    }

    @Test func aStoppedStepClockSleeperEndsWhenCancelled() async throws {
        let clock = StepClock(base: VirtualClock())
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(1)), tolerance: nil) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}

/// A transport that holds the first request `matches` picks until `release()`, and passes
/// everything else through.
private final class HeldRequest: Sendable {
    private struct State {
        var held = false
        var released = false
    }

    private let matches: @Sendable (HTTPRequest) -> Bool
    private let state = Locked(State())
    private let changes = Waitlist()

    init(_ matches: @escaping @Sendable (HTTPRequest) -> Bool) { self.matches = matches }

    func wrapping(_ inner: any HTTPTransport) -> any HTTPTransport {
        Wrapper(inner: inner, owner: self)
    }

    /// Returns once the request is held.
    func waitUntilHeld() async {
        await changes.wait { [state] in state.withLock { $0.held } }
    }

    func release() {
        state.withLock { $0.released = true }
        changes.recheck()
    }

    fileprivate func hold(_ request: HTTPRequest) async {
        guard matches(request) else { return }
        let first = state.withLock { state -> Bool in
            guard !state.held, !state.released else { return false }
            state.held = true
            return true
        }
        guard first else { return }
        changes.recheck()
        await changes.wait { [state] in state.withLock { $0.released } }
    }

    private struct Wrapper: HTTPTransport {
        let inner: any HTTPTransport
        let owner: HeldRequest

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            await owner.hold(request)
            return try await inner.send(request)
        }
    }
}

/// Tells `note` of each request, in the task that sends it, and passes it on.
private struct ScopeNotingTransport: HTTPTransport {
    let inner: any HTTPTransport
    let note: @Sendable (HTTPRequest) -> Void

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        note(request)
        return try await inner.send(request)
    }
}
