import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// A pseudo-terminal the tests type into (master side) while a `LibeditLineReader` edits on
/// the slave side, so libedit runs exactly as on a real terminal.
final class PseudoTerminal {
    let master: Int32
    let slave: Int32
    private(set) var output = ""
    /// How much of `output` `unseen()` has handed out.
    private var seen = 0

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

    /// Whether `hangUp()` closed the master side already.
    private var hungUp = false

    deinit {
        if !hungUp { close(master) }
        close(slave)
    }

    /// Closes the master side, as a terminal window closing does: a read on the slave side
    /// ends (end of input), so nothing waits for a key that can never come.
    func hangUp() {
        guard !hungUp else { return }
        hungUp = true
        close(master)
    }

    /// The output that arrived since the last call.
    func unseen() -> String {
        let utf8 = Array(output.utf8)
        defer { seen = utf8.count }
        return String(decoding: utf8[seen...], as: UTF8.self)
    }

    /// Resizes the terminal and signals the process, as a terminal emulator would (the pty is
    /// not the test's controlling terminal, so the kernel sends no SIGWINCH of its own).
    func resize(columns: UInt16) {
        var size = winsize(ws_row: 24, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        kill(getpid(), SIGWINCH)
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
            // A test past its time limit (cancelled) stops waiting at once.
            let remaining = Task.isCancelled ? 0 : Int32(max(0, min(1_000, deadline.timeIntervalSinceNow * 1000)))
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            let ready = remaining > 0 ? poll(&descriptor, 1, remaining) : 0
            if ready == 0, remaining > 0, deadline.timeIntervalSinceNow > 0 { continue }
            guard ready > 0 else {
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
@Suite(.serialized, .timeLimit(.minutes(3))) struct LibeditLineReaderTests {
    private static let completer = CommandCompletion([
        .init(":help"), .init(":home"), .init(":screen", arguments: ["home", "product", "search"]),
    ]).completer

    private func makeReader(
        _ terminal: PseudoTerminal, historyPath: String? = nil, reflows: Bool? = nil
    ) throws -> LibeditLineReader {
        try #require(
            LibeditLineReader(
                configuration: .init(
                    historyPath: historyPath, completer: Self.completer, terminalType: "xterm",
                    inputDescriptor: terminal.slave, outputDescriptor: terminal.slave, terminalReflows: reflows)))
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

    // MARK: - Resize

    /// The terminals a resize test runs on: one that re-flows and one that does not, each
    /// known to the reader (it then redraws exactly) or not (it then leaves part of the old
    /// prompt rather than risk erasing a line above it).
    static let terminals: [(reflows: Bool, known: Bool)] = [(false, true), (true, true), (false, false), (true, false)]

    /// Types enough after the prompt to wrap it at 20 columns, then resizes to 60 and prints:
    /// the line printed first after the resize starts on a row of its own, the lines above
    /// the prompt are untouched, and the prompt is drawn again for 60 columns (unshortened).
    @Test(arguments: terminals)
    func widerTerminalRedrawsThePromptAndTheNextLineDoesNotOverwriteIt(reflows: Bool, known: Bool) async throws {
        let terminal = try PseudoTerminal(columns: 20)
        let reader = try makeReader(terminal, reflows: known ? reflows : nil)
        let resizes = Locked<[TerminalResize]>([])
        reader.setResizeHandler { resize in resizes.withLock { $0.append(resize) } }
        reader.printAsync("earlier output")
        async let event = reader.nextEvent(prompt: "chat[product KIT-1001]> ")
        let input = String(repeating: "y", count: 15)
        terminal.waitFor("> ")
        terminal.type(input)
        terminal.waitUntil("the input echoed") { $0.utf8.filter { $0 == UInt8(ascii: "y") }.count >= 15 }
        var screen = ScreenModel(columns: 20, reflows: reflows)
        screen.feed(terminal.unseen())
        #expect(screen.lines == ["earlier output", "chat[p…]> yyyyyyyyyy", "yyyyy"])

        terminal.resize(columns: 60)
        screen.resize(to: 60)
        terminal.waitFor("chat[product KIT-1001]> " + input)
        #expect(resizes.withLock { $0 } == [TerminalResize(columns: 60, sequence: 1)])
        reader.printAsync("first line after the resize")
        terminal.waitFor("first line after the resize\r\r\nchat[product KIT-1001]> " + input)
        screen.feed(terminal.unseen())

        // xterm keeps the old prompt's first row; tmux and VTE joined it with the second.
        // Not knowing which, the reader moves up by the fewer rows and leaves xterm's.
        let remnant = reflows || known ? [] : ["chat[p…]> yyyyyyyyyy"]
        #expect(
            screen.lines
                == ["earlier output"] + remnant + ["first line after the resize", "chat[product KIT-1001]> " + input])
        #expect(screen.unknown.isEmpty)
        terminal.type("\r")
        #expect(await event == .line(input))
    }

    /// The other way, 60 to 20 columns: the prompt is shortened again and nothing printed
    /// before is overwritten.
    @Test(arguments: terminals)
    func narrowerTerminalShortensThePromptAndKeepsTheLinesAbove(reflows: Bool, known: Bool) async throws {
        let terminal = try PseudoTerminal(columns: 60)
        let reader = try makeReader(terminal, reflows: known ? reflows : nil)
        reader.printAsync("earlier output")
        async let event = reader.nextEvent(prompt: "chat[product KIT-1001]> ")
        terminal.waitFor("> ")
        terminal.type("abc")
        terminal.waitFor("abc")
        var screen = ScreenModel(columns: 60, reflows: reflows)
        screen.feed(terminal.unseen())
        #expect(screen.lines == ["earlier output", "chat[product KIT-1001]> abc"])

        terminal.resize(columns: 20)
        screen.resize(to: 20)
        terminal.waitFor("chat[p…]> abc")
        reader.printAsync("after")
        terminal.waitFor("after\r\r\nchat[p…]> abc")
        screen.feed(terminal.unseen())

        // A re-flowing terminal had wrapped the old prompt onto two rows; not knowing that,
        // the reader leaves the first.
        let remnant = reflows && !known ? ["chat[product KIT-100"] : []
        #expect(screen.lines == ["earlier output"] + remnant + ["after", "chat[p…]> abc"])
        terminal.type("\r")
        #expect(await event == .line("abc"))
    }

    @Test func aResizeBetweenReadsIsAppliedBeforeTheNextPrompt() async throws {
        let terminal = try PseudoTerminal(columns: 20)
        let reader = try makeReader(terminal)
        let resizes = Locked<[TerminalResize]>([])
        reader.setResizeHandler { resize in resizes.withLock { $0.append(resize) } }
        async let first = reader.nextEvent(prompt: "chat[product KIT-1001]> ")
        terminal.waitFor("chat[p…]> ")
        terminal.type("one\r")
        #expect(await first == .line("one"))

        terminal.resize(columns: 60)
        async let second = reader.nextEvent(prompt: "chat[product KIT-1001]> ")
        terminal.waitFor("chat[product KIT-1001]> ")
        #expect(resizes.withLock { $0.map(\.columns) } == [60])
        terminal.type("two\r")
        #expect(await second == .line("two"))
    }

    // MARK: - History search

    private func enter(_ lines: [String], into reader: LibeditLineReader, on terminal: PseudoTerminal) async {
        for line in lines {
            async let event = reader.nextEvent(prompt: "p> ")
            terminal.waitFor("p> ")
            terminal.type(line + "\r")
            #expect(await event == .line(line))
        }
    }

    @Test func ctrlRSaysItSearchesTheHistoryAndEnterRunsTheMatch() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        await enter([":product KIT-1001", ":open", "подарок для мамы"], into: reader, on: terminal)

        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("\u{12}")
        terminal.waitFor("(history search)`': ")
        terminal.type("KIT")
        terminal.waitFor("(history search)`KIT': :product KIT-1001")
        terminal.type("x")
        terminal.waitFor("(failed history search)`KITx': :product KIT-1001")
        terminal.type("\u{7f}\r")
        #expect(await event == .line(":product KIT-1001"))
    }

    @Test func ctrlRAgainFindsOlderLinesAndCtrlGRestoresTheLine() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        await enter([":product KIT-1001", ":product KIT-1002"], into: reader, on: terminal)

        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("draft")
        terminal.waitFor("draft")
        terminal.type("\u{12}KIT")
        terminal.waitFor("`KIT': :product KIT-1002")
        terminal.type("\u{12}")
        terminal.waitFor("`KIT': :product KIT-1001")
        terminal.type("\u{7}")
        terminal.waitFor("p> draft")
        terminal.type("!\r")
        #expect(await event == .line("draft!"))
    }

    @Test func editingKeysEndTheSearchOnTheMatchAndThenDoTheirWork() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        await enter(["подарок для мамы"], into: reader, on: terminal)

        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("\u{12}мам")
        terminal.waitFor("`мам': подарок для мамы")
        // An arrow key ends the search and moves the cursor; Ctrl-A then goes to the start.
        terminal.type("\u{1b}[D")
        terminal.waitFor("p> подарок для мамы")
        terminal.type("\u{1}!\r")
        #expect(await event == .line("!подарок для мамы"))
    }

