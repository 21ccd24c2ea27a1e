import Foundation

// MARK: - Style

/// How the REPL decorates its output: SGR colours on an interactive terminal, nothing at all
/// otherwise.
///
/// Piped and recorded sessions use `.plain`, so their bytes depend only on their input; that
/// is what makes transcripts replayable byte for byte. Colour follows the `NO_COLOR`
/// convention (no-color.org): any non-empty value turns it off.
package struct TerminalStyle: Sendable, Hashable {
    /// What a piece of text means; each style maps it to its own look.
    package enum Role: Sendable, Hashable, CaseIterable {
        /// Headings and titles.
        case bold
        /// Secondary information, and products that cannot be tapped.
        case dim
        /// Things the user can act on: numbers to tap, commands.
        case accent
        /// Confirmations.
        case success
        /// Non-fatal problems.
        case warning
        /// Failures.
        case error
    }

    /// Whether SGR escape sequences are written.
    package let usesColor: Bool

    /// No escape sequences: for pipes, files and transcripts.
    package static let plain = TerminalStyle(usesColor: false)

    /// SGR colours, for an interactive terminal.
    package static let colored = TerminalStyle(usesColor: true)

    /// A style that writes colours or not.
    package init(usesColor: Bool) {
        self.usesColor = usesColor
    }

    /// True only when output is a terminal, `--no-color` was not given, `NO_COLOR` is unset or
    /// empty, and `TERM` is not `dumb` (a terminal that would print the escapes literally).
    package static func colorEnabled(isTerminal: Bool, environment: [String: String], noColorFlag: Bool) -> Bool {
        guard isTerminal, !noColorFlag else { return false }
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
        return environment["TERM"] != "dumb"
    }

    /// The style for the given output descriptor in this process's environment.
    package static func detect(
        outputDescriptor: Int32 = STDOUT_FILENO,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        noColorFlag: Bool = false
    ) -> TerminalStyle {
        let isTerminal = isatty(outputDescriptor) == 1
        return TerminalStyle(
            usesColor: colorEnabled(isTerminal: isTerminal, environment: environment, noColorFlag: noColorFlag)
        )
    }

    /// `text` in the look of `role`; unchanged when colour is off.
    package func apply(_ role: Role, _ text: String) -> String {
        guard usesColor, !text.isEmpty else { return text }
        let code: String
        switch role {
        case .bold: code = "1"
        case .dim: code = "2"
        case .accent: code = "36"
        case .success: code = "32"
        case .warning: code = "33"
        case .error: code = "31"
        }
        return "\u{1b}[\(code)m\(text)\u{1b}[0m"
    }
}

// MARK: - Size

/// The width the REPL lays its output out for.
package enum TerminalSize {
    /// The fallback when neither the terminal nor `COLUMNS` tells.
    package static let defaultColumns = 80

    /// `--width` when given, else the terminal's width (`TIOCGWINSZ` on `descriptor`), else a
    /// positive `COLUMNS`, else 80: the width a session starts with. Later resizes reach the
    /// session from the line reader (`SIGWINCH`).
    package static func columns(
        override: Int? = nil, descriptor: Int32 = STDOUT_FILENO,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Int {
        columns(override: override, measured: measuredColumns(descriptor: descriptor), environment: environment)
    }

    /// The same decision from already gathered facts, for tests.
    package static func columns(override: Int?, measured: Int?, environment: [String: String]) -> Int {
        if let override, override > 0 { return override }
        if let measured, measured > 0 { return measured }
        if let text = environment["COLUMNS"], let value = Int(text.trimmingCharacters(in: .whitespaces)), value > 0 {
            return value
        }
        return defaultColumns
    }

    /// The terminal's width, or nil when `descriptor` is not a terminal.
    package static func measuredColumns(descriptor: Int32) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
