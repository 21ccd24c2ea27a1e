import ShoppingAssistant

/// Where the REPL writes. Everything goes through one sink so that output printed while the
/// user types is redrawn correctly by the line reader, and so tests can capture it.
///
/// It keeps nothing: a line goes to the sink and, while one is set, to the observer (how a
/// recording captures a session), and is forgotten. A session that runs for days holds no
/// transcript of what it printed.
///
/// Once told the width (`fitLines(to:)`), every line it prints fits in it: a wider line is
/// wrapped (`TextLayout.fit`), and one-line contexts truncate (`singleLine`).
///
/// An output made with `init(style:printLines:)` (a terminal's) hands each printed item — a
/// wrapped line, a whole redraw of the chat (`grouped(_:)`) — to its sink at once, so the line
/// reader clears and redraws the prompt once per item rather than once per row; on a terminal
/// without cursor control, where the prompt cannot be cleared, that keeps a carousel's rows
/// together instead of a prompt between each two. What an observer (a recording) and
/// `capturing()` see is never grouped: one line at a time, as it is printed.
package final class REPLOutput: Sendable {
    private let sink: @Sendable ([String]) -> Void
    /// Whether the sink takes groups of lines (`grouped(_:)`); else it gets them one by one.
    private let groupsLines: Bool
    // Boxed: a bare closure in a `Locked` gets deeper by two thunks with every access, and
    // these are called for every line.
    private let observer = Locked<Observer?>(nil)
    private let layoutWidth = Locked<LayoutWidth?>(nil)

    private struct Observer: Sendable { let observe: @Sendable (String) -> Void }
    private struct LayoutWidth: Sendable { let width: @Sendable () -> Int }
    /// Only an output made by `capturing()` (for tests) keeps its lines.
    private let captured: Locked<[String]>?
    /// Colours on a terminal, none in pipes and transcripts.
    package let style: TerminalStyle

    /// - Parameter sink: receives whole lines without a trailing newline.
    package init(style: TerminalStyle = .plain, sink: @escaping @Sendable (String) -> Void) {
        self.style = style
        self.sink = { lines in lines.forEach(sink) }
        groupsLines = false
        captured = nil
    }

    /// An output whose sink receives the lines of each printed item together (whole lines
    /// without trailing newlines), for a terminal's line reader.
    package init(style: TerminalStyle = .plain, printLines: @escaping @Sendable ([String]) -> Void) {
        self.style = style
        sink = printLines
        groupsLines = true
        captured = nil
    }

    private init(capturingWith style: TerminalStyle) {
        self.style = style
        sink = { _ in }
        groupsLines = false
        captured = Locked([])
    }

    /// Lines printed inside `grouped(_:)` by the task that called it, for one sink call.
    private final class Group: Sendable {
        let owner: ObjectIdentifier
        private let state = Locked<(open: Bool, lines: [String])>((true, []))

        init(owner: ObjectIdentifier) { self.owner = owner }

        /// Keeps `lines` for the group's end; false when the group ended already (a task that
        /// outlived it, such as a timer started inside it, prints on its own).
        func add(_ lines: [String]) -> Bool {
            state.withLock { state in
                guard state.open else { return false }
                state.lines += lines
                return true
            }
        }

        func close() -> [String] {
            state.withLock { state in
                state.open = false
                defer { state.lines = [] }
                return state.lines
            }
        }
    }

    @TaskLocal private static var group: Group?

    /// Runs `body`, handing everything it prints (in this task) to the sink at once when it
    /// ends: one redraw of the prompt for a whole chat update. Other tasks print as usual.
    package func grouped<T: Sendable>(_ body: () async -> T) async -> T {
        // Inside a group of this output already: its lines are part of that one.
        guard groupsLines, Self.group?.owner != ObjectIdentifier(self) else { return await body() }
        let group = Group(owner: ObjectIdentifier(self))
        let result = await Self.$group.withValue(group) { await body() }
        let lines = group.close()
        if !lines.isEmpty { sink(lines) }
        return result
    }

    /// An output that keeps every line it prints, for tests; the REPL's own never does.
    package static func capturing(style: TerminalStyle = .plain) -> REPLOutput {
        REPLOutput(capturingWith: style)
    }

    /// The lines a `capturing()` output printed so far; empty for any other.
    package var lines: [String] { captured?.withLock { $0 } ?? [] }

    /// Lays every line out for the width `width` returns when the line is printed, so a
    /// resized terminal is followed from the next line on. Without it lines are printed as
    /// they come.
    package func fitLines(to width: @escaping @Sendable () -> Int) {
        layoutWidth.withLock { $0 = LayoutWidth(width: width) }
    }

    /// The width lines are laid out for, if one was set.
    package var width: Int? { layoutWidth.withLock { $0 }?.width() }

    /// Prints one line of the session's output.
    package func line(_ text: String = "") {
        emit(fitted(text))
    }

    /// Sees every line except echoes from now on, plain (no colour or other escapes), until
    /// replaced or cleared: how a recorder captures a session. Lines printed before it was set
    /// are not replayed to it.
    package func setObserver(_ observe: (@Sendable (String) -> Void)?) {
        observer.withLock { $0 = observe.map(Observer.init) }
    }

    /// Repeats the user's input in piped mode; not part of a session's output. Continuation
    /// lines are indented under the `> ` of the echo.
    package func echo(_ text: String) {
        guard let width else { return sink([text]) }
        sink(TextLayout.fit(text, width: width, hangingIndent: 2))
    }

    /// A line outside any step of the session, such as the farewell at the end of input:
    /// printed, never observed, so a recording ends with its last step's own output.
    package func aside(_ role: TerminalStyle.Role, _ text: String) {
        sink(fitted(text).map { style.apply(role, $0) })
    }

    /// Prints one line in the look of `role`.
    package func line(_ role: TerminalStyle.Role, _ text: String) {
        emit(fitted(text).map { style.apply(role, $0) })
    }

    /// An engine log message, sanitised (it may quote server text) and wrapped, never cut, so
    /// the cause of a failure is on screen at any width: errors as `[error] …`, the rest as dim
    /// notes, continuation lines indented under the text. Which messages arrive is the
    /// logger's level (`--log-level`). Only a message longer than `logLimit` bytes (a debug
    /// line quoting a large body) is shortened, and then says how many bytes it left out.
    package func log(_ level: AssistantLogLevel, _ message: String) {
        let text = Self.capped(message, limit: Self.logLimit)
        switch level {
        case .error: untrusted(text, prefix: "[error] ", role: .error, width: width)
        case .info: untrusted(text, prefix: "note: ", role: .dim, width: width)
        case .debug: untrusted(text, prefix: "debug: ", role: .dim, width: width)
        case .none: break
        }
    }

    /// The most of one log message printed, in UTF-8 bytes: far more than any note or error,
    /// and more than the engine quotes of a body (4 KB), so only something unusual is cut.
    static let logLimit = 64 * 1024

    /// `text` when it has at most `limit` UTF-8 bytes; else its first whole characters within
    /// the limit and a statement of how many bytes were left out.
    static func capped(_ text: String, limit: Int) -> String {
        let total = text.utf8.count
        guard total > limit else { return text }
        var kept = 0
        var end = text.startIndex
        for index in text.indices {
            let next = text.index(after: index)
            let size = text.utf8.distance(from: index, to: next)
            guard kept + size <= limit else { break }
            kept += size
            end = next
        }
        return String(text[..<end]) + " … (\(total - kept) more bytes not shown)"
    }

    /// A line that must stay one line: `text` came from a server (it is sanitised) and is
    /// truncated with `…` between `prefix` and `suffix` when the whole does not fit in `width`
    /// (by default the output's width).
    package func singleLine(
        _ role: TerminalStyle.Role? = nil, prefix: String = "", _ text: String, suffix: String = "",
        width: Int? = nil
    ) {
        let clean = TerminalSanitizer.sanitize(text)
        let body =
            (width ?? self.width).map { TextLayout.singleLine(prefix: prefix, clean, suffix: suffix, width: $0) }
            ?? prefix + clean + suffix
        if let role { line(role, body) } else { line(body) }
    }

    /// The fewest columns wrapped text is given behind its prefix; with less, it goes below.
    static let minimumRoom = 12

    /// Text that came from a server, a transcript or a catalogue: sanitised before printing,
    /// and, given a width, wrapped at word boundaries with continuation lines indented under
    /// the prefix, or, when fewer than 12 columns are left behind the prefix, on lines of its
    /// own below it (without a width, a line wider than the output's is still fitted to it).
    /// A `frame` prefix (a box's `│  `) starts the continuation lines too, so the box stays
    /// whole however the text wraps.
    package func untrusted(
        _ text: String, prefix: String = "", frame: Bool = false, role: TerminalStyle.Role? = nil, width: Int? = nil
    ) {
        let clean = TerminalSanitizer.sanitize(text, newlines: .keep)
        let prefixWidth = DisplayWidth.of(prefix)
        let indent = frame ? prefix : String(repeating: " ", count: prefixWidth)
        // All of it in one item: the rows of one text stay together on the terminal.
        var rows: [String] = []
        defer {
            emit(rows.flatMap { body in fitted(body).map { piece in role.map { style.apply($0, piece) } ?? piece } })
        }
        let print = { (body: String) in rows.append(body) }
        for part in clean.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let width else {
                print(prefix + part)
                continue
            }
            let room = width - prefixWidth
            guard room >= Self.minimumRoom else {
                // Too narrow for text behind the prefix: the text goes under it, indented.
                print(prefix)
                for line in TextLayout.wrap(String(part), width: width - 2) { print("  " + line) }
                continue
            }
            let wrapped = TextLayout.wrap(String(part), width: room)
            for (index, line) in (wrapped.isEmpty ? [String(part)] : wrapped).enumerated() {
                print((index == 0 ? prefix : indent) + line)
            }
        }
    }

    private func emit(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        captured?.withLock { $0 += lines }
        if let observe = observer.withLock({ $0 })?.observe {
            // Colours are the terminal's look, not the session's output: the observer (a
            // recording) gets the line without them. Everything else in it is sanitised already.
            for text in lines { observe(style == .plain ? text : TerminalSanitizer.sanitize(text)) }
        }
        if groupsLines, let group = Self.group, group.owner == ObjectIdentifier(self), group.add(lines) { return }
        sink(lines)
    }

    private func fitted(_ text: String) -> [String] {
        guard let width else { return [text] }
        return TextLayout.fit(text, width: width)
    }
}
