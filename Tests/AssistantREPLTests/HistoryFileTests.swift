import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// The history file keeps every line of every REPL: lines are appended under a lock, never
/// rewritten by whoever saved last; a compaction keeps the newest lines of all writers.
@Suite(.timeLimit(.minutes(2))) struct HistoryFileTests {
    private func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "history-file-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func entries(_ path: String) throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.removeFirst() == "_HiStOrY_V2_")
        #expect(lines.removeLast() == "", "the file ends with a whole line")
        return lines
    }

    /// Two writers of one new history file keeping `size` lines, as two REPLs have them.
    private func withTwoWriters(
        size: Int, _ body: (_ path: String, _ first: HistoryFile, _ second: HistoryFile) throws -> Void
    ) throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/history"
        try body(
            path, HistoryFile(path: path, size: size, loadedLines: 0),
            HistoryFile(path: path, size: size, loadedLines: 0))
    }

    @Test func twoWritersAtOnceKeepEachOthersLines() throws {
        try withTwoWriters(size: 1_000) { path, first, second in
            DispatchQueue.concurrentPerform(iterations: 200) { index in
                #expect((index % 2 == 0 ? first : second).append("line \(index)"))
            }
            let lines = try entries(path)
            #expect(lines.count == 200)
            // libedit's encoding of a space, read back by its H_LOAD.
            #expect(Set(lines) == Set((0..<200).map { "line\\040\($0)" }))
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(stat(path + ".lock", &info) == 0 && info.st_mode & 0o777 == 0o600)
        }
    }

    @Test func aCompactionKeepsTheNewestLinesOfEveryWriter() throws {
        try withTwoWriters(size: 5) { path, first, second in
            for index in 0..<8 { second.append("b\(index)") }  // 8 lines: not yet twice 5 for `second`…
            for index in 0..<3 { first.append("a\(index)") }  // …nor for `first`
            #expect(try entries(path).count == 11)
            for index in 8..<11 { second.append("b\(index)") }  // `second` passes 10: it compacts
            #expect(try entries(path) == ["a1", "a2", "b8", "b9", "b10"])
            first.append("a3")
            #expect(try entries(path).suffix(2) == ["b10", "a3"])
            let names = try FileManager.default.contentsOfDirectory(
                atPath: (path as NSString).deletingLastPathComponent)
            #expect(!names.contains { $0.hasSuffix(".tmp") })
        }
    }

    @Test func linesWithAnyCharacterReadBackAsTyped() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/history"
        let lines = ["подарок для мамы", "tab\there", "back\\slash", "  leading", "🇷🇺 👨‍👩‍👧"]
        let file = HistoryFile(path: path, size: 100, loadedLines: 0)
        for line in lines { #expect(file.append(line)) }
        #expect(HistoryFile.countLines(at: path) == lines.count)
    }
}

extension LibeditLineReaderTests {
    /// Two REPLs on one history file, typing in turn: a third one started afterwards recalls
    /// the lines of both, newest first.
    @Test func twoReadersOnOneHistoryFileKeepEveryLine() async throws {
        let directory = NSTemporaryDirectory() + "history-two-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/history"
        func reader(_ terminal: PseudoTerminal) throws -> LibeditLineReader {
            try #require(
                LibeditLineReader(
                    configuration: .init(
                        historyPath: path, terminalType: "xterm", inputDescriptor: terminal.slave,
                        outputDescriptor: terminal.slave)))
        }
        let firstTerminal = try PseudoTerminal()
        let secondTerminal = try PseudoTerminal()
        let first = try reader(firstTerminal)
        let second = try reader(secondTerminal)
        for (index, line) in ["from one", "from two", "one again", "two again"].enumerated() {
            let (terminal, reader) = index % 2 == 0 ? (firstTerminal, first) : (secondTerminal, second)
            async let event = reader.nextEvent(prompt: "p> ")
            terminal.waitFor("p> ")
            terminal.type(line + "\r")
            #expect(await event == .line(line))
        }
        let terminal = try PseudoTerminal()
        let third = try reader(terminal)
        async let recalled = third.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("\u{1b}[A\u{1b}[A\u{1b}[A\r")  // three lines back: "from two"
        #expect(await recalled == .line("from two"))
    }
}
