import CLibedit
import CLibeditShim
import Foundation
import ShoppingAssistant
import Synchronization

/// A `LineReader` on a terminal, with libedit's line editing, a persistent history and Tab
/// completion. The only file that talks to libedit: everything else sees `LineReader`.
///
/// - Ctrl-D on an empty line → `.endOfInput`; Ctrl-C → `.interrupt`. libedit's own signal
///   handling is off (`EL_SIGNAL 0`): it would re-raise Ctrl-C to the whole process group.
///   Instead the C session installs `SIGINT`/`SIGWINCH` handlers (without `SA_RESTART`) while
///   a reader exists; they replace any earlier handlers, which are restored when the last
///   reader goes away. A Ctrl-C pressed while no read is in progress ends a waiting
///   `nextInterrupt()` (the REPL stops the command that runs), and is dropped otherwise.
/// - A terminal without cursor control (`hasCursorControl`, from terminfo) gets no escape
///   sequence from the session: output printed while a line is typed goes below it.
/// - With a hinter, the arguments a command still takes show at the right end of the input
///   row (libedit's right prompt), plain: libedit misplaces escape sequences there.
/// - `SIGWINCH` redraws the prompt and the input for the new width (the C session moves back to
///   the prompt's first row, as the terminal re-flowed it or not, clears below and tells
///   libedit, `el_resize`), shortens a prompt that would take more than the width allows, and
///   then tells the resize handler.
/// - Ctrl-R searches the history incrementally (`HistorySearch`), with a prompt that says so.
/// - History lives in a file created with mode 0600 (directories 0700); each entered line is
///   appended to it under a lock (`HistoryFile`), so REPLs running at once keep each other's
///   lines, and a crash loses at most the line being written.
/// - The process's `LC_CTYPE` is switched to a UTF-8 locale at creation: a Swift program
///   starts in the "C" locale, where libedit rejects every non-ASCII byte.
///
/// Thread safety: `readLine(prompt:)` must be called from one thread at a time (checked);
/// `printAsync(_:)` and `interrupt()` are safe from any thread. The C session's lock
/// serialises libedit's screen updates with `printAsync`, which is why the class can be
/// `@unchecked Sendable`: it has no Swift-side mutable state besides the atomic flag.
package final class LibeditLineReader: LineReader, @unchecked Sendable {
    /// How to set up the editor.
    package struct Configuration: Sendable {
        /// The name libedit uses for `~/.editrc` sections (not read) and messages.
        package var programName: String
        /// The history file, or nil to keep history in memory only.
        package var historyPath: String?
        /// How many lines the history keeps.
        package var historySize: Int
        /// Supplies Tab completion candidates; nil leaves Tab unbound.
        package var completer: LineCompleter?
        /// Supplies the hint shown at the right end of the input row while a line is typed
        /// (the arguments a command takes); nil shows none.
        package var hinter: LineHinter?
        /// A terminfo name to use instead of `$TERM` (tests pin it).
        package var terminalType: String?
        /// The terminal to read keys from.
        package var inputDescriptor: Int32
        /// The terminal to draw on.
        package var outputDescriptor: Int32
        /// Whether the terminal re-wraps wrapped lines when resized (tmux, VTE) or keeps its
        /// rows (xterm); nil when unknown. By default from the environment
        /// (`terminalReflows(environment:)`).
        package var terminalReflows: Bool?

        /// A configuration for the process's own terminal by default.
        package init(
            programName: String = "assistant", historyPath: String? = nil, historySize: Int = 1000,
            completer: LineCompleter? = nil, hinter: LineHinter? = nil, terminalType: String? = nil,
            inputDescriptor: Int32 = STDIN_FILENO, outputDescriptor: Int32 = STDOUT_FILENO,
            terminalReflows: Bool? = LibeditLineReader.terminalReflows(
                environment: ProcessInfo.processInfo.environment)
        ) {
            self.programName = programName
            self.historyPath = historyPath
            self.historySize = historySize
            self.completer = completer
            self.hinter = hinter
            self.terminalType = terminalType
            self.inputDescriptor = inputDescriptor
            self.outputDescriptor = outputDescriptor
            self.terminalReflows = terminalReflows
        }
    }

    /// What the environment says about the terminal's resizing: tmux (`TMUX`), VTE
    /// (`VTE_VERSION`) and kitty re-wrap wrapped lines, xterm (`XTERM_VERSION`, unless inside
    /// tmux) and the Linux console keep their rows; nil for anything else.
    package static func terminalReflows(environment: [String: String]) -> Bool? {
        func has(_ name: String) -> Bool { !(environment[name] ?? "").isEmpty }
        if has("TMUX") || has("VTE_VERSION") || has("KITTY_WINDOW_ID") { return true }
        if has("XTERM_VERSION") || environment["TERM"] == "linux" { return false }
        return nil
    }

    /// What libedit's C callbacks need, reached through `EL_CLIENTDATA`. Used on the reading
    /// thread, and by the resize callback on a printing thread, always under the session lock.
    private final class CallbackContext: Sendable {
        let completer: LineCompleter?
        let hinter: LineHinter?
        /// The prompt as the REPL asked for it (or the search's), before it is fitted to the
        /// width, so a resize can fit it again.
        let prompt = Locked("")
        /// Boxed: a bare closure in a `Locked` gets deeper by two thunks with every access.
        let resizeHandler = Locked<ResizeHandler?>(nil)
        let resizes = Locked<UInt64>(0)
        /// Enter was pressed: the hint is taken off the line before it is accepted, so the
        /// screen keeps what was typed, not what was still to come.
        let accepting = Atomic<Bool>(false)

        init(completer: LineCompleter?, hinter: LineHinter?) {
            self.completer = completer
            self.hinter = hinter
        }
    }

    private let session: OpaquePointer
    private let context: Unmanaged<CallbackContext>
    private let historyFile: HistoryFile?
    /// The line last put in the history: libedit keeps no two equal lines in a row
    /// (`H_SETUNIQUE`), and neither does the file. Only the reading thread uses it.
    private let lastEntered = Locked<String?>(nil)
    private let reading = Atomic<Bool>(false)
    /// Numbers the waits for Ctrl-C (`nextInterrupt()`), so a late cancellation of one wait
    /// never ends the next.
    private let waits = Atomic<UInt32>(0)

    /// Whether the terminal can move the cursor up and clear below it. Without that (`TERM=dumb`)
    /// the reader writes no escape sequence at all: output printed while a line is typed goes
    /// on lines of its own below it, and no hints are drawn. Colour is the caller's: it should
    /// print none either.
    package let hasCursorControl: Bool

    /// Starts libedit on the configured terminal, or returns nil when it cannot.
    package init?(configuration: Configuration) {
        _ = cle_prepare_utf8_locale()
        let context = Unmanaged.passRetained(
            CallbackContext(completer: configuration.completer, hinter: configuration.hinter))
        guard
            let session = cle_session_open(
                configuration.programName, configuration.inputDescriptor, configuration.outputDescriptor,
                configuration.terminalType, context.toOpaque()
            )
        else {
            context.release()
            return nil
        }
        self.session = session
        self.context = context
        hasCursorControl = cle_session_has_cursor_control(session) != 0

        let editline = cle_session_editline(session)
        let history = cle_session_history(session)
        _ = cle_history_set_size(history, Int32(clamping: configuration.historySize))
        _ = cle_history_set_unique(history, 1)
        if configuration.completer != nil {
            // EL_ADDFN must come before EL_BIND, or the binding names an unknown function.
            _ = cle_add_function(editline, "assistant-complete", "Complete a command") { editline, _ in
                LibeditLineReader.complete(editline)
            }
            _ = cle_bind(editline, "^I", "assistant-complete")
        }
        // Hints need a redraw in place: none on a terminal without cursor control.
        if configuration.hinter != nil, hasCursorControl {
            cle_session_set_hint_function(session) { _, line, opaque in
                guard let line, let opaque else { return nil }
                let context = Unmanaged<CallbackContext>.fromOpaque(opaque).takeUnretainedValue()
                guard !context.accepting.load(ordering: .relaxed) else { return nil }
                let hint = context.hinter?(String(cString: line)) ?? ""
                return hint.isEmpty ? nil : strdup(LibeditLineReader.libeditPrompt(hint))
            }
            _ = cle_add_function(editline, "assistant-accept", "Accept the line without its hint") { editline, _ in
                LibeditLineReader.accept(editline)
            }
            // Enter arrives as ^M or, through the terminal's CR-to-NL, as ^J; a sequence no key
            // sends is left bound to libedit's own accept, for the accept to hand over to.
            _ = cle_bind(editline, "^M", "assistant-accept")
            _ = cle_bind(editline, "^J", "assistant-accept")
            _ = cle_bind(editline, Self.acceptSequence, "ed-newline")
            _ = cle_add_function(editline, "assistant-space", "Insert a space and show the hint") { editline, _ in
                LibeditLineReader.space(editline)
            }
            _ = cle_bind(editline, " ", "assistant-space")
        }
        _ = cle_add_function(editline, "assistant-search-history", "Search the history") { editline, _ in
            LibeditLineReader.searchHistory(editline)
        }
        _ = cle_bind(editline, "^R", "assistant-search-history")
        cle_session_set_reflow(session, configuration.terminalReflows.map { $0 ? 1 : 0 } ?? -1)
        cle_session_set_resize_handler(session) { session, columns, opaque in
            guard let session, let opaque else { return }
            let context = Unmanaged<CallbackContext>.fromOpaque(opaque).takeUnretainedValue()
            let prompt = context.prompt.withLock { $0 }
            cle_session_set_prompt(session, LibeditLineReader.libeditPrompt(prompt, columns: Int(columns)))
            let sequence = context.resizes.withLock {
                $0 += 1
                return $0
            }
            context.resizeHandler.withLock { $0 }?.resized(TerminalResize(columns: Int(columns), sequence: sequence))
        }
        if let path = configuration.historyPath {
            let loaded = Self.prepareHistoryFile(at: path) && cle_history_load(history, path) >= 0
            historyFile = HistoryFile(
                path: path, size: configuration.historySize, loadedLines: loaded ? HistoryFile.countLines(at: path) : 0)
        } else {
            historyFile = nil
        }
    }

    deinit {
        cle_session_close(session)
        context.release()
    }

    // MARK: - LineReader

    /// Edits one line. Non-empty lines go into the history, which is saved at once.
    package func readLine(prompt: String) -> LineReaderEvent {
        precondition(
            reading.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged,
            "LibeditLineReader.readLine(prompt:) called while another read is in progress"
        )
        defer { reading.store(false, ordering: .releasing) }

        context.takeUnretainedValue().prompt.withLock { $0 = prompt }
        let columns = Int(cle_get_columns(cle_session_editline(session)))
        cle_session_set_prompt(session, Self.libeditPrompt(prompt, columns: columns))
        var count: Int32 = 0
        var interrupted: Int32 = 0
        context.takeUnretainedValue().accepting.store(false, ordering: .relaxed)
        guard let raw = cle_session_gets(session, &count, &interrupted) else {
            // The cursor still sits after the prompt or the abandoned input.
            printAsync("\n")
            return interrupted != 0 ? .interrupt : .endOfInput
        }
        var line = String(cString: raw)
        while line.last == "\n" || line.last == "\r" || line.last == "\r\n" { line.removeLast() }
        if !line.allSatisfy(\.isWhitespace), lastEntered.withLock({ $0 }) != line {
            lastEntered.withLock { $0 = line }
            _ = cle_history_enter(cle_session_history(session), line)
            historyFile?.append(line)
        }
        return .line(line)
    }

    /// Clears the prompt and partial input, prints `text`, and redraws them.
    package func printAsync(_ text: String) {
        var bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return }
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                cle_session_print_async(session, chars.baseAddress, chars.count)
            }
        }
    }

    /// Waits on a thread of its own until the user presses Ctrl-C while no line is read (a
    /// command runs): true then; false once the calling task is cancelled. Must not overlap a
    /// read: the caller cancels it and waits for it to return before reading again.
    package func nextInterrupt() async -> Bool {
        let ticket = waits.add(1, ordering: .relaxed).newValue
        let session = SessionPointer(session)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    withExtendedLifetime(self) {
                        continuation.resume(returning: cle_session_wait_for_interrupt(session.pointer, ticket) == 1)
                    }
                }
                thread.name = "assistant.interrupt-wait"
                thread.start()
            }
        } onCancel: {
            cle_session_cancel_wait(session.pointer, ticket)
        }
    }

    /// The C session, handed to the thread that waits and to the cancellation handler; both
    /// run while the reader (which owns it) is alive.
    private struct SessionPointer: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
    }

    /// Makes the read in progress return `.interrupt`, as Ctrl-C would. From any thread.
    package func interrupt() {
        cle_session_interrupt(session)
    }

    /// The line editor pushes `text` as typed keys when it next reads.
    @discardableResult
    package func offerNextLine(_ text: String) -> Bool {
        cle_session_set_next_input(session, text)
        return true
    }

    /// Called after each `SIGWINCH`, once the prompt and input are drawn for the new width.
    package func setResizeHandler(_ handler: (@Sendable (TerminalResize) -> Void)?) {
        context.takeUnretainedValue().resizeHandler.withLock { $0 = handler.map(ResizeHandler.init) }
    }

    // MARK: - Prompt

    /// The widest prompt for a terminal `columns` wide: the input keeps at least half of a
    /// narrow terminal's width, and 20 columns of a wide one.
    static func promptLimit(columns: Int) -> Int {
        max(1, columns - min(20, columns / 2))
    }

    /// `prompt` shortened with `…` to `promptLimit(columns:)`, keeping its closing `]> `; a
    /// shortened prompt loses its colours.
    static func fittedPrompt(_ prompt: String, columns: Int) -> String {
        let limit = promptLimit(columns: columns)
        guard DisplayWidth.of(prompt) > limit else { return prompt }
        let plain = TerminalSanitizer.sanitize(prompt)
        var suffix = String.UnicodeScalarView()
        for scalar in plain.unicodeScalars.reversed() {
            guard suffix.count < 3, "]>) ".unicodeScalars.contains(scalar) else { break }
            suffix.insert(scalar, at: suffix.startIndex)
        }
        let head = String(plain.unicodeScalars.dropLast(suffix.count))
        let room = limit - suffix.count
        guard room >= 2 else { return TextLayout.truncate(plain, to: limit) }
        return TextLayout.truncate(head, to: room) + String(suffix)
    }

    /// The prompt as libedit gets it: fitted to `columns` when given, and with each escape
    /// sequence bracketed in `\1` so libedit (`EL_PROMPT_ESC`) prints it without counting
    /// columns for it; other control characters, which would break the cursor arithmetic,
    /// are dropped.
    static func libeditPrompt(_ prompt: String, columns: Int? = nil) -> String {
        var result = String.UnicodeScalarView()
        var scalars = (columns.map { fittedPrompt(prompt, columns: $0) } ?? prompt).unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            if scalar == "\u{1b}" {
                var sequence = String.UnicodeScalarView([scalar])
                if scalars.first == "[" {
                    sequence.append(scalars.removeFirst())
                    while let next = scalars.popFirst() {
                        sequence.append(next)
                        if (0x40...0x7e).contains(next.value) { break }
                    }
                }
                result.append("\u{1}")
                result.append(contentsOf: sequence)
                result.append("\u{1}")
            } else if !DisplayWidth.isControl(scalar) {
                result.append(scalar)
            }
        }
        return String(result)
    }

    // MARK: - Completion

    /// The Tab handler. Runs on the reading thread inside `el_gets`, with the session lock held.
    private static func complete(_ editline: OpaquePointer?) -> UInt8 {
        guard let editline, let opaque = cle_context(editline), let session = cle_editline_session(editline),
            let text = typedText(editline, toCursor: true)
        else { return UInt8(CC_ERROR) }
        let context = Unmanaged<CallbackContext>.fromOpaque(opaque).takeUnretainedValue()
        guard let completer = context.completer else { return UInt8(CC_ERROR) }
        switch LineCompletion.resolve(textBeforeCursor: text, candidates: completer(text)) {
        case .none:
            return UInt8(CC_ERROR)
        case .insert(let insertion):
            return el_insertstr(editline, insertion) == 0 ? UInt8(CC_REFRESH) : UInt8(CC_ERROR)
        case .list(let matches):
            let listing = LineCompletion.columns(matches, width: Int(cle_get_columns(editline)))
            let text = listing.joined(separator: "\n") + "\n"
            text.withCString { cle_session_print_async(session, $0, strlen($0)) }
            return UInt8(CC_REFRESH)
        }
    }

    /// The line in libedit's buffer as typed (its bytes), up to the cursor or whole.
    private static func typedText(_ editline: OpaquePointer, toCursor: Bool) -> String? {
        guard let info = el_line(editline)?.pointee, let buffer = info.buffer,
            let end = toCursor ? info.cursor : info.lastchar
        else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: buffer, count: end - buffer), as: UTF8.self)
    }

    // MARK: - Hints

    /// Enter, where hints are drawn: a line that shows a hint is drawn again without it, then
    /// accepted as libedit accepts any line (its `ed-newline`), so the hint does not stay
    /// beside the line in the scrollback.
    private static func accept(_ editline: OpaquePointer?) -> UInt8 {
        guard let editline, let opaque = cle_context(editline), let session = cle_editline_session(editline) else {
            return UInt8(CC_ERROR)
        }
        let context = Unmanaged<CallbackContext>.fromOpaque(opaque).takeUnretainedValue()
        if let hinter = context.hinter, let typed = typedText(editline, toCursor: false), !hinter(typed).isEmpty {
            context.accepting.store(true, ordering: .relaxed)
            cle_session_clear_edit_area(session)
            _ = cle_refresh(editline)
        }
        el_push(editline, Self.pushedAccept)
        return UInt8(CC_NORM)
    }

    /// A key sequence no terminal sends, bound to `ed-newline` (libedit's spelling, then the
    /// bytes pushed).
    private static let acceptSequence = "\\e[5999~"
    private static let pushedAccept = "\u{1b}[5999~"

    /// The space key when hints are on: inserts the space, and asks libedit for a full redraw
    /// when no hint is showing, because only a full redraw draws the right prompt (libedit adds
    /// a character typed at the end of the line without one while the right prompt is empty).
    private static func space(_ editline: OpaquePointer?) -> UInt8 {
        guard let editline else { return UInt8(CC_ERROR) }
        guard el_insertstr(editline, " ") == 0 else { return UInt8(CC_ERROR) }
        return UInt8(CC_REFRESH)
    }

    // MARK: - History search

    /// The Ctrl-R handler: runs the search key by key inside `el_gets` (the session lock is
    /// held, and released while it waits for a key), then leaves the line chosen in the editor.
    /// Enter runs the line, Ctrl-G restores the line as it was, Escape or any other editing key
    /// ends the search on the line found (the key then does what it always does).
    private static func searchHistory(_ editline: OpaquePointer?) -> UInt8 {
        guard let editline, let opaque = cle_context(editline), let session = cle_editline_session(editline) else {
            return UInt8(CC_ERROR)
        }
        let context = Unmanaged<CallbackContext>.fromOpaque(opaque).takeUnretainedValue()
        let original = EditedLine(editline)
        let normalPrompt = context.prompt.withLock { $0 }
        var search = HistorySearch(entries: historyEntries(cle_session_history(session)))

        func show(_ prompt: String, _ line: EditedLine) {
            cle_session_clear_edit_area(session)
            context.prompt.withLock { $0 = prompt }
            cle_session_set_prompt(session, libeditPrompt(prompt, columns: Int(cle_get_columns(editline))))
            line.replace(in: editline)
            _ = cle_refresh(editline)
        }
        func found() -> EditedLine { search.match.map { EditedLine(text: $0) } ?? original }

        show(search.prompt, original)
        while true {
            var key: wchar_t = 0
            let status = el_wgetc(editline, &key)
            guard status == 1, let scalar = Unicode.Scalar(UInt32(bitPattern: key)) else {
                // Ctrl-C (the session marks the read interrupted) or the end of input.
                show(normalPrompt, original)
                return UInt8(CC_EOF)
            }
            switch scalar.value {
            case 0x12:  // Ctrl-R
                search.older()
            case 0x07:  // Ctrl-G
                show(normalPrompt, original)
                return UInt8(CC_REFRESH)
            case 0x0d, 0x0a:
                show(normalPrompt, found())
                return UInt8(CC_NEWLINE)
            case 0x08, 0x7f:
                search.deleteBackward()
            case 0x1b:
                // An arrow or another key sequence goes on to libedit whole; Escape alone ends.
                let sequence = cle_session_input_pending(session) != 0
                show(normalPrompt, found())
                if sequence { push(key, to: editline) }
                return UInt8(CC_REFRESH)
            case 0..<0x20:
                show(normalPrompt, found())
                push(key, to: editline)
                return UInt8(CC_REFRESH)
            default:
                search.type(String(Character(scalar)))
            }
            show(search.prompt, found())
        }
    }

    /// Hands `key` back to libedit, which reads it before the terminal's next one.
    private static func push(_ key: wchar_t, to editline: OpaquePointer) {
        var keys: [wchar_t] = [key, 0]
        keys.withUnsafeMutableBufferPointer { el_wpush(editline, $0.baseAddress) }
    }

    /// The history's lines, newest first, without their trailing newlines.
    private static func historyEntries(_ history: OpaquePointer?) -> [String] {
        final class Collector {
            var lines: [String] = []
        }
        let collector = Collector()
        withExtendedLifetime(collector) {
            _ = cle_history_each(history, Unmanaged.passUnretained(collector).toOpaque()) { opaque, line in
                guard let opaque, let line else { return }
                var text = String(cString: line)
                while text.last == "\n" || text.last == "\r" || text.last == "\r\n" { text.removeLast() }
                Unmanaged<Collector>.fromOpaque(opaque).takeUnretainedValue().lines.append(text)
            }
        }
        return collector.lines
    }

    // MARK: - History file

    /// Creates the history's directories (0700) and tightens an existing file to 0600.
    /// Returns true when the file exists and can be loaded.
    private static func prepareHistoryFile(at path: String) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        var current = ""
        for component in directory.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0, errno != EEXIST { return false }
        }
        guard access(path, F_OK) == 0 else { return false }
        _ = chmod(path, 0o600)
        return true
    }
}

