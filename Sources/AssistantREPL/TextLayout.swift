/// Lays text out in terminal columns: word wrapping, truncation with an ellipsis, and fitting
/// any line the REPL prints into the terminal's width.
///
/// Every function makes one pass over its input (plus at most one measuring pass per word),
/// so its cost is linear in the text: a 10,000-character product name without a single space
/// costs the same per character as a short one. Lines break between grapheme clusters, so a
/// combining mark never starts a line and an emoji sequence is never split, except a cluster
/// wider than the whole line (a long ZWJ sequence), which breaks between code points, as the
/// terminal itself would. Widths are `DisplayWidth`'s.
package enum TextLayout {
    /// `text` word-wrapped to lines of at most `width` columns. Runs of spaces collapse to one;
    /// a word longer than a line is broken across lines. When the text needs more than
    /// `maxLines` lines, the last one ends with `ellipsis`, and the rest of the text is not
    /// laid out at all.
    package static func wrap(
        _ text: String, width: Int, maxLines: Int = .max, ellipsis: String = "…"
    ) -> [String] {
        guard width > 0, maxLines > 0 else { return [] }
        // One line more than asked tells whether anything had to be left out.
        var builder = LineBuilder(width: width, limit: maxLines >= Int.max - 1 ? .max : maxLines + 1)
        for word in text.split(separator: " ") {
            guard !builder.isFull else { break }
            builder.add(word, after: " ")
        }
        let lines = builder.finish()
        guard lines.count > maxLines else { return lines }
        // The cut comes inside these two lines: the second did not fit after the first.
        let last = truncate(lines[maxLines - 1] + " " + lines[maxLines], to: width, ellipsis: ellipsis)
        return Array(lines.prefix(maxLines - 1)) + [last]
    }

    /// `text` cut to at most `width` columns, ending with `ellipsis` (without the spaces
    /// before it) when something was cut. Reads no further into `text` than the cut.
    package static func truncate(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        let ellipsisWidth = DisplayWidth.of(ellipsis)
        let budget = width - ellipsisWidth
        var used = 0
        var visited = 0
        // The end of the longest prefix within `budget`, without trailing spaces, and within
        // `width`, for when even the ellipsis does not fit.
        var cut = text.startIndex
        var hardCut = text.startIndex
        defer { LayoutWorkMeter.record(visited) }
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            visited += character.unicodeScalars.count
            used += DisplayWidth.of(character)
            if used > width {
                return withoutTrailingJoiner(String(text[..<(budget >= 0 ? cut : hardCut)]))
                    + (budget >= 0 ? ellipsis : "")
            }
            hardCut = next
            if used <= budget, character != " " { cut = next }
            index = next
        }
        return text
    }

    /// A joiner at the end of a cut would join the next character drawn to the emoji before.
    static func withoutTrailingJoiner(_ text: String) -> String {
        guard text.unicodeScalars.last == "\u{200d}" else { return text }
        var trimmed = text
        trimmed.unicodeScalars.removeLast()
        return trimmed
    }

    /// One line that must stay one line (a title, a button label, a log line): `prefix`,
    /// `text` and `suffix` when they fit in `width`; else `text` truncated between the two, or,
    /// when fewer than 8 columns would be left for it, the whole line truncated.
    package static func singleLine(
        prefix: String = "", _ text: String, suffix: String = "", width: Int, ellipsis: String = "…"
    ) -> String {
        let prefixWidth = DisplayWidth.of(prefix)
        let suffixWidth = DisplayWidth.of(suffix)
        let textWidth = DisplayWidth.of(text)
        if prefixWidth + textWidth + suffixWidth <= width { return prefix + text + suffix }
        let room = width - prefixWidth - suffixWidth
        if room >= min(textWidth, 8) {
            return prefix + truncate(text, to: room, ellipsis: ellipsis) + suffix
        }
        return truncate(prefix + text + suffix, to: width, ellipsis: ellipsis)
    }

    /// Any line the REPL prints, as one or more lines of at most `width` columns: unchanged
    /// when it fits, else wrapped at spaces (keeping runs of spaces inside a line) and inside
    /// words that are longer than a line. Continuation lines are indented by `hangingIndent`
    /// columns, by default two more than the line's own leading spaces, so they read as the
    /// continuation they are (at most half the width). `\n` starts a
    /// new line. A line that is too wide and carries escape sequences loses them (and its
    /// colour) rather than be cut inside one.
    package static func fit(_ line: String, width: Int, hangingIndent: Int? = nil) -> [String] {
        let width = max(1, width)
        var result: [String] = []
        for part in line.split(separator: "\n", omittingEmptySubsequences: false) {
            if DisplayWidth.of(String(part)) <= width {
                result.append(String(part))
                continue
            }
            let clean =
                part.unicodeScalars.contains { DisplayWidth.isControl($0) }
                ? TerminalSanitizer.sanitize(String(part), newlines: .space) : String(part)
            result += fitPlain(clean, width: width, hangingIndent: hangingIndent)
        }
        return result
    }

    private static func fitPlain(_ text: String, width: Int, hangingIndent: Int?) -> [String] {
        // Between two pieces of the split there was exactly one space; empty pieces are the
        // further spaces of a run.
        let pieces = text.split(separator: " ", omittingEmptySubsequences: false)
        let leading = pieces.prefix { $0.isEmpty }.count
        let indent = String(repeating: " ", count: leading * 2 <= width ? leading : 0)
        let hanging = String(repeating: " ", count: min(hangingIndent ?? indent.count + 2, width / 2))
        var builder = LineBuilder(
            width: width, firstPrefix: indent, continuationPrefix: hanging, breaksLongWordsInPlace: true)
        var spaces = 0
        var started = false
        for piece in pieces.dropFirst(leading) {
            if piece.isEmpty {
                spaces += 1
                continue
            }
            builder.add(piece, after: started ? String(repeating: " ", count: spaces + 1) : "")
            started = true
            spaces = 0
        }
        return builder.finish()
    }
}

