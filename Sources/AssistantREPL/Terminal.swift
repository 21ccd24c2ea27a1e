import Foundation

// MARK: - Style

/// How the REPL decorates its output: SGR colours on an interactive terminal, nothing at all
/// otherwise.
///
/// Piped and recorded sessions use `.plain`, so their bytes depend only on their input; that
/// is what makes transcripts replayable byte for byte. Colour follows the `NO_COLOR`
/// convention (no-color.org): any non-empty value turns it off.
public struct TerminalStyle: Sendable, Hashable {
    /// What a piece of text means; each style maps it to its own look.
    public enum Role: Sendable, Hashable, CaseIterable {
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
    public let usesColor: Bool

    /// No escape sequences: for pipes, files and transcripts.
    public static let plain = TerminalStyle(usesColor: false)

    /// SGR colours, for an interactive terminal.
    public static let colored = TerminalStyle(usesColor: true)

    /// A style that writes colours or not.
    public init(usesColor: Bool) {
        self.usesColor = usesColor
    }

    /// True only when output is a terminal, `--no-color` was not given, `NO_COLOR` is unset or
    /// empty, and `TERM` is not `dumb` (a terminal that would print the escapes literally).
    public static func colorEnabled(isTerminal: Bool, environment: [String: String], noColorFlag: Bool) -> Bool {
        guard isTerminal, !noColorFlag else { return false }
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
        return environment["TERM"] != "dumb"
    }

    /// The style for the given output descriptor in this process's environment.
    public static func detect(
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
    public func apply(_ role: Role, _ text: String) -> String {
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
public enum TerminalSize {
    /// The fallback when neither the terminal nor `COLUMNS` tells.
    public static let defaultColumns = 80

    /// `--width` when given, else the terminal's width (`TIOCGWINSZ` on `descriptor`), else a
    /// positive `COLUMNS`, else 80. Asked again at each render, so a resized window is
    /// followed without a `SIGWINCH` handler.
    public static func columns(
        override: Int? = nil, descriptor: Int32 = STDOUT_FILENO,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Int {
        columns(override: override, measured: measuredColumns(descriptor: descriptor), environment: environment)
    }

    /// The same decision from already gathered facts, for tests.
    public static func columns(override: Int?, measured: Int?, environment: [String: String]) -> Int {
        if let override, override > 0 { return override }
        if let measured, measured > 0 { return measured }
        if let text = environment["COLUMNS"], let value = Int(text.trimmingCharacters(in: .whitespaces)), value > 0 {
            return value
        }
        return defaultColumns
    }

    /// The terminal's width, or nil when `descriptor` is not a terminal.
    public static func measuredColumns(descriptor: Int32) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

// MARK: - Display width

/// Columns a string takes on a terminal, which is neither its `count` nor its UTF-8 length:
/// East Asian wide characters and emoji take two columns, combining marks and format
/// characters none, and escape sequences none.
///
/// The carousel's promise that no line is wider than `availableWidth` (PR3) rests on this.
public enum DisplayWidth {
    /// The columns `text` takes; escape sequences and control characters count zero.
    public static func of(_ text: String) -> Int {
        let visible =
            text.unicodeScalars.contains { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }
            ? TerminalSanitizer.sanitize(text, newlines: .space) : text
        return visible.reduce(0) { $0 + of($1) }
    }

    /// The columns one grapheme takes.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x20 || (0x7f...0x9f).contains(first.value) { return 0 }
        if scalars.contains(where: { $0.properties.isEmojiPresentation }) { return 2 }
        if first.properties.isEmoji, scalars.contains("\u{fe0f}") { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if (0x1160...0x11ff).contains(first.value) { return 0 }  // Hangul medial and final jamo
        return isWide(first.value) ? 2 : 1
    }

    /// `text` cut to at most `width` columns, ending with `ellipsis` when something was cut.
    public static func truncate(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        guard of(text) > width else { return text }
        let ellipsisWidth = of(ellipsis)
        guard width >= ellipsisWidth else { return prefix(text, width: max(0, width)) }
        var kept = prefix(text, width: width - ellipsisWidth)
        while kept.last == " " { kept.removeLast() }  // "three…", not "three …"
        return kept + ellipsis
    }

    /// `text` followed by spaces up to `width` columns (unchanged when already wider).
    public static func pad(_ text: String, to width: Int) -> String {
        let missing = width - of(text)
        return missing > 0 ? text + String(repeating: " ", count: missing) : text
    }

    /// `text` word-wrapped to lines of at most `width` columns, breaking words longer than a
    /// line, and cut with `ellipsis` on the last line when it needs more than `maxLines`.
    public static func wrap(_ text: String, width: Int, maxLines: Int, ellipsis: String = "…") -> [String] {
        guard width > 0, maxLines > 0 else { return [] }
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            let candidate = current.isEmpty ? String(word) : current + " " + word
            if of(candidate) <= width {
                current = candidate
                continue
            }
            if !current.isEmpty { lines.append(current) }
            current = String(word)
            while of(current) > width {
                let head = prefix(current, width: width)
                // A wide character in a one-column line cannot fit at all; stop rather than loop.
                guard !head.isEmpty else { return Array(lines.prefix(maxLines)) }
                lines.append(head)
                current = String(current.dropFirst(head.count))
            }
        }
        if !current.isEmpty { lines.append(current) }
        guard lines.count > maxLines else { return lines }
        let rest = lines[(maxLines - 1)...].joined(separator: " ")
        return Array(lines.prefix(maxLines - 1)) + [truncate(rest, to: width, ellipsis: ellipsis)]
    }

    /// The longest leading part of `text` that fits in `width` columns.
    private static func prefix(_ text: String, width: Int) -> String {
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let next = used + of(text[index])
            if next > width { break }
            used = next
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth.txt, W and F), the
    /// blocks a product name can realistically contain.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115f, 0x231a...0x231b, 0x2329...0x232a, 0x2e80...0x303e, 0x3041...0x33ff,
            0x3400...0x4dbf, 0x4e00...0x9fff, 0xa000...0xa4cf, 0xa960...0xa97f, 0xac00...0xd7a3,
            0xf900...0xfaff, 0xfe10...0xfe19, 0xfe30...0xfe6f, 0xff00...0xff60, 0xffe0...0xffe6,
            0x16fe0...0x16fe4, 0x17000...0x18aff, 0x1b000...0x1b2ff, 0x1f200...0x1f2ff,
            0x1f300...0x1f64f, 0x1f680...0x1f6ff, 0x1f900...0x1f9ff, 0x20000...0x2fffd, 0x30000...0x3fffd:
            return true
        default:
            return false
        }
    }
}
