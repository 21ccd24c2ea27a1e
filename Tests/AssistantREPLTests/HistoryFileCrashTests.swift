import Foundation
import ShoppingAssistantTesting
import Testing

@testable import AssistantREPL

/// The REPL's history file survives a crash in the middle of a save: a child process types
/// lines into a libedit reader on a pseudo-terminal, each save rewriting a history of ~1 MB,
/// and is killed with SIGKILL after a different number of lines each round. The file is then
/// always a whole history holding every line saved before the kill.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct HistoryFileCrashTests {
    static let padding = String(repeating: "x", count: 1_000)

    @Test func aSaveKilledMidWriteLeavesAWholeHistory() async throws {
        let directory = NSTemporaryDirectory() + "history-crash-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/history"
        // A full history (libedit keeps 1,000 lines) of earlier sessions: every save rewrites ~1 MB.
        let earlier = (0..<1_000).map { "entry-\(100_000 + $0)-\(Self.padding)\n" }.joined()
        try ("_HiStOrY_V2_\n" + earlier).write(toFile: path, atomically: true, encoding: .utf8)
        var interrupted = 0
        for round in 1...3 {
            let child = try ChildProcess(
                role: "history-writer", filter: "REPLChildProcessRoles", environment: ["HISTORY_FILE": path])
            let killedAfter = round * 5
            // Killed the moment the save of that line creates its temporary file: mid-write.
            let reported = await child.line(containing: "typed \(killedAfter)")
            // Watching from now on: this line's save, or the next one's if this one already began.
            let watch = try DirectoryWatch(directory)
            let created = watch.waitForFile { $0.hasSuffix(".tmp") }
            child.kill()
            #expect(created, "round \(round): the save started")
            let ended = await child.exit()
            try #require(reported != nil, "round \(round): the child typed \(killedAfter) lines")
            #expect(ended.signaled, "round \(round): killed, not exited")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            if names.contains(where: { $0.hasSuffix(".tmp") }) { interrupted += 1 }

            let contents = try String(contentsOfFile: path, encoding: .utf8)
            var lines = contents.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.removeFirst() == "_HiStOrY_V2_", "round \(round)")
            #expect(lines.removeLast() == "", "round \(round): the file ends with a whole line")
            let numbers = lines.compactMap { line -> Int? in
                guard line.hasPrefix("entry-"), line.hasSuffix("-" + Self.padding) else { return nil }
                return Int(line.dropFirst("entry-".count).prefix { $0 != "-" })
            }
            #expect(numbers.count == lines.count, "round \(round): every line is whole")
            let last = try #require(numbers.last)
            // The kill lands as a save begins: the file holds the save before it, whole.
            #expect(last >= killedAfter - 1 && last < 100_000, "round \(round): \(last) is a whole save")
            #expect(numbers.count == 1_000, "round \(round): a whole history")
        }
        #expect(interrupted == 3, "every kill landed inside a save")
    }
}

/// The roles a child process of this test binary plays for the REPL's tests.
@Suite(.timeLimit(.minutes(2))) struct REPLChildProcessRoles {
    @Test func playTheRoleThisProcessWasStartedFor() async throws {
        guard ChildProcess.role == "history-writer", let path = ProcessInfo.processInfo.environment["HISTORY_FILE"]
        else { return }
        let terminal = try PseudoTerminal()
        let reader = try #require(
            LibeditLineReader(
                configuration: .init(
                    historyPath: path, terminalType: "xterm", inputDescriptor: terminal.slave,
                    outputDescriptor: terminal.slave)))
        var number = 0
        while true {
            number += 1
            async let event = reader.nextEvent(prompt: "p> ")
            terminal.waitFor("p> ")
            terminal.type("entry-\(number)-\(HistoryFileCrashTests.padding)\r")
            ChildProcess.report("typed \(number)")
            _ = await event
        }
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
