import Synchronization

/// Where the REPL writes. Everything goes through one sink so that output printed while the
/// user types is redrawn correctly by the line reader, and so tests can capture it.
public final class REPLOutput: Sendable {
    private let sink: @Sendable (String) -> Void
    private let captured = Mutex<[String]>([])
    private let observer = Mutex<(@Sendable (String) -> Void)?>(nil)
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

    /// Text that came from a server, a transcript or a catalogue: sanitised before printing.
    public func untrusted(_ text: String, prefix: String = "", role: TerminalStyle.Role? = nil) {
        for part in TerminalSanitizer.sanitize(text, newlines: .keep).split(separator: "\n", omittingEmptySubsequences: false) {
            let body = prefix + part
            if let role { line(role, body) } else { line(body) }
        }
    }
}
