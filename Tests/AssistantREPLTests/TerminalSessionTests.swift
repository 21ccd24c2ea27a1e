import DemoStore
import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@testable import AssistantREPL

/// A whole REPL session in a terminal, as `assistant` runs it: libedit on a pseudo-terminal,
/// the demo store, real time — on a manual clock nobody advances, so nothing that waits for the
/// clock ends unless something else ends it.
final class TerminalSession {
    let terminal: PseudoTerminal
    let reader: LibeditLineReader
    let environment: REPLEnvironment
    let clock = ManualClock()
    let columns: Int
    private var running: Task<Void, Never>?

    init(columns: UInt16 = 80, terminalType: String = "xterm", historyPath: String? = nil) async throws {
        self.columns = Int(columns)
        terminal = try PseudoTerminal(columns: columns)
        let reader = try #require(
            LibeditLineReader(
                configuration: .init(
                    historyPath: historyPath, completer: REPLSession.completer, hinter: { REPLSession.hint(for: $0) },
                    terminalType: terminalType, inputDescriptor: terminal.slave, outputDescriptor: terminal.slave,
                    terminalReflows: false)))
        self.reader = reader
        var policy = REPLEnvironment.Policy.commandLine(
            CommandLineOptions(), interactive: true, width: Int(columns), stateDirectory: nil)
        policy.time = .clock(clock)
        let style = TerminalStyle(usesColor: reader.hasCursorControl)
        let output = REPLOutput(style: style) { (lines: [String]) in reader.printAsync(lines.joined(separator: "\n")) }
        environment = await REPLEnvironment(policy: policy, output: output)
    }

    /// Starts the session's read loop; `finish(after:)` ends it.
    func start() {
        let session = environment.session
        let reader = self.reader
        running = Task { await session.run(reader: reader) }
    }

    /// Types `line` and Enter once everything drawn so far ends with the prompt `prompt`.
    func enter(_ line: String, after prompt: String) {
        terminal.waitForEnd(prompt)
        terminal.type(line + "\r")
    }

    /// The screen a user sees now, as a terminal `columns` wide draws everything so far.
    func screen() -> [String] {
        var model = ScreenModel(columns: columns, reflows: false)
        model.feed(terminal.output)
        return model.lines
    }

    /// Ctrl-D once the prompt `prompt` is drawn (typed earlier, a terminal between reads
    /// would take it as its own end of file), and waits for the session to end.
    func finish(after prompt: String) async {
        let row = prompt.trimmingCharacters(in: .whitespaces)
        terminal.waitUntil("a prompt ending \(row.debugDescription) on an empty line") { _ in
            screen().last?.hasSuffix(row) == true
        }
        terminal.type("\u{4}")
        // A session that never ends fails the test at its time limit instead of stalling the
        // run: what the session waits for is cancelled, and the hang-up ends the read.
        let terminal = UncheckedSendable(terminal)
        let running = self.running
        await withTaskCancellationHandler {
            await running?.value
        } onCancel: {
            running?.cancel()
            terminal.value.hangUp()
        }
    }
}

/// Hands a test's terminal to a cancellation handler, which runs while the test's own task
/// waits and touches nothing else of it.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension PseudoTerminal {
    /// Reads until everything drawn so far ends with `suffix`; at once when it already does.
    func waitForEnd(_ suffix: String, sourceLocation: SourceLocation = #_sourceLocation) {
        waitUntil("the output to end with \(suffix.debugDescription)", sourceLocation: sourceLocation) { _ in
            self.output.hasSuffix(suffix)
        }
    }
}

