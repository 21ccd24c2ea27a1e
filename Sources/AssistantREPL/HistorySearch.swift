/// Ctrl-R: incremental search backwards through the line history, as a value the line reader
/// drives key by key, so what each key does is decided (and tested) without a terminal.
///
/// Typing extends the pattern and shows the newest line containing it, starting from the line
/// shown; Ctrl-R again goes to the next older one; Backspace shortens the pattern and starts
/// over from the newest line. When nothing (older) matches, the last match stays on screen
/// and the prompt says the search failed, as in bash, so the prompt always tells what is
/// going on instead of libedit's bare `bck?`.
struct HistorySearch: Sendable, Hashable {
    /// History lines, newest first, each once.
    let entries: [String]
    /// What the user typed since Ctrl-R.
    private(set) var pattern = ""
    /// The entry on screen, if any matched.
    private(set) var matchIndex: Int?
    /// True when the pattern (or Ctrl-R once more) found nothing.
    private(set) var isFailing = false

    /// A search over `entries` (newest first); repeated lines are searched once, at their
    /// newest place.
    init(entries: [String]) {
        var seen = Set<String>()
        self.entries = entries.filter { seen.insert($0).inserted }
    }

    /// The history line on screen, or nil while nothing matched.
    var match: String? { matchIndex.map { entries[$0] } }

    /// What the prompt reads during the search.
    var prompt: String {
        "(\(isFailing ? "failed " : "")history search)`\(pattern)': "
    }

    /// The user typed `text`: the shown line is kept if it still matches, else an older one.
    mutating func type(_ text: String) {
        pattern += text
        show(firstMatch(from: matchIndex ?? 0))
    }

    /// Backspace: one character less, searched again from the newest line.
    mutating func deleteBackward() {
        guard !pattern.isEmpty else { return }
        pattern.removeLast()
        matchIndex = nil
        isFailing = false
        if !pattern.isEmpty { show(firstMatch(from: 0)) }
    }

    /// Ctrl-R again: the next older line that matches. With nothing typed, every line does.
    mutating func older() {
        show(firstMatch(from: (matchIndex ?? -1) + 1))
    }

    /// Shows `found`, or keeps the line on screen and says the search failed.
    private mutating func show(_ found: Int?) {
        if let found { matchIndex = found }
        isFailing = found == nil
    }

    private func firstMatch(from start: Int) -> Int? {
        guard start < entries.count else { return nil }
        return entries[start...].firstIndex { pattern.isEmpty || $0.contains(pattern) }
    }
}
