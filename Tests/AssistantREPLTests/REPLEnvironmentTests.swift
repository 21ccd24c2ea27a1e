import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL
@testable import AssistantTranscripts

@Suite(.timeLimit(.minutes(2))) struct REPLEnvironmentTests {
    private func options(_ arguments: [String] = []) throws -> CommandLineOptions {
        try CommandLineOptions.parse(arguments, environment: [:])
    }

    @Test func aPipedDemoSessionIsWiredLikeAReplay() throws {
        var transcript = Transcript(comments: [], settings: Transcript.Settings(), segments: [])
        transcript.settings.width = 72
        let piped = REPLEnvironment.Policy.commandLine(
            try options(["--width", "72"]), interactive: false, width: 72, stateDirectory: nil)
        let replay = REPLEnvironment.Policy.replay(
            transcript, configuration: AssistantEngineConfiguration(apiKey: "k", section: "demo"),
            transport: ScriptedFailure(), time: VirtualTime())
        for policy in [piped, replay] {
            #expect(policy.isOnVirtualTime)
            #expect(policy.ids == .sequential)
            #expect(policy.identity == .memory(uid: nil))
            #expect(policy.wrapTransport == nil)
        }
        #expect(piped.settings == replay.settings)
        #expect(piped.configuration.section == replay.configuration.section)
        #expect(piped.configuration.gravityBaseURL == replay.configuration.gravityBaseURL)
        #expect(piped.configuration.shoppingBaseURL == replay.configuration.shoppingBaseURL)
        #expect(!piped.replaying && replay.replaying)
    }

    @Test func aReplayStartsWithTheTranscriptsIdentity() {
        var transcript = Transcript(comments: [], settings: Transcript.Settings(), segments: [])
        transcript.settings.uid = "u-42"
        let policy = REPLEnvironment.Policy.replay(
            transcript, configuration: AssistantEngineConfiguration(apiKey: "k", section: "demo"),
            transport: ScriptedFailure(), time: VirtualTime())
        #expect(policy.identity == .memory(uid: "u-42"))
    }

    @Test func aTerminalOrLiveSessionRunsOnRealTime() throws {
        let terminal = REPLEnvironment.Policy.commandLine(
            try options(), interactive: true, width: 80, stateDirectory: nil)
        #expect(!terminal.isOnVirtualTime)
        #expect(terminal.settings.interactive)
        #expect(terminal.ids == .sequential)  // the demo store: the same input prints the same IDs

        let state = StateDirectory(path: "/tmp/state")
        let live = REPLEnvironment.Policy.commandLine(
            try options(["--gravity-url", "https://gravity.example"]), interactive: false, width: 80,
            stateDirectory: state)
        #expect(!live.isOnVirtualTime)
        #expect(live.usesURLSession)
        #expect(live.ids == .random)
        #expect(live.identity == .file(state.identityFile))
    }

    @Test func aRecordedTerminalSessionWaitsForEachCommand() throws {
        let policy = REPLEnvironment.Policy.commandLine(
            try options(["--record", "x.transcript"]), interactive: true, width: 80, stateDirectory: nil)
        #expect(!policy.settings.interactive)
        #expect(policy.wrapTransport == nil, "the recording wraps the transport, not the REPL's policy")
    }

    @Test func aPipedDemoSessionReplaysFromItsOwnRecording() async throws {
        // The executable's wiring records, the replayer's wiring replays: the same bytes and
        // requests come out, so the two build their sessions alike.
        let repl = try await DemoREPL(recording: true)
        let recorder = try #require(repl.recorder)
        let lines = [
            ":product KIT-1001", ":open", "подарок", ":wait 2s", ":right", ":tap 4", ":user alice", ":open", ":state",
            ":log",
        ]
        await repl.session.run(reader: ScriptLineReader(lines: lines), observer: recorder)
        let recorded = try TranscriptFormat.parse(TranscriptFormat.render(recorder.transcript))
        #expect(recorded.segments.count == lines.count)
        let replay = await TranscriptReplayer.replay(recorded)
        #expect(replay.problems == [])
        #expect(replay.report(file: "recorded") == nil)
        #expect(
            recorded.segments.contains { segment in
                segment.output.contains { $0.hasPrefix("(impressions: Термокружка 450 мл · ") }
            })
    }
}

extension REPLEnvironment.Policy {
    fileprivate var isOnVirtualTime: Bool {
        if case .virtual = time { return true }
        return false
    }

    fileprivate var usesURLSession: Bool {
        if case .services = backend { return true }
        return false
    }
}

/// A transport nobody calls: the policies above are only compared.
private struct ScriptedFailure: HTTPTransport {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        throw HTTPTransportError.cannotConnect("not used")
    }
}
