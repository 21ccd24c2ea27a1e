/// The changes between two texts given as lines, with no transcript behind them: two replays
/// of one file that should have come out the same (`--repeat`), or a file and what blessing
/// would make of it (`--bless=interactive`), shown hunk by hunk and merged with only the hunks
/// someone accepted.
struct LineChanges: Sendable {
    struct Edit: Sendable, Hashable {
        let mark: Character
        let text: String
        /// The 1-based line in the old text this edit is at or comes before.
        let oldLine: Int
    }

    let edits: [Edit]
    /// The hunks, as ranges of `edits`, 3 lines of context each side.
    let hunks: [ClosedRange<Int>]

    init(old: [String], new: [String]) {
        let pairs = TranscriptDiff.align(old.count, new.count) { old[$0] == new[$1] }
        var edits: [Edit] = []
        var i = 0
        var j = 0
        for (pi, pj) in pairs + [(old.count, new.count)] {
            while i < pi {
                edits.append(Edit(mark: "-", text: old[i], oldLine: i + 1))
                i += 1
            }
            while j < pj {
                edits.append(Edit(mark: "+", text: new[j], oldLine: i + 1))
                j += 1
            }
            if pi < old.count {
                edits.append(Edit(mark: " ", text: old[pi], oldLine: pi + 1))
                i += 1
                j += 1
            }
        }
        self.edits = edits
        hunks = TranscriptDiff.hunks(changed: edits.indices.filter { edits[$0].mark != " " }, count: edits.count)
    }

    /// Whether the texts differ.
    var differ: Bool { !hunks.isEmpty }

    /// Hunk `index` as a unified diff hunk, its header naming the old text's line: `@@ line 3 @@`,
    /// or `@@ NAME:3 @@` with a `name` (a file's).
    func render(hunk index: Int, name: String? = nil) -> [String] {
        let window = hunks[index]
        let line = edits[window].first { $0.mark != "+" }?.oldLine ?? edits[window.lowerBound].oldLine
        return ["@@ " + (name.map { "\($0):\(line)" } ?? "line \(line)") + " @@"]
            + edits[window].map { "\($0.mark)\($0.text)" }
    }

    /// The whole unified diff, nil when the texts are the same.
    func render(oldName: String, newName: String, name: String? = nil) -> String? {
        guard differ else { return nil }
        return (["--- \(oldName)", "+++ \(newName)"] + hunks.indices.flatMap { render(hunk: $0, name: name) })
            .joined(separator: "\n")
    }

    /// The old text with the changes of the `accepted` hunks made, the others left out.
    func merged(accepting accepted: Set<Int>) -> [String] {
        var lines: [String] = []
        for (index, edit) in edits.enumerated() {
            let taken = hunks.firstIndex { $0.contains(index) }.map(accepted.contains) ?? false
            switch edit.mark {
            case " ": lines.append(edit.text)
            case "-": if !taken { lines.append(edit.text) }
            default: if taken { lines.append(edit.text) }
            }
        }
        return lines
    }
}