/// The REPL in a terminal: Ctrl-C ends whatever blocks the prompt, a terminal without cursor
/// control gets no escape byte, and the arguments of a command are hinted while it is typed.
/// In the serialized suite of the reader tests: a real SIGINT reaches every open reader.
extension LibeditLineReaderTests {
    @Test func ctrlCEndsAWaitAtOnceAndTheNextCommandRuns() async throws {
        let session = try await TerminalSession()
        session.start()
        session.enter(":wait 20s", after: "no screen> ")
        // Sleeping on a clock nobody advances: only Ctrl-C can end it.
        #expect(await session.clock.waitForSleepers(1))
        kill(getpid(), SIGINT)
        let drawn = session.terminal.waitFor("(interrupted)")
        #expect(!contains(drawn, "later)"), "the wait did not run to its end")
        session.enter(":state", after: "no screen> ")
        session.terminal.waitFor("preparation: idle")
        #expect(session.clock.now.offset == .zero, "no time passed: Ctrl-C ended it")
        await session.finish(after: "no screen> ")
    }

    @Test func ctrlCAtThePromptOrWhileNothingBlocksChangesNothing() async throws {
        let session = try await TerminalSession()
        session.start()
        session.terminal.waitForEnd("no screen> ")
        session.terminal.type("half-typed")
        session.terminal.waitFor("half-typed")
        kill(getpid(), SIGINT)
        session.enter(":home", after: "no screen> ")
        session.terminal.waitFor("(screen: homepage)")
        #expect(!contains(session.terminal.output, "(interrupted)"))
        await session.finish(after: "> ")
    }

    @Test func aTerminalWithoutCursorControlGetsNoEscapeByteAtAll() async throws {
        let session = try await TerminalSession(columns: 60, terminalType: "dumb")
        #expect(!session.reader.hasCursorControl)
        session.start()
        session.enter(":product KIT-1001", after: "no screen> ")
        session.terminal.waitFor("entry button (:open)")
        // The prompt may or may not show the entry button yet: it was drawn as the flow ran.
        session.enter(":open", after: "> ")
        session.terminal.waitFor("suggests:")
        let chat = "chat[product KIT-1001]> "
        session.enter("подарок", after: chat)
        session.terminal.waitFor("Что-нибудь для дома")
        // Output while a line is half typed goes on lines of its own below it.
        session.terminal.waitForEnd(chat)
        session.terminal.type(":ta")
        session.terminal.waitForEnd(chat + ":ta")
        session.reader.printAsync("a line printed while typing")
        session.terminal.waitForEnd(chat + ":ta")
        session.terminal.type("\t1\r")
        // The tap navigates back to the product; its entry button comes last.
        session.terminal.waitFor("entry button (:open)")
        session.enter(":help", after: "> ")
        session.terminal.waitFor("(:pro).")
        await session.finish(after: "> ")
        let output = session.terminal.output
        #expect(!output.unicodeScalars.contains("\u{1b}"), "no ESC in \(output.debugDescription)")
        // The half-typed line stays as it was; the line goes below it; the prompt and the input
        // are drawn again below that.
        let screen = session.screen()
        let printedAt = try #require(screen.firstIndex(of: "a line printed while typing"))
        #expect(screen[printedAt - 1] == chat + ":ta")
        #expect(screen[printedAt + 1].hasPrefix(chat + ":ta"))
    }

    @Test func aTerminalWithCursorControlKeepsRedrawingInPlace() async throws {
        let session = try await TerminalSession()
        #expect(session.reader.hasCursorControl)
        session.start()
        session.terminal.waitForEnd("no screen> ")
        session.terminal.type("par")
        session.terminal.waitFor("par")
        session.reader.printAsync("reply arrived")
        let drawn = session.terminal.waitFor("no screen> par")
        #expect(contains(drawn, "\r\u{1b}[J"))
        session.terminal.type("\u{15}")  // Ctrl-U: drop the half-typed line
        await session.finish(after: "no screen> ")
    }

    @Test func theArgumentsOfACommandAreHintedWhileItIsTyped() async throws {
        let session = try await TerminalSession()
        session.start()
        session.terminal.waitForEnd("no screen> ")
        // The hint is libedit's right prompt: at the right end of the input row.
        func waitForRow(_ typed: String, hint: String) {
            let row = "no screen> " + typed + String(repeating: " ", count: 79 - 11 - typed.count - hint.count) + hint
            session.terminal.waitUntil("the row \(row.debugDescription)") { _ in session.screen().last == row }
        }
        session.terminal.type(":tap ")
        waitForRow(":tap ", hint: "N [twice]")
        session.terminal.type("2")
        waitForRow(":tap 2", hint: "[twice]")
        session.terminal.type(" twice")
        session.terminal.waitUntil("the hint gone") { _ in session.screen().last == "no screen> :tap 2 twice" }
        session.terminal.type("\u{15}:fa")
        session.terminal.type("\t")
        waitForRow(":fault ", hint: "NAME [once|sticky]")
        session.terminal.type("\u{15}")
        session.terminal.waitUntil("the line cleared") { _ in session.screen().last == "no screen>" }
        await session.finish(after: "no screen> ")
    }

