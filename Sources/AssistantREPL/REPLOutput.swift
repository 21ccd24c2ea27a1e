import ShoppingAssistant

/// Where the REPL writes. Everything goes through one sink so that output printed while the
/// user types is redrawn correctly by the line reader, and so tests can capture it.
public final class REPLOutput: Sendable {
    private let sink: @Sendable (String) -> Void
    private let captured = Locked<[String]>([])
    private let observer = Locked<(@Sendable (String) -> Void)?>(nil)
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

    public func line(_ text: String = "") {
        captured.withLock { $0.append(text) }
        sink(text)
        observer.withLock { $0 }?(text)
    }

    /// Sees every line except echoes: how a recorder captures a session.
    public func setObserver(_ observe: (@Sendable (String) -> Void)?) {
        observer.withLock { $0 = observe }
    }

    /// Repeats the user's input in piped mode; not part of a session's output.
    public func echo(_ text: String) {
        sink(text)
    }

    public func line(_ role: TerminalStyle.Role, _ text: String) {
        line(style.apply(role, text))
    }

    /// Text that came from a server, a transcript or a catalogue: sanitised before printing,
    /// and, given a width, wrapped at word boundaries with continuation lines indented under
    /// the prefix.
    public func untrusted(_ text: String, prefix: String = "", role: TerminalStyle.Role? = nil, width: Int? = nil) {
        let clean = TerminalSanitizer.sanitize(text, newlines: .keep)
        for part in clean.split(separator: "\n", omittingEmptySubsequences: false) {
            var lines = [String(part)]
            if let width {
                let room = max(10, width - DisplayWidth.of(prefix))
                let wrapped = DisplayWidth.wrap(String(part), width: room, maxLines: Int.max)
                if !wrapped.isEmpty { lines = wrapped }
            }
            let indent = String(repeating: " ", count: DisplayWidth.of(prefix))
            for (index, line) in lines.enumerated() {
                let body = (index == 0 ? prefix : indent) + line
                if let role { self.line(role, body) } else { self.line(body) }
            }
        }
    }
}
