import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

@testable import AssistantREPL
@testable import AssistantTranscripts

/// `--record` never loses a session: the file is created at start (an existing one refused,
/// one that cannot be written said at once), each step is written as soon as it is settled,
/// and a session ended by a signal leaves every step that ended, marked as cut short.
@Suite(.timeLimit(.minutes(2))) struct LosslessRecordingTests {
    static func temporaryPath() -> String { NSTemporaryDirectory() + "record-\(UUID().uuidString).transcript" }

    @Test func anExistingFileIsRefusedAndLeftUnchangedUnlessForced() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "# mine\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: RecordingFile.OpenError.exists(path)) { try RecordingFile.create(path, replacing: false) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "# mine\n")
        #expect(
            RecordingFile.OpenError.exists(path).description
                == "\(path) already exists: --record writes a new transcript (--force replaces it)")
        let replaced = try RecordingFile.create(path, replacing: true)
        try replaced.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "")
    }

    @Test func aPathThatCannotBeWrittenIsSaidInOneLine() {
        let path = NSTemporaryDirectory() + "missing-\(UUID().uuidString)/x.transcript"
        #expect(throws: RecordingFile.OpenError.cannotWrite(path, "No such file or directory")) {
            try RecordingFile.create(path, replacing: false)
        }
        #expect(
            RecordingFile.OpenError.cannotWrite(path, "No such file or directory").description
                == "cannot record to \(path): No such file or directory")
    }

    /// What the file held at each prompt: the settings at once, then each step once the next
    /// has begun; at the end, the whole recording, byte for byte what it renders to.
    @Test func eachStepIsWrittenAsItSettles() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (repl, recorder) = try await DemoREPL.recording(into: path)
        let seen = Locked<[String]>([])
        let reader = HookedReader(lines: [":product KIT-1001", ":open", ":quit"]) { _ in
            seen.withLock { $0.append((try? String(contentsOfFile: path, encoding: .utf8)) ?? "") }
        }
        await repl.session.run(reader: reader, observer: recorder)
        try recorder.finish()
        let snapshots = seen.withLock { $0 }
        try #require(snapshots.count == 3)
        #expect(snapshots[0].hasSuffix("%width 80\n%uid -\n"))
        #expect(!snapshots[1].contains("> :product"), "the first step runs until the second begins")
        #expect(snapshots[2].contains("> :product KIT-1001\n") && !snapshots[2].contains("> :open"))
        let file = try String(contentsOfFile: path, encoding: .utf8)
        #expect(file == TranscriptFormat.render(recorder.transcript))
        #expect(await TranscriptRunner.check(file: path, display: "r", bless: false).status == .passed)
    }

    /// Finished as a signal finishes it, between steps: the steps that ended, then the marker;
    /// the file replays green and reads back cut short. A later finish writes nothing more.
    @Test func aSessionCutShortKeepsEveryStepThatEndedAndReplays() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (repl, recorder) = try await DemoREPL.recording(into: path)
        let reader = HookedReader(lines: [":product KIT-1001", ":open", "подарок"]) { prompt in
            if prompt == 3 { try? recorder.finish(cutShort: "SIGTERM") }
        }
        await repl.session.run(reader: reader, observer: recorder)
        try recorder.finish()
        let file = try String(contentsOfFile: path, encoding: .utf8)
        #expect(file.hasSuffix("\n%cut-short SIGTERM\n"))
        #expect(file.contains("\n> :open\n") && !file.contains("> подарок"))
        #expect(try TranscriptFormat.parse(file).cutShort == "SIGTERM")
        let replay = await TranscriptRunner.check(file: path, display: "r", bless: false)
        #expect(replay.status == .passed, "\(replay.report ?? "")")
        #expect(throws: TranscriptError(line: 3, message: "nothing but comments may follow %cut-short")) {
            try TranscriptFormat.parse("> :home\n%cut-short SIGTERM\n> :open\n")
        }
    }

    /// A real SIGTERM, SIGHUP or (piped) SIGINT to a recording process: the child records two
    /// steps and waits for a third line; the signal ends it with 128 + its number and a file
    /// that holds both steps, cut short, and replays green.
    @Test(arguments: [SIGTERM, SIGHUP, SIGINT])
    func aSignalledRecordingLeavesACompleteFile(signal: Int32) async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let child = try ChildProcess(
            role: "recording-until-signalled", filter: "LosslessRecordingChildRole", environment: ["RECORD_FILE": path])
        #expect(await child.line(containing: "waiting") != nil, "the child recorded its steps")
        Glibc.kill(child.processIdentifier, signal)
        let ended = try #require(await child.exit())
        #expect(ended.status == 128 + signal && !ended.signaled, "finished and exited: \(ended)")
        let file = try String(contentsOfFile: path, encoding: .utf8)
        #expect(file.contains("\n> :product KIT-1001\n") && file.contains("\n> :open\n"))
        #expect(file.hasSuffix("\n%cut-short \(RecordingSignals.name(of: signal))\n"))
        let replay = await TranscriptRunner.check(file: path, display: "r", bless: false)
        #expect(replay.status == .passed, "\(replay.report ?? "")")
    }
}

/// The role of a child that records a demo session and is ended by a signal.
@Suite(.timeLimit(.minutes(2))) struct LosslessRecordingChildRole {
    @Test func playTheRoleThisProcessWasStartedFor() async throws {
        guard ChildProcess.role == "recording-until-signalled",
            let path = ProcessInfo.processInfo.environment["RECORD_FILE"]
        else { return }
        let (repl, recorder) = try await DemoREPL.recording(into: path)
        RecordingSignals.install([SIGTERM, SIGHUP, SIGINT], finishing: recorder) {
            ChildProcess.report("failed: \($0)")
        }
        let reader = HookedReader(lines: [":product KIT-1001", ":open"]) { prompt in
            guard prompt == 3 else { return }
            ChildProcess.report("waiting")
            while true { pause() }  // until the signal ends the process
        }
        await repl.session.run(reader: reader, observer: recorder)
    }
}

extension DemoREPL {
    /// A recorded demo session writing to a new file at `path`, as `assistant --record` does.
    static func recording(into path: String) async throws -> (DemoREPL, TranscriptRecorder) {
        let repl = try await DemoREPL(recording: true)
        let recorder = try #require(repl.recorder)
        recorder.attach(try RecordingFile.create(path, replacing: false))
        return (repl, recorder)
    }
}

/// A scripted reader that calls `hook` with each prompt's number (from 1) before it answers.
private final class HookedReader: LineReader {
    private let inner: ScriptLineReader
    private let hook: @Sendable (Int) -> Void
    private let prompts = Locked(0)

    init(lines: [String], hook: @escaping @Sendable (Int) -> Void) {
        inner = ScriptLineReader(lines: lines)
        self.hook = hook
    }

    private func prompted() {
        hook(
            prompts.withLock {
                $0 += 1; return $0
            })
    }

    func readLine(prompt: String) -> LineReaderEvent {
        prompted()
        return inner.readLine(prompt: prompt)
    }

    func nextEvent(prompt: String) async -> LineReaderEvent {
        prompted()
        return await inner.nextEvent(prompt: prompt)
    }

    func printAsync(_ text: String) { inner.printAsync(text) }
    func nextInterrupt() async -> Bool { await inner.nextInterrupt() }
    func setResizeHandler(_ handler: (@Sendable (TerminalResize) -> Void)?) { inner.setResizeHandler(handler) }
}
