import CLibedit
import CLibeditShim
import Foundation
import Synchronization

/// A `LineReader` on a terminal, with libedit's line editing, a persistent history and Tab
/// completion. The only file that talks to libedit: everything else sees `LineReader`.
///
/// - Ctrl-D on an empty line → `.endOfInput`; Ctrl-C → `.interrupt`. libedit's own signal
///   handling is off (`EL_SIGNAL 0`): it would re-raise Ctrl-C to the whole process group.
///   Instead the C session installs `SIGINT`/`SIGWINCH` handlers (without `SA_RESTART`) while
///   a reader exists; they replace any earlier handlers, which are restored when the last
///   reader goes away. A Ctrl-C pressed while no read is in progress is dropped.
/// - History lives in a file created with mode 0600 (directories 0700), rewritten after each
///   entered line through a temporary file and `rename(2)`, because libedit's `H_SAVE`
///   truncates in place and a crash would lose the whole history.
/// - The process's `LC_CTYPE` is switched to a UTF-8 locale at creation: a Swift program
///   starts in the "C" locale, where libedit rejects every non-ASCII byte.
///
/// Thread safety: `readLine(prompt:)` must be called from one thread at a time (checked);
/// `printAsync(_:)` and `interrupt()` are safe from any thread. The C session's lock
/// serialises libedit's screen updates with `printAsync`, which is why the class can be
/// `@unchecked Sendable`: it has no Swift-side mutable state besides the atomic flag.
public final class LibeditLineReader: LineReader, @unchecked Sendable {
    /// How to set up the editor.
    public struct Configuration: Sendable {
        /// The name libedit uses for `~/.editrc` sections (not read) and messages.
        public var programName: String
        /// The history file, or nil to keep history in memory only.
        public var historyPath: String?
        /// How many lines the history keeps.
        public var historySize: Int
        /// Supplies Tab completion candidates; nil leaves Tab unbound.
        public var completer: LineCompleter?
        /// A terminfo name to use instead of `$TERM` (tests pin it).
        public var terminalType: String?
        /// The terminal to read keys from.
        public var inputDescriptor: Int32
        /// The terminal to draw on.
        public var outputDescriptor: Int32

        /// A configuration for the process's own terminal by default.
        public init(
            programName: String = "assistant", historyPath: String? = nil, historySize: Int = 1000,
            completer: LineCompleter? = nil, terminalType: String? = nil,
            inputDescriptor: Int32 = STDIN_FILENO, outputDescriptor: Int32 = STDOUT_FILENO
        ) {
            self.programName = programName
            self.historyPath = historyPath
            self.historySize = historySize
            self.completer = completer
            self.terminalType = terminalType
            self.inputDescriptor = inputDescriptor
            self.outputDescriptor = outputDescriptor
        }
    }

    /// What libedit's C callbacks need, reached through `EL_CLIENTDATA`.
    private final class CallbackContext {
        let completer: LineCompleter?
        init(completer: LineCompleter?) { self.completer = completer }
    }

    private let session: OpaquePointer
    private let context: Unmanaged<CallbackContext>
    private let historyPath: String?
    private let reading = Atomic<Bool>(false)

    /// Starts libedit on the configured terminal, or returns nil when it cannot.
    public init?(configuration: Configuration) {
        _ = cle_prepare_utf8_locale()
        let context = Unmanaged.passRetained(CallbackContext(completer: configuration.completer))
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
        self.historyPath = configuration.historyPath

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
        if let path = historyPath, Self.prepareHistoryFile(at: path) {
            _ = cle_history_load(history, path)
        }
    }

    deinit {
        cle_session_close(session)
        context.release()
    }

    // MARK: - LineReader

    /// Edits one line. Non-empty lines go into the history, which is saved at once.
    public func readLine(prompt: String) -> LineReaderEvent {
        precondition(
            reading.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged,
            "LibeditLineReader.readLine(prompt:) called while another read is in progress"
        )
        defer { reading.store(false, ordering: .releasing) }

        cle_session_set_prompt(session, Self.libeditPrompt(prompt))
        var count: Int32 = 0
        var interrupted: Int32 = 0
        guard let raw = cle_session_gets(session, &count, &interrupted) else {
            // The cursor still sits after the prompt or the abandoned input.
            printAsync("\n")
            return interrupted != 0 ? .interrupt : .endOfInput
        }
        var line = String(cString: raw)
        while line.last == "\n" || line.last == "\r" || line.last == "\r\n" { line.removeLast() }
        if !line.allSatisfy(\.isWhitespace) {
            _ = cle_history_enter(cle_session_history(session), line)
            saveHistory()
        }
        return .line(line)
    }

    /// Clears the prompt and partial input, prints `text`, and redraws them.
    public func printAsync(_ text: String) {
        var bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return }
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                cle_session_print_async(session, chars.baseAddress, chars.count)
            }
        }
    }

    /// Makes the read in progress return `.interrupt`, as Ctrl-C would. From any thread.
    public func interrupt() {
        cle_session_interrupt(session)
    }

    // MARK: - Prompt

    /// Brackets each escape sequence in `\1` so libedit (`EL_PROMPT_ESC`) prints it without
    /// counting columns for it, and drops other control characters that would break the
    /// cursor arithmetic.
    static func libeditPrompt(_ prompt: String) -> String {
        var result = String.UnicodeScalarView()
        var scalars = prompt.unicodeScalars[...]
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
            } else if scalar.value >= 0x20, scalar.value != 0x7f, !(0x80...0x9f).contains(scalar.value) {
                result.append(scalar)
            }
        }
        return String(result)
    }

    // MARK: - Completion

    /// The Tab handler. Runs on the reading thread inside `el_gets`, with the session lock held.
    private static func complete(_ editline: OpaquePointer?) -> UInt8 {
        guard let editline, let opaque = cle_context(editline), let session = cle_editline_session(editline),
            let info = el_line(editline)?.pointee, let buffer = info.buffer, let cursor = info.cursor
        else { return UInt8(CC_ERROR) }
        let context = Unmanaged<CallbackContext>.fromOpaque(opaque).takeUnretainedValue()
        guard let completer = context.completer else { return UInt8(CC_ERROR) }
        let before = UnsafeRawBufferPointer(start: buffer, count: cursor - buffer)
        let text = String(decoding: before, as: UTF8.self)
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

    /// Writes the whole history to a temporary file created 0600, then renames it over the
    /// history file, so the file is always either the old or the new history.
    private func saveHistory() {
        guard let path = historyPath else { return }
        let temporary = "\(path).\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return }
        _ = fchmod(descriptor, 0o600)
        guard let file = fdopen(descriptor, "w") else {
            close(descriptor)
            unlink(temporary)
            return
        }
        let written = cle_history_save_fp(cle_session_history(session), file)
        // On disk before the rename, so a power cut cannot leave the new name on empty data.
        let flushed = fflush(file) == 0 && fsync(descriptor) == 0
        fclose(file)
        if written >= 0, flushed, rename(temporary, path) == 0 { return }
        unlink(temporary)
    }
}
