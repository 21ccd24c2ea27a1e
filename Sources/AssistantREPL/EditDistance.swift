/// How many single-character edits (insertions, deletions, substitutions, and swaps of two
/// neighbours) turn one word into another: how "did you mean" tells a typo from a different
/// word, for the command line's flags and the REPL's commands alike.
enum EditDistance {
    /// The optimal string alignment distance between `lhs` and `rhs`, by characters: the
    /// Levenshtein distance with a swap of two adjacent characters (`wiat`, `wait`) as one edit.
    static func between(_ lhs: String, _ rhs: String) -> Int {
        let lhs = Array(lhs)
        let rhs = Array(rhs)
        guard !lhs.isEmpty else { return rhs.count }
        guard !rhs.isEmpty else { return lhs.count }
        var before = [Int](repeating: 0, count: rhs.count + 1)
        var previous = Array(0...rhs.count)
        for i in 1...lhs.count {
            var current = [i] + [Int](repeating: 0, count: rhs.count)
            for j in 1...rhs.count {
                let cost = lhs[i - 1] == rhs[j - 1] ? 0 : 1
                current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, lhs[i - 1] == rhs[j - 2], lhs[i - 2] == rhs[j - 1] {
                    current[j] = Swift.min(current[j], before[j - 2] + 1)
                }
            }
            before = previous
            previous = current
        }
        return previous[rhs.count]
    }
}