    @Test func ctrlCDuringASearchInterruptsTheRead() async throws {
        let terminal = try PseudoTerminal()
        let reader = try makeReader(terminal)
        await enter([":open"], into: reader, on: terminal)
        async let event = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type("\u{12}op")
        terminal.waitFor("`op': :open")
        reader.interrupt()
        #expect(await event == .interrupt)
    }

    // MARK: - Completion from the demo catalogue

    @Test func tabCompletesSkusAndCategoriesOfTheDemoCatalogue() async throws {
        let terminal = try PseudoTerminal()
        let completion = REPLSession.completion.addingDemoCatalogue()
        let reader = try #require(
            LibeditLineReader(
                configuration: .init(
                    completer: completion.completer, terminalType: "xterm", inputDescriptor: terminal.slave,
                    outputDescriptor: terminal.slave)))

        async let product = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type(":prod\tELC-200\t")
        let listing = terminal.waitFor("p> :product ELC-200")
        #expect(contains(listing, "ELC-2001  ELC-2002"))
        terminal.type("5\t\r")
        #expect(await product == .line(":product ELC-2005 "))

        async let category = reader.nextEvent(prompt: "p> ")
        terminal.waitFor("p> ")
        terminal.type(":category Кни\t\r")
        #expect(await category == .line(":category Книги "))
    }

    @Test func theEnvironmentTellsWhichTerminalsReflow() {
        #expect(LibeditLineReader.terminalReflows(environment: ["TMUX": "/tmp/tmux-0/default,1,0"]) == true)
        #expect(LibeditLineReader.terminalReflows(environment: ["VTE_VERSION": "7006"]) == true)
        #expect(LibeditLineReader.terminalReflows(environment: ["XTERM_VERSION": "XTerm(379)"]) == false)
        #expect(LibeditLineReader.terminalReflows(environment: ["XTERM_VERSION": "XTerm(379)", "TMUX": "x"]) == true)
        #expect(LibeditLineReader.terminalReflows(environment: ["TERM": "xterm-256color"]) == nil)
    }

    @Test func promptEscapesAreBracketedForLibedit() {
        #expect(
            LibeditLineReader.libeditPrompt("\u{1b}[36mhome\u{1b}[0m> ")
                == "\u{1}\u{1b}[36m\u{1}home\u{1}\u{1b}[0m\u{1}> ")
        #expect(LibeditLineReader.libeditPrompt("a\u{7}b\u{1}c\u{9b}") == "abc")
    }
}
