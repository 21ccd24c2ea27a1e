/// Columns a string takes on a terminal, which is neither its `count` nor its UTF-8 length.
///
/// The model is tmux's (3.3), measured by its cursor advance for the sequences in
/// `GraphemeWidthTests`: each code point advances the cursor by the C library's `wcwidth(3)`
/// in a UTF-8 locale — East Asian wide characters and most emoji two columns; combining marks,
/// variation selectors and joiners none — except that a code point right after a zero-width
/// joiner (ZWJ) joins the character before it and takes no column of its own. So:
///
/// - a ZWJ sequence is as wide as its first emoji: `👨‍👩‍👧` and `👩‍💻` two columns, as tmux,
///   kitty, WezTerm, foot, iTerm2 and Windows Terminal draw them (terminals that draw code
///   point by code point — xterm, VTE — draw the family six wide, and such a row ends long
///   there);
/// - a flag (two regional indicators) is two columns, CJK two, `❤` one;
/// - a skin tone after its emoji (`👍🏽`), a keycap (`1️⃣`) and VS16 (`❤️`) add nothing to the
///   C library's widths: `👍🏽` is four columns, `1️⃣` and `❤️` one, as tmux, xterm and VTE draw
///   them. Where terminals disagree — kitty, WezTerm, foot and iTerm2 draw all three two
///   columns wide — this is the common case on Linux, and the wider reading for the skin tone,
///   so a row there ends short, never long.
///
/// The widths come from `TerminalWidthTable`, derived from the C library once and embedded,
/// so layout does not depend on the process's locale or the machine's C library; a code
/// point that library does not know (unassigned) counts two columns, the most any terminal
/// draws. Escape sequences and control characters count zero, because they are never printed
/// as such (the sanitiser removes them).
///
/// The carousel's promise that no line is wider than `availableWidth` (PR3) rests on this.
package enum DisplayWidth {
    /// Adds up the columns of code points in order, applying the joiner rule: the one place
    /// where a code point's width depends on the one before it.
    package struct Meter: Sendable {
        private var afterJoiner = false

        /// A meter at the start of a text.
        package init() {}

        /// The columns `scalar` adds after the code points measured so far.
        package mutating func add(_ scalar: Unicode.Scalar) -> Int {
            defer { afterJoiner = scalar == "\u{200d}" }
            // A ZWJ joins what follows to the character before it: tmux draws the two in one
            // cell (ASCII after a joiner is drawn on its own).
            if afterJoiner, scalar.value > 0x7f { return 0 }
            return DisplayWidth.of(scalar)
        }
    }

    /// The columns `text` takes; escape sequences and control characters count zero.
    package static func of(_ text: String) -> Int {
        let visible =
            text.unicodeScalars.contains { isControl($0) }
            ? TerminalSanitizer.sanitize(text, newlines: .space) : text
        var columns = 0
        var scalars = 0
        var meter = Meter()
        for scalar in visible.unicodeScalars {
            columns += meter.add(scalar)
            scalars += 1
        }
        LayoutWorkMeter.record(scalars)
        return columns
    }

    /// The columns one grapheme cluster takes: its code points' widths, the joiner rule applied.
    package static func of(_ character: Character) -> Int {
        var columns = 0
        var meter = Meter()
        for scalar in character.unicodeScalars { columns += meter.add(scalar) }
        return columns
    }

    /// The columns one code point advances the cursor by: 0, 1 or 2.
    package static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value >= 0x20, value < 0x7f { return 1 }
        if isControl(scalar) { return 0 }
        let width = libraryWidth(value)
        return width < 0 ? 2 : width
    }

    /// `wcwidth(3)` of `value` as the embedded table has it: -1 for a code point the C library
    /// does not print (unassigned, surrogate, control), else 0, 1 or 2.
    static func libraryWidth(_ value: UInt32) -> Int {
        let runs = TerminalWidthTable.runs
        // The last run starting at or before `value`.
        var low = 0
        var high = runs.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if runs[middle] >> 2 <= value { low = middle } else { high = middle }
        }
        return Int(runs[low] & 3) - 1
    }

    /// C0 and C1 controls and DEL: never printed, so they take no column — and never written
    /// raw where a terminal or a line editor would act on them.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
    }

    /// `text` cut to at most `width` columns, ending with `ellipsis` when something was cut.
    package static func truncate(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        TextLayout.truncate(text, to: width, ellipsis: ellipsis)
    }

    /// `text` followed by spaces up to `width` columns (unchanged when already wider).
    package static func pad(_ text: String, to width: Int) -> String {
        let missing = width - of(text)
        return missing > 0 ? text + String(repeating: " ", count: missing) : text
    }

    /// `text` word-wrapped to lines of at most `width` columns, breaking words longer than a
    /// line, and cut with `ellipsis` on the last line when it needs more than `maxLines`.
    package static func wrap(_ text: String, width: Int, maxLines: Int, ellipsis: String = "…") -> [String] {
        TextLayout.wrap(text, width: width, maxLines: maxLines, ellipsis: ellipsis)
    }
}