// MARK: - Line building

/// Fills lines word by word; the one place words are measured and broken.
private struct LineBuilder {
    let width: Int
    let limit: Int
    let continuationPrefix: String
    let continuationWidth: Int
    /// A word longer than any line starts right after the previous one instead of on a line
    /// of its own (`> ` and a long input stay together).
    let breaksLongWordsInPlace: Bool
    private(set) var lines: [String] = []
    private var current: String
    private var currentWidth: Int
    private var hasContent = false
    private var visited = 0

    init(
        width: Int, limit: Int = .max, firstPrefix: String = "", continuationPrefix: String = "",
        breaksLongWordsInPlace: Bool = false
    ) {
        self.width = width
        self.limit = limit
        self.continuationPrefix = continuationPrefix
        self.breaksLongWordsInPlace = breaksLongWordsInPlace
        continuationWidth = continuationPrefix.count
        current = firstPrefix
        currentWidth = firstPrefix.count
    }

    /// Enough lines: later words are not laid out.
    var isFull: Bool { lines.count >= limit }

    /// Adds `word` (no spaces in it) after `separator` (spaces), on this line if it fits, else
    /// on the next, else broken across as many lines as it takes.
    mutating func add(_ word: Substring, after separator: String) {
        guard !isFull else { return }
        let wordWidth = measure(word)
        if hasContent {
            if currentWidth + separator.count + wordWidth <= width {
                current += separator
                current += word
                currentWidth += separator.count + wordWidth
                return
            }
            if breaksLongWordsInPlace, wordWidth > width - continuationWidth,
                currentWidth + separator.count < width
            {
                current += separator
                currentWidth += separator.count
                return breakWord(word)
            }
            startLine()
            guard !isFull else { return }
        }
        if currentWidth + wordWidth <= width {
            current += word
            currentWidth += wordWidth
            hasContent = true
            return
        }
        breakWord(word)
    }

    /// The lines, the last one included.
    mutating func finish() -> [String] {
        if hasContent, !isFull { lines.append(TextLayout.withoutTrailingJoiner(current)) }
        hasContent = false
        LayoutWorkMeter.record(visited)
        visited = 0
        return lines
    }

    private mutating func measure(_ word: Substring) -> Int {
        var columns = 0
        var meter = DisplayWidth.Meter()
        for scalar in word.unicodeScalars {
            columns += meter.add(scalar)
            visited += 1
        }
        return columns
    }

