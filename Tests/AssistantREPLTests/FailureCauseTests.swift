import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport
import Testing

@testable import AssistantREPL

/// Nothing fails silently and no cause is cut: with the services down the refused port is on
/// screen at 80 columns; an identity store's warning is printed whole; an unwritable default
/// state directory says so once.
@Suite(.timeLimit(.minutes(2))) struct FailureCauseTests {
    /// A session against live services, piped, as the `assistant` command wires it.
    private func liveSession(_ arguments: [String], width: Int, state: StateDirectory?) async throws -> (
        REPLEnvironment, Locked<[String]>
    ) {
        let options = try CommandLineOptions.parse(arguments, environment: [:])
        let printed = Locked<[String]>([])
        let environment = await REPLEnvironment(
            policy: .commandLine(options, interactive: false, width: width, stateDirectory: state),
            output: REPLOutput { line in printed.withLock { $0.append(line) } })
        return (environment, printed)
    }

    private func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "failure-cause-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func withTheServicesDownTheRefusedPortIsOnScreenAt80Columns() async throws {
        // A port that was just listening and is closed now: the connection is refused.
        let server = try LoopbackHTTPServer()
        let base = server.baseURL
        server.stop()
        let port = try #require(base.port)
        let (environment, printed) = try await liveSession(
            ["--gravity-url", base.absoluteString, "--shopping-url", base.absoluteString], width: 80, state: nil)
        await environment.session.run(reader: ScriptLineReader(lines: [":product SKU-1", ":quit"]))
        let lines = printed.withLock { $0 }
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 80 })
        let errors = lines.drop { !$0.hasPrefix("[error] ") }
        let text = errors.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(text.contains("127.0.0.1 port \(port)") || text.contains("127.0.0.1:\(port)"), "\(lines)")
        // A refused call is tried again within its deadline (DL1), so which Gravity call's
        // failure is on screen first, and whether as `network` or `timeout`, depends on real time.
        #expect(lines.contains { $0.hasPrefix("[error] gravity POST /") && $0.contains(" failed: ") }, "\(lines)")
    }

    @Test func anIdentityStoresWarningIsPrintedWholeFromTheStart() async throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = StateDirectory(path: directory)
        try Data("not an identity".utf8).write(to: state.identityFile)
        // The warning comes while the engine loads the uid, before any command.
        let (_, printed) = try await liveSession(
            ["--gravity-url", "http://127.0.0.1:9", "--shopping-url", "http://127.0.0.1:9"], width: 40, state: state)
        let lines = printed.withLock { $0 }
        #expect(lines.first?.hasPrefix("[error] identity store:") == true, "\(lines)")
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 40 })
        // A path longer than a line is broken inside it: compare without the spaces.
        let text = lines.joined().filter { $0 != " " }
        let expected = "startingwithafreshidentity(thefilewasmovedto\(state.identityFile.path).corrupt)"
        #expect(text.hasSuffix(expected), "\(lines)")
    }

    @Test func anUnwritableDefaultStateDirectoryIsOneWarningAndKeepsStateInMemory() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/not-a-directory"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let environment = ["XDG_STATE_HOME": file]
        let resolved = try StateDirectory.resolve(
            explicit: nil, environment: environment, history: true, identity: true)
        #expect(resolved.directory == nil, "history and identity stay in memory")
        #expect(
            resolved.warning
                == "warning: cannot keep state in \(file)/shopping-assistant (\(file) is not a directory): the line "
                + "history and the identity last only for this session; --state-dir DIR keeps them elsewhere")
        // On the demo store the identity is in memory anyway: only the history is lost.
        let demo = try StateDirectory.resolve(explicit: nil, environment: environment, history: true, identity: false)
        #expect(
            demo.warning?.hasSuffix("the line history lasts only for this session; --state-dir DIR keeps it elsewhere")
                == true)
        // A session that writes nothing there (piped, demo store) is not warned.
        let quiet = try StateDirectory.resolve(explicit: nil, environment: environment, history: false, identity: false)
        #expect(quiet.warning == nil)
        // A writable default, existing or not yet, is used without a word.
        let fine = try StateDirectory.resolve(
            explicit: nil, environment: ["XDG_STATE_HOME": directory], history: true, identity: true)
        #expect(fine.directory?.path == directory + "/shopping-assistant")
        #expect(fine.warning == nil)
        // --state-dir to the same place stays a usage error.
        #expect(throws: CommandLineOptions.ParseError.self) {
            try StateDirectory.resolve(explicit: file + "/x", environment: [:], history: true, identity: true)
        }
    }
}
