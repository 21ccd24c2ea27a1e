import ShoppingAssistant

/// Where the REPL writes. Everything goes through one sink so that output printed while the
/// user types is redrawn correctly by the line reader, and so tests can capture it.
///
/// It keeps nothing: a line goes to the sink and, while one is set, to the observer (how a
/// recording captures a session), and is forgotten. A session that runs for days holds no
/// transcript of what it printed.
package final class REPLOutput: Sendable {
    private let sink: @Sendable (String) -> Void
    private let observer = Locked<(@Sendable (String) -> Void)?>(nil)
    /// Colours on a terminal, none in pipes and transcripts.
    package let style: TerminalStyle

    /// - Parameter sink: receives whole lines without a trailing newline.
    package init(style: TerminalStyle = .plain, sink: @escaping @Sendable (String) -> Void) {
        self.style = style
        self.sink = sink
    }

    /// Prints one line of the session's output.
    package func line(_ text: String = "") {
        sink(text)
        observer.withLock { $0 }?(text)
    }

    /// Sees every line except echoes from now on, until replaced or cleared: how a recorder
    /// captures a session. Lines printed before it was set are not replayed to it.
    package func setObserver(_ observe: (@Sendable (String) -> Void)?) {
        observer.withLock { $0 = observe }
    }

    /// Repeats the user's input in piped mode; not part of a session's output.
    package func echo(_ text: String) {
        sink(text)
    }

    /// A line outside any step of the session, such as the farewell at the end of input:
    /// printed, never observed, so a recording ends with its last step's own output.
    package func aside(_ role: TerminalStyle.Role, _ text: String) {
        sink(style.apply(role, text))
    }

    /// Prints one line in the look of `role`.
    package func line(_ role: TerminalStyle.Role, _ text: String) {
        line(style.apply(role, text))
    }

    /// An engine log message, sanitised (it may quote server text): errors as `[error] …`,
    /// the rest as dim notes. Which messages arrive is the logger's level (`--log-level`).
    package func log(_ level: AssistantLogLevel, _ message: String) {
        let text = TerminalSanitizer.sanitize(message)
        switch level {
        case .error: line(.error, "[error] " + text)
        case .info: line(.dim, "note: " + text)
        case .debug: line(.dim, "debug: " + text)
        case .none: break
        }
    }

    /// Text that came from a server, a transcript or a catalogue: sanitised before printing,
    /// and, given a width, wrapped at word boundaries with continuation lines indented under
    /// the prefix.
    package func untrusted(_ text: String, prefix: String = "", role: TerminalStyle.Role? = nil, width: Int? = nil) {
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
