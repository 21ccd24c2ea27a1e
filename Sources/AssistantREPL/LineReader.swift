import Foundation
import ShoppingAssistant

// MARK: - Events

/// What one read from the user produced.
///
/// Three cases rather than `String?` because the REPL treats Ctrl-C and Ctrl-D differently:
/// Ctrl-C returns to the prompt without cancelling a message already sent (O8), Ctrl-D quits.
package enum LineReaderEvent: Sendable, Hashable {
    /// A line the user entered, without its trailing newline.
    case line(String)
    /// Ctrl-C while editing: the partial line is abandoned and a fresh prompt is wanted.
    case interrupt
    /// Ctrl-D on an empty line, or the end of piped or scripted input.
    case endOfInput
}

// MARK: - Protocol

/// Where the REPL gets its input lines from: libedit on a terminal, plain stdin when piped,
/// a fixed script in tests and transcript replay.
///
/// The REPL's replies arrive while the user is typing (the engine answers asynchronously), so
/// a reader is also the one place that may print during a read: `printAsync(_:)` clears the
/// prompt and the partial input, prints, and redraws them (lldb's `PrintAsync`). While a read
/// is in progress, all other output must go through `printAsync(_:)` too.
///
/// Concurrency contract: `readLine(prompt:)` calls must not overlap (one reading thread at a
/// time; libedit is not thread-safe and its terminal state is per process), while
/// `printAsync(_:)` may be called from any thread or task at any time. Implementations are
/// `Sendable` under that contract.
package protocol LineReader: AnyObject, Sendable {
    /// Shows `prompt` and blocks the calling thread until the user finishes a line, presses
    /// Ctrl-C or ends input. Prefer `nextEvent(prompt:)` from async code.
    func readLine(prompt: String) -> LineReaderEvent

    /// Reads one line without blocking the concurrency pool. The default runs
    /// `readLine(prompt:)` on a thread of its own, because a blocking `read(2)` must not occupy
    /// one of the few cooperative threads the engine's actor runs on. A blocked read cannot be
    /// cancelled; readers that never block answer inline.
    func nextEvent(prompt: String) async -> LineReaderEvent

    /// Prints `text` as whole lines (a missing final newline is added) without garbling a line
    /// the user is typing.
    func printAsync(_ text: String)

    /// Waits until the user presses Ctrl-C while no line is being read — a command is running
    /// — and returns true; returns false once the calling task is cancelled. A reader without a
    /// terminal never sees Ctrl-C (in a pipe it ends the process as usual): it waits until
    /// cancelled. Never overlaps a read: the caller cancels it and awaits it before reading.
    func nextInterrupt() async -> Bool

    /// Receives every resize of the terminal (`SIGWINCH`), after the reader has redrawn its
    /// prompt for the new width. Called on a thread of the reader's; it must not block. Readers
    /// that have no terminal never call it. nil stops the notifications.
    func setResizeHandler(_ handler: (@Sendable (TerminalResize) -> Void)?)

    /// Puts `text` on the next line read, as if typed, for the user to send again or edit:
    /// what a command refused is not lost. True when the reader can (a line editor); a reader
    /// without one ignores it.
    @discardableResult
    func offerNextLine(_ text: String) -> Bool
}

extension LineReader {
    /// Readers without a line editor have no line to put text on.
    @discardableResult
    package func offerNextLine(_ text: String) -> Bool { false }
}

/// The terminal changed its width.
package struct TerminalResize: Sendable, Hashable {
    /// The new width in columns.
    package let columns: Int
    /// Increases with each resize, so a consumer that handles them on other tasks can drop
    /// one that arrives after a newer one.
    package let sequence: UInt64

    /// A resize to `columns`, the `sequence`-th of its reader.
    package init(columns: Int, sequence: UInt64) {
        self.columns = columns
        self.sequence = sequence
    }
}

extension LineReader {
    /// Readers without a terminal are never resized.
    package func setResizeHandler(_ handler: (@Sendable (TerminalResize) -> Void)?) {}

    /// Readers without a terminal see no Ctrl-C: this waits until the task is cancelled.
    package func nextInterrupt() async -> Bool {
        let waiter = Locked<(continuation: CheckedContinuation<Bool, Never>?, cancelled: Bool)>((nil, false))
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = waiter.withLock { state in
                    if !state.cancelled { state.continuation = continuation }
                    return state.cancelled
                }
                if cancelled { continuation.resume(returning: false) }
            }
        } onCancel: {
            let continuation = waiter.withLock { state in
                state.cancelled = true
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(returning: false)
        }
    }

    /// Runs the blocking `readLine(prompt:)` on a dedicated thread and resumes with its result.
    package func nextEvent(prompt: String) async -> LineReaderEvent {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: self.readLine(prompt: prompt))
            }
            thread.name = "assistant.line-reader"
            thread.start()
        }
    }
}

// MARK: - Choosing a reader