    private mutating func startLine() {
        // A joiner left at the end of a line by a broken ZWJ sequence would join whatever the
        // terminal draws next (tmux then swallows the next character into the emoji).
        lines.append(TextLayout.withoutTrailingJoiner(current))
        current = continuationPrefix
        currentWidth = continuationWidth
        hasContent = false
    }

    /// Breaks a word between grapheme clusters, or between code points inside a cluster that
    /// is wider than a whole line. A break goes after the word's last hyphen on the line, as
    /// an identifier or an order number reads best, and a closing mark such as `,` takes the
    /// character before it along rather than start a line alone.
    private mutating func breakWord(_ word: Substring) {
        // The word's characters on this line, as code points and columns, and where a break
        // after a hyphen would go.
        var onLine: [(scalars: Int, width: Int)] = []
        var afterHyphen: Int?
        for character in word {
            guard !isFull else { return }
            let scalars = character.unicodeScalars.count
            visited += scalars
            let characterWidth = DisplayWidth.of(character)
            guard characterWidth <= width - continuationWidth || characterWidth <= width - currentWidth else {
                breakCluster(character)
                (onLine, afterHyphen) = ([], nil)
                continue
            }
            if hasContent, currentWidth + characterWidth > width {
                let carried = takeBack(from: &onLine, afterHyphen: afterHyphen, before: character, characterWidth)
                startLine()
                guard !isFull else { return }
                if let carried { place(carried.text, carried.width) }
                afterHyphen = nil
            }
            place(String(character), characterWidth)
            onLine.append((scalars, characterWidth))
            if character == "-", onLine.count > 1 { afterHyphen = onLine.count }
        }
    }

    /// The end of this line that goes to the next line with `next`: the characters after the
    /// last hyphen, or the one before a closing mark; `nil` when they would not fit there.
    /// `onLine` is left with what the next line starts with. Each character is taken back at
    /// most once, so breaking stays linear in the word.
    private mutating func takeBack(
        from onLine: inout [(scalars: Int, width: Int)], afterHyphen: Int?, before next: Character,
        _ nextWidth: Int
    ) -> (text: String, width: Int)? {
        let count: Int
        if let afterHyphen, afterHyphen < onLine.count {
            count = onLine.count - afterHyphen
        } else if Self.closingMarks.contains(next), onLine.count > 1 {
            count = 1
        } else {
            onLine = []
            return nil
        }
        let taken = onLine.suffix(count)
        let takenWidth = taken.reduce(0) { $0 + $1.width }
        guard takenWidth + nextWidth <= width - continuationWidth else {
            onLine = []
            return nil
        }
        let scalars = taken.reduce(0) { $0 + $1.scalars }
        let text = String(current.unicodeScalars.suffix(scalars))
        current.unicodeScalars.removeLast(scalars)
        currentWidth -= takenWidth
        onLine = Array(taken)
        return (text, takenWidth)
    }

    /// Marks that close what comes before them, never to start a line.
    private static let closingMarks: Set<Character> = [",", ".", ";", ":", "!", "?", ")", "]", "}", "»", "”", "’"]

    /// A cluster wider than a line: each code point with the zero-width ones after it.
    private mutating func breakCluster(_ character: Character) {
        var piece = String.UnicodeScalarView()
        var pieceWidth = 0
        var meter = DisplayWidth.Meter()
        for scalar in character.unicodeScalars {
            let scalarWidth = meter.add(scalar)
            if scalarWidth > 0, !piece.isEmpty {
                place(String(piece), pieceWidth)
                piece = String.UnicodeScalarView()
                pieceWidth = 0
            }
            piece.append(scalar)
            pieceWidth += scalarWidth
        }
        if !piece.isEmpty { place(String(piece), pieceWidth) }
    }

    /// Appends a piece of a word, on a new line when it does not fit on this one. A piece that
    /// fits on no line at all (two columns in a one-column layout) is left out.
    private mutating func place(_ piece: String, _ pieceWidth: Int) {
        guard !isFull else { return }
        if currentWidth + pieceWidth > width, hasContent {
            startLine()
            guard !isFull else { return }
        }
        guard currentWidth + pieceWidth <= width else { return }
        current += piece
        currentWidth += pieceWidth
        hasContent = true
    }
}
