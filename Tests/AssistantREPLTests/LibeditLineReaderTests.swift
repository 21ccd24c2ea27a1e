import Foundation
import Testing

@testable import AssistantREPL

/// A pseudo-terminal the tests type into (master side) while a `LibeditLineReader` edits on
/// the slave side, so libedit runs exactly as on a real terminal.
final class PseudoTerminal {
    let master: Int32
    let slave: Int32
    private(set) var output = ""

    init(columns: UInt16 = 80) throws {
        // Glibc's Swift module hides the X/Open pseudo-terminal calls, so look them up.
        guard let openMaster = libc("posix_openpt", as: (@convention(c) (Int32) -> Int32).self),
            let grant = libc("grantpt", as: (@convention(c) (Int32) -> Int32).self),
            let unlock = libc("unlockpt", as: (@convention(c) (Int32) -> Int32).self),
            let slaveName = libc("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
        else { throw PseudoTerminalError.unavailable }
        let master = openMaster(O_RDWR | O_NOCTTY)
        guard master >= 0, grant(master) == 0, unlock(master) == 0, let name = slaveName(master) else {
            throw PseudoTerminalError.unavailable
        }
        let slave = open(name, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw PseudoTerminalError.unavailable }
        var size = winsize(ws_row: 24, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        self.master = master
        self.slave = slave
    }

    deinit {
        close(master)
        close(slave)
    }

    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Reads what libedit drew until `marker` appears after the output seen so far, and
    /// returns that new output. The timeout only guards against a hang; it never paces a test.
    @discardableResult
    func waitFor(_ marker: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        waitUntil("\(marker.debugDescription)", sourceLocation: sourceLocation) { contains($0, marker) }
    }

    /// Reads until `condition` holds for the output that arrived since the call.
    @discardableResult
    func waitUntil(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: (String) -> Bool
    ) -> String {
        let start = output.utf8.count
        let deadline = Date().addingTimeInterval(60)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pending: [UInt8] = []
        var fresh: String { String(decoding: output.utf8.dropFirst(start), as: UTF8.self) }
        while !condition(fresh) {
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard remaining > 0, poll(&descriptor, 1, remaining) > 0 else {
                Issue.record(
                    "timed out waiting for \(what) in \(output.debugDescription)", sourceLocation: sourceLocation)
                break
            }
            let count = read(master, &buffer, buffer.count)
            guard count > 0 else { break }
            pending += buffer[0..<count]
            if let text = String(validating: pending, as: UTF8.self) {
                output += text
                pending = []
            }
        }
        return fresh
    }
}

/// Byte-wise search: `String.contains` compares graphemes, and `\r\n` is one grapheme, so
/// it would miss "\r\n" inside "\r\r\n".
func contains(_ text: String, _ part: String) -> Bool {
    let haystack = Array(text.utf8)
    let needle = Array(part.utf8)
    guard needle.count <= haystack.count else { return needle.isEmpty }
    return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}

func libc<Function>(_ name: String, as type: Function.Type) -> Function? {
    dlsym(nil, name).map { unsafeBitCast($0, to: type) }
}

enum PseudoTerminalError: Error {
    case unavailable
}

/// Serialized: a real SIGINT reaches every open reader in the process, so readers must not
/// overlap across these tests.
@Suite(.serialized, .timeLimit(.minutes(1))) struct LibeditLineReaderTests {
    private static let completer = CommandCompletion([
        .init(":help"), .init(":home"), .init(":screen", arguments: ["home", "product", "search"]),
    ]).completer

    private func makeReader(_ terminal: PseudoTerminal, historyPath: String? = nil) throws -> LibeditLineReader {
        try #require(
            LibeditLineReader(
                configuration: .init(
                    historyPath: historyPath, completer: Self.completer, terminalType: "xterm",
                    inputDescriptor: terminal.slave, outputDescriptor: terminal.slave)))
    }

    private func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "libedit-tests-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func readsAnEditedLine() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("helo\u{1b}[D\u{1b}[Dl\r")  // two steps left, insert the missing "l"
        #expect(await event == .line("hello"))
    }

    @Test func readsCyrillicInput() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("Привет, мир\r")
        #expect(await event == .line("Привет, мир"))
    }

    @Test func ctrlDOnAnEmptyLineEndsInput() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("\u{4}")
        #expect(await event == .endOfInput)
    }