/// Picks the reader for the process's standard input and output.
package enum LineReaderFactory {
    /// libedit when both stdin and stdout are terminals (and libedit starts), plain
    /// `StdinLineReader` otherwise, so piped sessions stay deterministic: no prompt, no echo,
    /// no escape sequences.
    package static func standard(
        historyPath: String?, completer: LineCompleter?, hinter: LineHinter? = nil
    ) -> any LineReader {
        if isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1,
            let reader = LibeditLineReader(
                configuration: .init(historyPath: historyPath, completer: completer, hinter: hinter)
            )
        {
            return reader
        }
        return StdinLineReader()
    }
}

// MARK: - Plain stdin

/// Reads standard input line by line with no editing, no prompt and no decoration.
///
/// Used when stdin is not a terminal: the REPL's output then depends only on its input, which
/// is what transcripts record and replay. The prompt is not printed because an echo of it
/// would interleave with replies differently from run to run.
package final class StdinLineReader: LineReader {
    private let write: @Sendable (String) -> Void

    /// `write` receives `printAsync` output; the default prints to standard output, through
    /// the same buffer as `print`, so the order of all output is kept.
    package init(write: @escaping @Sendable (String) -> Void = { print($0, terminator: "") }) {
        self.write = write
    }

    /// The next line of standard input (a trailing `\n` or `\r\n` removed), or `.endOfInput`.
    package func readLine(prompt: String) -> LineReaderEvent {
        guard let line = Swift.readLine(strippingNewline: true) else { return .endOfInput }
        return .line(line)
    }

    /// Writes `text` as whole lines.
    package func printAsync(_ text: String) {
        guard !text.isEmpty else { return }
        write(text.hasSuffix("\n") ? text : text + "\n")
    }
}

// MARK: - Script

/// Hands out a fixed list of events, for tests and transcript replay.
///
/// Nothing blocks, so `nextEvent(prompt:)` answers inline and the order of events is exactly
/// the order of the REPL's own code. Prompts asked for and text printed are recorded so a test
/// can assert on them.
package final class ScriptLineReader: LineReader {
    private struct State {
        var pending: [LineReaderEvent]
        var prompts: [String] = []
        var printed: [String] = []
    }

    private let state: Locked<State>

    /// A reader that returns each event once, in order, then `.endOfInput` forever.
    package init(events: [LineReaderEvent]) {
        state = Locked(State(pending: events))
    }

    /// A reader that returns each line once, in order, then `.endOfInput` forever.
    package convenience init(lines: [String]) {
        self.init(events: lines.map(LineReaderEvent.line))
    }

    /// Every prompt passed to a read, in order.
    package var prompts: [String] { state.withLock { $0.prompts } }

    /// Every text passed to `printAsync(_:)`, in order.
    package var printed: [String] { state.withLock { $0.printed } }

    /// Events not yet handed out.
    package var remaining: [LineReaderEvent] { state.withLock { $0.pending } }

    /// The next scripted event, or `.endOfInput` when the script is used up.
    package func readLine(prompt: String) -> LineReaderEvent {
        state.withLock { state in
            state.prompts.append(prompt)
            return state.pending.isEmpty ? .endOfInput : state.pending.removeFirst()
        }
    }

    /// Answers inline: a script never blocks.
    package func nextEvent(prompt: String) async -> LineReaderEvent {
        readLine(prompt: prompt)
    }

    /// Records `text`.
    package func printAsync(_ text: String) {
        state.withLock { $0.printed.append(text) }
    }
}

// MARK: - Completion

/// Returns the completion candidates for the word before the cursor, given everything typed
/// before the cursor. Candidates are whole words; the reader works out what to insert.
///
/// Called on the reading thread while libedit waits, so it must be quick and must not print.
package typealias LineCompleter = @Sendable (_ textBeforeCursor: String) -> [String]

/// Returns the hint for a line being typed (the whole input so far): what the command takes
/// next, such as `N [twice]` after `:tap `; empty for none. Called on the reading thread inside
/// libedit's redraw, so it must be quick and must not print.
package typealias LineHinter = @Sendable (_ line: String) -> String

/// What a Tab press does, decided without a terminal so it can be tested.
package enum LineCompletion: Sendable, Hashable {
    /// Nothing matches: beep.
    case none
    /// Insert this text at the cursor (the rest of a unique match plus a space, or the
    /// longest prefix the matches share).
    case insert(String)
    /// Several matches and nothing more to insert: show them.
    case list([String])

    /// Resolves a Tab press: the word being completed is what follows the last space.
    package static func resolve(textBeforeCursor: String, candidates: [String]) -> LineCompletion {
        let word = Substring(textBeforeCursor.split(separator: " ", omittingEmptySubsequences: false).last ?? "")
        var seen = Set<String>()
        let matches = candidates.filter { $0.hasPrefix(word) && seen.insert($0).inserted }
        guard let first = matches.first else { return .none }
        if matches.count == 1 { return .insert(String(first.dropFirst(word.count)) + " ") }
        let shared = matches.dropFirst().reduce(Substring(first)) { prefix, match in
            prefix.commonPrefix(with: match)
        }
        if shared.count > word.count { return .insert(String(shared.dropFirst(word.count))) }
        return .list(matches)
    }

    /// Lays out listed matches in columns that fit `columns`, one string per screen line.
    package static func columns(_ items: [String], width columns: Int) -> [String] {
        guard !items.isEmpty else { return [] }
        let cell = (items.map(DisplayWidth.of).max() ?? 0) + 2
        let perRow = max(1, columns / cell)
        return stride(from: 0, to: items.count, by: perRow).map { start in
            let row = items[start..<min(items.count, start + perRow)]
            let padded = row.dropLast().map { DisplayWidth.pad($0, to: cell) } + [row.last ?? ""]
            return padded.joined()
        }
    }
}

