import Foundation
import ShoppingAssistantTestSupport
import Testing

@testable import AssistantREPL

/// The REPL's history file survives a crash in the middle of a compaction: a child process
/// types lines into a libedit reader on a pseudo-terminal with a history file past twice its
/// size (2,000 lines of ~1 KB), so its first line's append is followed by a rewrite of ~1 MB
/// through a temporary file, and is killed with SIGKILL inside that rewrite — halfway, where the
/// child stops and says so, and at the moment the temporary file appears. The file is then
/// always a whole history holding every line appended before the kill.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct HistoryFileCrashTests {
    static let padding = String(repeating: "x", count: 1_000)

    @Test(arguments: [true, true, false])
    func aCompactionKilledMidWriteLeavesAWholeHistory(halfway: Bool) async throws {
        let directory = NSTemporaryDirectory() + "history-crash-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/history"
        // Twice the history libedit keeps (1,000 lines): the next append compacts the file.
        let earlier = (0..<2_000).map { "entry-\(100_000 + $0)-\(Self.padding)\n" }.joined()
        try ("_HiStOrY_V2_\n" + earlier).write(toFile: path, atomically: true, encoding: .utf8)
        // Watching before the child starts: its first line's compaction cannot be missed.
        let watch = try DirectoryWatch(directory)
        let child = try ChildProcess(
            role: "history-writer", filter: "REPLChildProcessRoles",
            environment: ["HISTORY_FILE": path, "HISTORY_PAUSE_HALFWAY": halfway ? "1" : nil])
        if halfway {
            #expect(await child.line(containing: "halfway") != nil, "the compaction reached its middle")
        } else {
            #expect(watch.waitForFile { $0.hasSuffix(".tmp") }, "the compaction started")
        }
        child.kill()
        let ended = try #require(await child.exit())
        #expect(ended.signaled, "killed, not exited")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        if halfway { #expect(names.contains { $0.hasSuffix(".tmp") }, "the kill landed inside the rewrite") }

        let contents = try String(contentsOfFile: path, encoding: .utf8)
        var lines = contents.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.removeFirst() == "_HiStOrY_V2_")
        #expect(lines.removeLast() == "", "the file ends with a whole line")
        let whole = lines.filter { $0.hasPrefix("entry-") && $0.hasSuffix("-" + Self.padding) }
        #expect(whole.count == lines.count, "every line is whole")
        // The line typed before the compaction was appended first: it is the newest, kept by
        // the old file and by a compaction that finished alike.
        #expect(lines.last == "entry-1-\(Self.padding)", "the appended line is kept")
        #expect(lines.count == 2_001 || (!halfway && lines.count == 1_000), "\(lines.count) lines")
    }
}

/// The roles a child process of this test binary plays for the REPL's tests.
@Suite(.timeLimit(.minutes(2))) struct REPLChildProcessRoles {
    @Test func playTheRoleThisProcessWasStartedFor() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard ChildProcess.role == "history-writer", let path = environment["HISTORY_FILE"] else { return }
        if environment["HISTORY_PAUSE_HALFWAY"] == "1" {
            HistoryFile.midWrite.withLock {
                $0 = {
                    ChildProcess.report("halfway")
                    // Stopped here until killed.
                    while true { pause() }
                }
            }
        }
        let terminal = try PseudoTerminal()
        let reader = try #require(
            LibeditLineReader(
                configuration: .init(
                    historyPath: path, terminalType: "xterm", inputDescriptor: terminal.slave,
                    outputDescriptor: terminal.slave)))
        // One line, whose append compacts the file; then nothing more until killed, so a kill
        // that lands after the compaction finished still finds that line the newest.
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("entry-1-\(HistoryFileCrashTests.padding)\r")
        ChildProcess.report("typed 1")
        _ = await event
        while true { pause() }
    }
}

/// Reports files created in a directory (inotify), so a test can act the moment one appears.
private final class DirectoryWatch {
    private let fd: Int32

    init(_ directory: String) throws {
        fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0, inotify_add_watch(fd, directory, UInt32(IN_CREATE)) >= 0 else {
            throw CocoaError(.fileReadUnknown)
        }
    }

    deinit { close(fd) }

    /// Blocks until a file whose name satisfies `matches` is created; false after 60 s (a
    /// guard against a hang only).
    func waitForFile(_ matches: (String) -> Bool) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 60_000) > 0 else { return false }
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { return false }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (length, name) = buffer.withUnsafeBytes { raw -> (Int, String) in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let start = offset + MemoryLayout<inotify_event>.size
                    let bytes = raw[start..<(start + Int(event.len))].prefix { $0 != 0 }
                    return (Int(event.len), String(decoding: bytes, as: UTF8.self))
                }
                if matches(name) { return true }
                offset += MemoryLayout<inotify_event>.size + length
            }
        }
    }
}