/// The line in libedit's buffer and the cursor's place in it, in characters as libedit
/// counts them (code points).
private struct EditedLine {
    var text: [wchar_t]
    var cursor: Int

    init(text: String) {
        self.text = text.unicodeScalars.map { wchar_t(bitPattern: $0.value) }
        cursor = self.text.count
    }

    init(_ editline: OpaquePointer) {
        guard let info = el_wline(editline)?.pointee, let buffer = info.buffer else {
            text = []
            cursor = 0
            return
        }
        text = Array(UnsafeBufferPointer(start: buffer, count: info.lastchar - buffer))
        cursor = info.cursor - buffer
    }

    /// Puts this line into libedit's buffer, without drawing it.
    func replace(in editline: OpaquePointer) {
        if let info = el_wline(editline)?.pointee, let buffer = info.buffer {
            let after = info.lastchar - info.cursor
            if after > 0 { _ = el_cursor(editline, Int32(clamping: after)) }
            let length = info.lastchar - buffer
            if length > 0 { el_deletestr(editline, Int32(clamping: length)) }
        }
        var terminated = text + [0]
        _ = terminated.withUnsafeMutableBufferPointer { el_winsertstr(editline, $0.baseAddress) }
        let back = text.count - cursor
        if back > 0 { _ = el_cursor(editline, -Int32(clamping: back)) }
    }
}

/// Whom a resize is reported to.
struct ResizeHandler: Sendable {
    let resized: @Sendable (TerminalResize) -> Void
}
