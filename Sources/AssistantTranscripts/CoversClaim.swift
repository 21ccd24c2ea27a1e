/// A transcript's `# covers:` lines: the rule IDs of behavior.md it claims to demonstrate. A
/// claim of a rule the spec does not have (a typo, a rule renumbered away) fails the file, so
/// that a claim is never read as coverage that does not exist.
enum CoversClaim {
    /// The IDs a `# covers:` comment names (commas or spaces between them), nil for any other
    /// line.
    static func ids(in line: String) -> [String]? {
        guard line.hasPrefix("# covers:") else { return nil }
        return line.dropFirst("# covers:".count)
            .split { $0 == "," || $0 == " " }
            .map(String.init)
    }

    /// One problem per ID of `text`'s `# covers:` lines (those before the first input) that is
    /// not in `known`: `3: covers: ZZ99 is not a rule ID of behavior.md`, line first.
    static func problems(in text: String, known: Set<String> = BehaviorRuleIDs.all) -> [String] {
        var problems: [String] = []
        for (offset, line) in TranscriptFormat.lines(of: text).enumerated() {
            if line.hasPrefix(">") { break }
            guard let ids = ids(in: String(line)) else { continue }
            for id in ids where !known.contains(id) {
                problems.append("\(offset + 1): covers: \(id) is not a rule ID of behavior.md")
            }
        }
        return problems
    }
}
