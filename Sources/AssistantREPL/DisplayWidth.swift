/// Columns a string takes on a terminal, which is neither its `count` nor its UTF-8 length.
///
/// Terminals such as tmux, xterm and VTE advance the cursor by the C library's `wcwidth(3)` of
/// each code point in a UTF-8 locale: East Asian wide characters and most emoji two columns,
/// combining marks, variation selectors and joiners none. So a grapheme cluster is as wide as
/// the sum of its code points' widths: `❤️` (U+2764 U+FE0F) is one column, as tmux draws it,
/// and a family emoji joined by ZWJ is three emoji wide, which is what xterm and VTE draw
/// (tmux 3.3 draws it two columns wide: such a row ends short there, never long).
///
/// The widths come from `TerminalWidthTable`, derived from the C library once and embedded,
/// so layout does not depend on the process's locale or the machine's C library; a code
/// point that library does not know (unassigned) counts two columns, the most any terminal
/// draws. Escape sequences and control characters count zero, because they are never printed
/// as such (the sanitiser removes them).
///
/// The carousel's promise that no line is wider than `availableWidth` (PR3) rests on this.
package enum DisplayWidth {
    /// The columns `text` takes; escape sequences and control characters count zero.
    package static func of(_ text: String) -> Int {
        let visible =
            text.unicodeScalars.contains { isControl($0) }
            ? TerminalSanitizer.sanitize(text, newlines: .space) : text
        var columns = 0
        var scalars = 0
        for scalar in visible.unicodeScalars {
            columns += of(scalar)
            scalars += 1
        }
        LayoutWorkMeter.record(scalars)
        return columns
    }

    /// The columns one grapheme cluster takes: the sum of its code points' widths.
    package static func of(_ character: Character) -> Int {
        var columns = 0
        for scalar in character.unicodeScalars { columns += of(scalar) }
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

    /// C0 and C1 controls and DEL: never printed, so they take no column.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
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