    @Test func ctrlCInterruptsTheRead() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("abandoned")
        terminal.waitFor("abandoned")
        // The terminal is not the test process's controlling terminal, so typing ^C raises
        // nothing; send the signal to the process, as the terminal would. The kernel picks
        // any thread that does not block it, rarely the reading one: the handler's pipe
        // wakes the reader wherever it lands. (`raise` would target this concurrency-pool
        // thread, where libdispatch keeps SIGINT blocked, so it would never arrive.)
        kill(getpid(), SIGINT)
        #expect(await event == .interrupt)

        async let next = reader.nextEvent(prompt: "q> ")
        terminal.waitFor("q> ")
        terminal.type("fresh\r")
        #expect(await next == .line("fresh"))
    }

    @Test func interruptFromAnotherThreadEndsTheRead() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        reader.interrupt()
        #expect(await event == .interrupt)
    }

    @Test func tabCompletesCommandsAndArguments() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type(":sc\t")
        terminal.waitFor("reen ")
        terminal.type("pr\t\r")
        #expect(await event == .line(":screen product "))
    }

    @Test func tabListsAmbiguousCompletionsAndRedrawsTheLine() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type(":h\t")
        let drawn = terminal.waitFor("p> :h")
        #expect(contains(drawn, ":help  :home"))
        terminal.type("e\t\r")
        #expect(await event == .line(":help "))
    }

    @Test func printAsyncClearsPrintsAndRedrawsThePartialInput() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("par")
        terminal.waitFor("par")
        reader.printAsync("reply arrived")
        let drawn = terminal.waitFor("p> par")
        #expect(drawn.utf8.starts(with: "\r\u{1b}[J".utf8))
        #expect(contains(drawn, "reply arrived\r"))
        #expect(contains(drawn, "\np> par"))  // prompt and partial input redrawn on a fresh line
        terminal.type("tial\r")
        #expect(await event == .line("partial"))
    }

    @Test func printAsyncMovesUpOverWrappedInput() async throws {
        let terminal = try PseudoTerminal(columns: 20)
        let reader = try makeReader(terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        let long = String(repeating: "x", count: 30)  // 3 + 30 columns: the cursor is on row 1
        terminal.type(long)
        terminal.waitUntil("all 30 x echoed") { $0.utf8.filter { $0 == UInt8(ascii: "x") }.count >= 30 }
        reader.printAsync("note")
        let drawn = terminal.waitFor("note")
        #expect(contains(drawn, "\r\u{1b}[1A\u{1b}[J"))
        terminal.type("\r")
        #expect(await event == .line(long))
    }

    @Test func historyIsSavedWithMode0600AndReloaded() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/state/assistant/history"

        do {
            let terminal = try PseudoTerminal()
            let reader = try makeReader(terminal, historyPath: path)
            async let event = reader.nextEvent(prompt: "p> ")
            terminal.waitFor("p> ")
            terminal.type(":screen search\r")
            #expect(await event == .line(":screen search"))
        }

        var info = stat()
        try #require(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        try #require(stat(directory + "/state/assistant", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        let contents = try String(contentsOfFile: path, encoding: .utf8)
        #expect(contents.hasPrefix("_HiStOrY_V2_\n"))

        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal, historyPath: path)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("\u{1b}[A\r")  // up arrow recalls the saved line
        #expect(await event == .line(":screen search"))
    }

    @Test func blankLinesStayOutOfTheHistory() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/history"
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal, historyPath: path)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("   \r")
        #expect(await event == .line("   "))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func promptEscapesAreBracketedForLibedit() {
        #expect(
            LibeditLineReader.libeditPrompt("\u{1b}[36mhome\u{1b}[0m> ")
                == "\u{1}\u{1b}[36m\u{1}home\u{1}\u{1b}[0m\u{1}> ")
        #expect(LibeditLineReader.libeditPrompt("a\u{7}b\u{1}c\u{9b}") == "abc")
    }
}
