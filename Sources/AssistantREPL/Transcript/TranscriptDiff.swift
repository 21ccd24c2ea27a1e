/// Compares an expected transcript with a replay's actual one and renders a unified diff.
/// Request lines compare as JSON, other lines literally, with `<name>` placeholders bound.
package enum TranscriptDiff {
    private struct Line {
        let text: String
        let source: Int
    }

    /// `nil` when they match; otherwise a unified diff naming `file` and the file's lines.
    package static func compare(expected: Transcript, actual: Transcript, file: String) -> String? {
        let left = lines(expected)
        let right = lines(actual)
        var bindings = TranscriptBindings()
        let n = left.count
        let m = right.count
        // Longest common subsequence with a placeholder-aware equality, then a walk.
        var table = Array(repeating: Array(repeating: 0, count: m + 1), count: n + 1)
        var equal = Array(repeating: Array(repeating: false, count: m), count: n)
        for i in 0..<n {
            for j in 0..<m {
                var trial = bindings
                equal[i][j] = same(left[i].text, right[j].text, &trial)
            }
        }
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                table[i][j] = equal[i][j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var i = 0
        var j = 0
        var edits: [(Character, Line)] = []
        while i < n || j < m {
            if i < n, j < m, equal[i][j], same(left[i].text, right[j].text, &bindings) {
                edits.append((" ", left[i]))
                i += 1
                j += 1
            } else if j < m, i == n || table[i][j + 1] >= table[i + 1][j] {
                edits.append(("+", right[j]))
                j += 1
            } else {
                edits.append(("-", left[i]))
                i += 1
            }
        }
        guard edits.contains(where: { $0.0 != " " }) else { return nil }
        return render(edits, file: file)
    }

    private static func render(_ edits: [(Character, Line)], file: String) -> String {
        var out = ["--- \(file) (expected)", "+++ \(file) (actual)"]
        let changed = edits.indices.filter { edits[$0].0 != " " }
        var index = 0
        while index < changed.count {
            let start = max(0, changed[index] - 3)
            var end = min(edits.count - 1, changed[index] + 3)
            while index + 1 < changed.count, changed[index + 1] - 3 <= end + 1 {
                index += 1
                end = min(edits.count - 1, changed[index] + 3)
            }
            let line = edits[start...end].first { $0.0 != "+" }?.1.source ?? edits[start].1.source
            out.append("@@ \(file):\(line) @@")
            for (mark, line) in edits[start...end] { out.append("\(mark)\(line.text)") }
            index += 1
        }
        return out.joined(separator: "\n")
    }

    private static func same(_ expected: String, _ actual: String, _ bindings: inout TranscriptBindings) -> Bool {
        if expected == actual { return true }
        if expected.hasPrefix("→ "), actual.hasPrefix("→ ") {
            let e = expected.split(separator: " ", maxSplits: 4).map(String.init)
            let a = actual.split(separator: " ", maxSplits: 4).map(String.init)
            guard e.count >= 4, a.count >= 4, e[1] == a[1], e[2] == a[2] else { return false }
            var trial = bindings
            guard trial.match(e[3], a[3]), trial.matchJSON(e.count > 4 ? e[4] : "", a.count > 4 ? a[4] : "") else {
                return false
            }
            bindings = trial
            return true
        }
        var trial = bindings
        guard trial.match(expected, actual) else { return false }
        bindings = trial
        return true
    }

    private static func lines(_ transcript: Transcript) -> [Line] {
        var result: [Line] = []
        for segment in transcript.segments {
            let rendered = TranscriptFormat.renderSegment(segment)
            result += rendered.enumerated().map { Line(text: $0.element, source: segment.line + $0.offset) }
        }
        return result
    }
}
