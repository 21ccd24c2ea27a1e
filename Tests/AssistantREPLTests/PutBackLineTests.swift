import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// A message the chat could not take is put back on the line; a command typed after it, as the
/// warning advises, runs, and the text comes back once more to be sent.
@Suite(.timeLimit(.minutes(2))) struct PutBackLineTests {
    /// A line editor's behaviour, scripted: text offered for the next line is there before the
    /// keys typed next, as libedit shows it.
    private final class PrefillingReader: LineReader, @unchecked Sendable {
        // @unchecked: a session reads one line at a time; the lock covers the rest.
        private let state: Locked<(typed: [String], offered: String?, lines: [String])>

        init(typed: [String]) { state = Locked((typed, nil, [])) }

        /// Every line as the session received it.
        var lines: [String] { state.withLock { $0.lines } }

        func readLine(prompt: String) -> LineReaderEvent {
            state.withLock { state in
                guard !state.typed.isEmpty else { return .endOfInput }
                let line = (state.offered ?? "") + state.typed.removeFirst()
                state.offered = nil
                state.lines.append(line)
                return .line(line)
            }
        }

        func nextEvent(prompt: String) async -> LineReaderEvent { readLine(prompt: prompt) }
        func printAsync(_ text: String) {}
        func nextInterrupt() async -> Bool {
            while !Task.isCancelled { await Task.yield() }
            return false
        }
        func setResizeHandler(_ handler: (@Sendable (TerminalResize) -> Void)?) {}
        func offerNextLine(_ text: String) -> Bool {
            state.withLock { $0.offered = text }
            return true
        }
    }

    @Test func aCommandTypedAfterTextPutBackRunsAndTheTextComesBackAgain() async throws {
        let repl = try await DemoREPL(width: 200)
        let reader = PrefillingReader(typed: [":product KIT-1001", "hello", ":open", ""])
        let printed = await repl.runSession(reader: reader)
        #expect(reader.lines == [":product KIT-1001", "hello", "hello:open", "hello"])
        #expect(
            printed.contains("the chat is closed: :open it first (your text was not sent; it is back on the line)"),
            "\(printed)")
        #expect(printed.contains("┌─ Помощник магазина"), ":open ran: \(printed)")
        #expect(printed.filter { $0.hasPrefix("you › ") } == ["you › hello"], "sent once the chat was open: \(printed)")
    }

    // A prefix or an alias after the text is part of the text: `ok:D` is a smile, not `:dislike`;
    // nor does a quit take the text along.
    @Test func onlyACommandByItsFullNameIsTakenFromAfterTheText() async throws {
        let repl = try await DemoREPL(width: 200)
        let reader = PrefillingReader(typed: [":product KIT-1001", "ok", ":D", ":quit"])
        let printed = await repl.runSession(reader: reader)
        #expect(reader.lines == [":product KIT-1001", "ok", "ok:D", "ok:D:quit"], "\(printed)")
        let refused = printed.filter { $0.hasPrefix("the chat is closed") }
        #expect(refused.count == 3, "each line was a message the closed chat refused: \(printed)")
    }
}
