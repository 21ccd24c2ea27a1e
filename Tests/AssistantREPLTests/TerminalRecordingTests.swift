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

    @Test func aStoppedStepClockSleeperEndsWhenCancelled() async throws {
        let clock = StepClock(base: VirtualClock())
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(1)), tolerance: nil) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
