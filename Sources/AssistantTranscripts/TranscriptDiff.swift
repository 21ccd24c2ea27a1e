/// The difference between a transcript and its replay, as a unified diff that names the file
/// and its lines.
///
/// The replayer decides which actual line stands for which expected line (requests by the
/// exchange that answered them, output by a placeholder-aware alignment); this type turns those
/// links into edits and prints them. It never compares text itself, so what it prints is
/// exactly what made the replay fail.
package struct TranscriptDiff: Sendable {
    /// One line of the diff: unchanged (` `), only in the file (`-`) or only in the replay (`+`).
    struct Edit: Sendable, Hashable {
        let mark: Character
        let text: String
        /// The file's line this edit is at (for `+`, the file line it comes before).
        let source: Int
    }

    /// An expected line, and the file line it was read from.
    struct ExpectedLine: Sendable {
        let text: String
        let source: Int
    }

    /// An actual line, and the expected line it matched, if any.
    struct ActualLine: Sendable {
        let text: String
        let link: Int?
    }

    private(set) var edits: [Edit] = []

    /// Whether the replay differs from the file.
    var differs: Bool { edits.contains { $0.mark != " " } }

    /// Adds one segment's lines; links must increase (each expected line is used once, in order).
    mutating func append(expected: [ExpectedLine], actual: [ActualLine], endSource: Int) {
        var next = 0
        var added: [String] = []
        func flushAdded(at source: Int) {
            edits += added.map { Edit(mark: "+", text: $0, source: source) }
            added = []
        }
        for line in actual {
            guard let link = line.link, link >= next, link < expected.count else {
                added.append(line.text)
                continue
            }
            for gone in expected[next..<link] { edits.append(Edit(mark: "-", text: gone.text, source: gone.source)) }
            flushAdded(at: expected[link].source)
            edits.append(Edit(mark: " ", text: expected[link].text, source: expected[link].source))
            next = link + 1
        }
        for gone in expected[next...] { edits.append(Edit(mark: "-", text: gone.text, source: gone.source)) }
        flushAdded(at: endSource)
    }

    /// The first line the file and the replay disagree on, in one line: `x.transcript:47: not
    /// in the replay: "  assistant › Нет."`.
    func firstChange(file: String) -> String? {
        guard let edit = edits.first(where: { $0.mark != " " }) else { return nil }
        return "\(file):\(edit.source): " + (edit.mark == "-" ? "not in the replay: " : "not in the file: ")
            + "\"\(edit.text)\""
    }

    /// The unified diff (3 lines of context), or nil when nothing differs. With `limit`, at
    /// most that many lines are printed and a last line says how many were left out.
    package func render(file: String, limit: Int? = nil) -> String? {
        guard differs else { return nil }
        var out = ["--- \(file) (expected)", "+++ \(file) (actual)"]
        for window in Self.hunks(changed: edits.indices.filter { edits[$0].mark != " " }, count: edits.count) {
            let line = edits[window].first { $0.mark != "+" }?.source ?? edits[window.lowerBound].source
            out.append("@@ \(file):\(line) @@")
            for edit in edits[window] { out.append("\(edit.mark)\(edit.text)") }
        }
        if let limit, out.count > limit {
            let cut = out.count - limit
            out = Array(out.prefix(limit))
            out.append("… \(cut) more line\(cut == 1 ? "" : "s") of this diff not shown")
        }
        return out.joined(separator: "\n")
    }

    /// The hunks of a unified diff: each changed edit (of `count`) with 3 edits of context
    /// either side, hunks whose context would touch merged into one.
    static func hunks(changed: [Int], count: Int, context: Int = 3) -> [ClosedRange<Int>] {
        var hunks: [ClosedRange<Int>] = []
        var index = 0
        while index < changed.count {
            let start = max(0, changed[index] - context)
            var end = min(count - 1, changed[index] + context)
            while index + 1 < changed.count, changed[index + 1] - context <= end + 1 {
                index += 1
                end = min(count - 1, changed[index] + context)
            }
            hunks.append(start...end)
            index += 1
        }
        return hunks
    }

    // MARK: - Alignment

    /// Pairs of (expected, actual) indices that `equal` says match, in order: the common
    /// prefix and suffix, and between them a longest common subsequence. The middle costs
    /// O(n · m), so past `maximumCells` (two segments that differ in thousands of lines) it is
    /// left unpaired and printed whole as removed and added.
    static func align(_ n: Int, _ m: Int, maximumCells: Int = 4_000_000, equal: (Int, Int) -> Bool) -> [(Int, Int)] {
        var prefix = 0
        while prefix < n, prefix < m, equal(prefix, prefix) { prefix += 1 }
        var suffix = 0
        while suffix < n - prefix, suffix < m - prefix, equal(n - 1 - suffix, m - 1 - suffix) { suffix += 1 }
        var pairs = (0..<prefix).map { ($0, $0) }
        let rows = n - prefix - suffix
        let columns = m - prefix - suffix
        if rows > 0, columns > 0, rows * columns <= maximumCells {
            // table[i][j]: the longest common subsequence of rows i… and columns j….
            var same = Array(repeating: false, count: rows * columns)
            for i in 0..<rows {
                for j in 0..<columns { same[i * columns + j] = equal(prefix + i, prefix + j) }
            }
            var table = Array(repeating: 0, count: (rows + 1) * (columns + 1))
            let width = columns + 1
            for i in stride(from: rows - 1, through: 0, by: -1) {
                for j in stride(from: columns - 1, through: 0, by: -1) {
                    table[i * width + j] =
                        same[i * columns + j]
                        ? table[(i + 1) * width + j + 1] + 1
                        : max(table[(i + 1) * width + j], table[i * width + j + 1])
                }
            }
            var i = 0
            var j = 0
            while i < rows, j < columns {
                if same[i * columns + j] {
                    pairs.append((prefix + i, prefix + j))
                    i += 1
                    j += 1
                } else if table[(i + 1) * width + j] >= table[i * width + j + 1] {
                    i += 1
                } else {
                    j += 1
                }
            }
        }
        pairs += (0..<suffix).reversed().map { (n - 1 - $0, m - 1 - $0) }
        return pairs
    }
}
