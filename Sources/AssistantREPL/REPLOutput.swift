import ShoppingAssistant

/// Where the REPL writes. Everything goes through one sink so that output printed while the
/// user types is redrawn correctly by the line reader, and so tests can capture it.
///
/// Once told the width (`fitLines(to:)`), every line it prints fits in it: a wider line is
/// wrapped (`TextLayout.fit`), and one-line contexts truncate (`singleLine`).
public final class REPLOutput: Sendable {
    private let sink: @Sendable (String) -> Void
    private let captured = Locked<[String]>([])
    private let observer = Locked<(@Sendable (String) -> Void)?>(nil)
    private let layoutWidth = Locked<(@Sendable () -> Int)?>(nil)
    public let style: TerminalStyle

    /// - Parameter sink: receives whole lines without a trailing newline.
    public init(style: TerminalStyle = .plain, sink: @escaping @Sendable (String) -> Void) {
        self.style = style
        self.sink = sink
    }

    /// An output that only records, for tests.
    public static func capturing() -> REPLOutput {
        REPLOutput(style: .plain) { _ in }
    }

    /// Lines written so far.
    public var lines: [String] { captured.withLock { $0 } }

    /// Lays every line out for the width `width` returns when the line is printed, so a
    /// resized terminal is followed from the next line on. Without it lines are printed as
    /// they come.
    public func fitLines(to width: @escaping @Sendable () -> Int) {
        layoutWidth.withLock { $0 = width }
    }

    /// The width lines are laid out for, if one was set.
    public var width: Int? { layoutWidth.withLock { $0 }?() }

    public func line(_ text: String = "") {
        for piece in fitted(text) { emit(piece) }
    }

    /// Sees every line except echoes: how a recorder captures a session.
    public func setObserver(_ observe: (@Sendable (String) -> Void)?) {
        observer.withLock { $0 = observe }
    }

    /// Repeats the user's input in piped mode; not part of a session's output. Continuation
    /// lines are indented under the `> ` of the echo.
    public func echo(_ text: String) {
        guard let width else { return sink(text) }
        for piece in TextLayout.fit(text, width: width, hangingIndent: 2) { sink(piece) }
    }

    public func line(_ role: TerminalStyle.Role, _ text: String) {
        for piece in fitted(text) { emit(style.apply(role, piece)) }
    }

    /// A line that must stay one line: `text` came from a server (it is sanitised) and is
    /// truncated with `…` between `prefix` and `suffix` when the whole does not fit in `width`
    /// (by default the output's width).
    public func singleLine(
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
    public func untrusted(_ text: String, prefix: String = "", role: TerminalStyle.Role? = nil, width: Int? = nil) {
        let clean = TerminalSanitizer.sanitize(text, newlines: .keep)
        let prefixWidth = DisplayWidth.of(prefix)
        let indent = String(repeating: " ", count: prefixWidth)
        let print = { (body: String) in if let role { self.line(role, body) } else { self.line(body) } }
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

    private func emit(_ text: String) {
        captured.withLock { $0.append(text) }
        sink(text)
        observer.withLock { $0 }?(text)
    }

    private func fitted(_ text: String) -> [String] {
        guard let width else { return [text] }
        return TextLayout.fit(text, width: width)
    }
}