    @Test func anEnteredLineKeepsWhatWasTypedAndNotItsHint() async throws {
        let session = try await TerminalSession()
        session.start()
        session.terminal.waitForEnd("no screen> ")
        session.terminal.type(":tap ")
        session.terminal.waitUntil("the hint") { _ in session.screen().last?.hasSuffix("N [twice]") == true }
        session.terminal.type("\r")
        session.terminal.waitFor("usage: :tap N [twice]")
        session.terminal.waitUntil("the entered row without its hint") { _ in
            session.screen().contains("no screen> :tap")
        }
        #expect(!session.screen().contains { $0.hasPrefix("no screen> :tap") && $0.hasSuffix("N [twice]") })
        await session.finish(after: "no screen> ")
    }

    @Test func leavingATerminalSessionShutsTheEngineDownSoNoTrackingHostHoldsTheTerminal() async throws {
        let session = try await TerminalSession()
        session.start()
        session.enter(":product KIT-1001", after: "no screen> ")
        session.terminal.waitFor("entry button (:open)")
        await session.finish(after: "> ")
        // Shut down (H2): what tracking was still queued had the quit's flush deadline, and
        // every later call is refused at once.
        let later = await session.environment.engine.prepareAssistant(
            assistantSelector: "shopping-assistant", pageContext: PageContext(type: .homepage))
        #expect(later == .cancelled)
    }

    @Test func aMessageTheChatCannotTakeIsBackOnTheLineNotLost() async throws {
        let session = try await TerminalSession()
        session.start()
        session.enter(":product KIT-1001", after: "no screen> ")
        session.terminal.waitFor("entry button (:open)")
        session.enter("подарок маме", after: "> ")
        session.terminal.waitFor("your text was not sent; it is back")
        session.terminal.waitUntil("the text on the next line") { _ in
            session.screen().last?.hasSuffix("> подарок маме") == true
        }
        session.terminal.type("\u{15}")  // Ctrl-U: the line the user chose not to send
        // `::text` comes back as typed, never as the command it would be without its colon.
        session.terminal.waitUntil("the line cleared") { _ in session.screen().last?.hasSuffix(">") == true }
        session.terminal.type("::open the door\r")
        // Not the echo of the line being typed: its refusal first, then the line put back, drawn
        // by the editor (a key typed before it reads would go to the terminal's own line
        // editing, not libedit's).
        session.terminal.waitUntil("the typed line back on the next line") { _ in
            let screen = session.screen()
            return screen.filter { $0.contains("your text was not sent") }.count >= 2
                && screen.last?.hasSuffix("> ::open the door") == true
        }
        session.terminal.type("\u{15}")
        await session.finish(after: "> ")
    }

    @Test func exitWithTheChatOpenIsAnsweredNotSent() async throws {
        let session = try await TerminalSession(columns: 120)
        session.start()
        session.enter(":product KIT-1001", after: "no screen> ")
        session.terminal.waitFor("entry button (:open)")
        session.enter(":open", after: "> ")
        session.terminal.waitFor("suggests:")
        session.enter("exit", after: "chat[product KIT-1001]> ")
        session.terminal.waitFor(
            "'exit' was not sent: :quit leaves, :close closes the chat; to send the word, type ::exit")
        let posts = session.environment.demoStore?.requestLog.filter { $0.path.hasSuffix("/v1/messages") } ?? []
        #expect(posts.isEmpty)
        await session.finish(after: "chat[product KIT-1001]> ")
    }
}
