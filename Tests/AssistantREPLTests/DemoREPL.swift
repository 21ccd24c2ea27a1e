import AssistantTranscripts
import DemoStore
import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// A piped REPL session on the demo store, built the way the `assistant` command builds one,
/// on virtual time: each line runs until nothing can run, and returns what it printed.
struct DemoREPL {
    let environment: REPLEnvironment
    /// The recording, when made with `recording: true`; it observes the output already.
    let recorder: TranscriptRecorder?
    private let printed: Locked<[String]>
    /// With `liveServices`, the demo store the session takes for live services.
    let liveStore: DemoStore?

    /// - Parameter liveServices: the demo store answers as a live service would, behind a
    ///   transport of its own: the session has no demo store (no catalogue, no faults).
    init(
        width: Int = 80, logLevel: AssistantLogLevel = .error, recording: Bool = false, liveServices: Bool = false,
        delivery: REPLEnvironment.Delivery = .memory, dialog: REPLEnvironment.Dialog = .memory,
        identity: REPLEnvironment.Identity? = nil, newChat: Bool = false, demoThreads: URL? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var options = CommandLineOptions()
        options.logLevel = logLevel
        options.recordPath = recording ? "unused.transcript" : nil
        let printed = Locked<[String]>([])
        self.printed = printed
        var policy = REPLEnvironment.Policy.commandLine(options, interactive: false, width: width, stateDirectory: nil)
        policy.delivery = delivery
        policy.dialog = dialog
        policy.startsNewChat = newChat
        policy.demoThreads = demoThreads
        if let identity { policy.identity = identity }
        liveStore = liveServices ? policy.liveDemoStore() : nil
        let output = REPLOutput { line in printed.withLock { $0.append(line) } }
        if recording {
            (environment, recorder) = await TranscriptRecorder.recordedEnvironment(
                policy: policy, output: output, summary: TranscriptRecorder.summary(onDemoStore: true))
        } else {
            (environment, recorder) = (await REPLEnvironment(policy: policy, output: output), nil)
        }
        _ = try #require(environment.time, "a piped demo session runs on virtual time", sourceLocation: sourceLocation)
    }

    var session: REPLSession { environment.session }
    var demoStore: DemoStore? { environment.demoStore }

    /// Handles `line` as typed; returns its output and whether the REPL goes on.
    @discardableResult
    func run(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) async -> (
        printed: [String], keepGoing: Bool
    ) {
        let keepGoing = Locked(true)
        let session = self.session
        let finished = await environment.time?.run {
            let result = await session.handle(line)
            keepGoing.withLock { $0 = result }
        }
        #expect(finished == true, "'\(line)' waits for something that never happens", sourceLocation: sourceLocation)
        let output = printed.withLock { lines in
            defer { lines = [] }
            return lines
        }
        return (output, keepGoing.withLock { $0 })
    }

    /// Runs a whole session on `lines`, banner to the end (`:quit` or the end of input), as
    /// the command does; returns everything printed.
    func runSession(_ lines: [String]) async -> [String] {
        await runSession(reader: ScriptLineReader(lines: lines))
    }

    /// Runs a whole session on what `reader` reads; returns everything printed.
    func runSession(reader: some LineReader) async -> [String] {
        await session.run(reader: reader)  // each line on virtual time
        return printed.withLock { lines in
            defer { lines = [] }
            return lines
        }
    }

    /// Runs each line in turn; returns everything printed.
    @discardableResult
    func run(lines: [String], sourceLocation: SourceLocation = #_sourceLocation) async -> [String] {
        var printed: [String] = []
        for line in lines { printed += await run(line, sourceLocation: sourceLocation).printed }
        return printed
    }

    /// `/visit` requests the demo store has answered so far.
    var visits: Int { demoStore?.requestLog.filter { $0.path.hasSuffix("/visit") }.count ?? 0 }
}

extension REPLEnvironment.Policy {
    /// Puts a demo store behind the policy's own transport, on its virtual time: a session
    /// that runs as against live services.
    fileprivate mutating func liveDemoStore() -> DemoStore? {
        guard case .virtual(let time) = self.time else { return nil }
        let store = DemoStore(clock: time.clock, activity: time.activity)
        backend = .transport(store)
        return store
    }
}