extension Substring {
    /// The leading characters this substring shares with `other`.
    fileprivate func commonPrefix(with other: String) -> Substring {
        var end = startIndex
        var otherIndex = other.startIndex
        while end < endIndex, otherIndex < other.endIndex, self[end] == other[otherIndex] {
            end = index(after: end)
            otherIndex = other.index(after: otherIndex)
        }
        return self[startIndex..<end]
    }
}

/// Completion for `:command argument` lines from a table, so the REPL declares its commands
/// once and Tab completes both the command name and its arguments.
package struct CommandCompletion: Sendable, Hashable {
    /// One command and the words each of its arguments may be.
    package struct Command: Sendable, Hashable {
        /// The command as typed, including its leading `:`.
        package var name: String
        /// Completions for each argument in turn (`positions[0]` for the first), in the order
        /// they should be listed; an argument with none is free text or a number.
        package var positions: [[String]]
        /// Whether every argument after the last listed one takes its words (`:cart SKU…`).
        package var repeats: Bool
        /// The words of the arguments after a first argument that names a subcommand
        /// (`:cart add SKU`): `subcommands["add"]?[0]` for the one after `add`; nothing past them.
        package var subcommands: [String: [[String]]] = [:]

        /// Declares a command and the words of its first argument.
        package init(_ name: String, arguments: [String] = [], repeats: Bool = false) {
            self.init(name, positions: arguments.isEmpty ? [] : [arguments], repeats: repeats)
        }

        /// Declares a command and the words of each argument.
        package init(_ name: String, positions: [[String]], repeats: Bool = false) {
            self.name = name
            self.positions = positions
            self.repeats = repeats
        }

        /// The words of argument `index` (0 for the first), after the first argument `first`.
        func words(at index: Int, after first: String? = nil) -> [String] {
            if index > 0, let first, let later = subcommands[first] {
                return index - 1 < later.count ? later[index - 1] : []
            }
            if index < positions.count { return positions[index] }
            return repeats ? positions.last ?? [] : []
        }
    }

    /// The commands, in listing order.
    package var commands: [Command]

    /// A table of commands.
    package init(_ commands: [Command]) {
        self.commands = commands
    }

    /// Command names while the first word is typed, then the words of the argument being typed,
    /// for the command the first word names (in full, or by a prefix of one command only).
    package func candidates(for textBeforeCursor: String) -> [String] {
        let words = textBeforeCursor.split(separator: " ", omittingEmptySubsequences: true)
        let endsWithSpace = textBeforeCursor.last == " "
        guard words.count > 1 || (words.count == 1 && endsWithSpace) else { return commands.map(\.name) }
        let argument = words.count - (endsWithSpace ? 1 : 2)
        return command(named: String(words[0]))?.words(at: argument, after: words.count > 1 ? String(words[1]) : nil)
            ?? []
    }

    /// The command `word` names: exactly, or by a prefix only one command's name has.
    private func command(named word: String) -> Command? {
        let word = word.lowercased()
        if let exact = commands.first(where: { $0.name == word }) { return exact }
        let prefixed = commands.filter { $0.name.hasPrefix(word) }
        return prefixed.count == 1 ? prefixed[0] : nil
    }

    /// The same table with `arguments` offered for argument `position` (the first by default)
    /// of the command `name` (added to what it offers already); a name the table does not have
    /// is left out.
    package func adding(arguments: [String], to name: String, at position: Int = 0, repeats: Bool = false)
        -> CommandCompletion
    {
        var table = self
        for index in table.commands.indices where table.commands[index].name == name {
            while table.commands[index].positions.count <= position { table.commands[index].positions.append([]) }
            table.commands[index].positions[position] += arguments
            table.commands[index].repeats = table.commands[index].repeats || repeats
        }
        return table
    }

    /// The same table with `arguments` offered for the argument right after each of the
    /// subcommands `after` of the command `name` (added to what it offers already).
    package func adding(arguments: [String], to name: String, after subcommands: [String]) -> CommandCompletion {
        var table = self
        for index in table.commands.indices where table.commands[index].name == name {
            for word in subcommands {
                var later = table.commands[index].subcommands[word] ?? []
                if later.isEmpty { later = [[]] }
                later[0] += arguments
                table.commands[index].subcommands[word] = later
            }
        }
        return table
    }

    /// This table as a `LineCompleter`.
    package var completer: LineCompleter {
        let table = self
        return { table.candidates(for: $0) }
    }
}
