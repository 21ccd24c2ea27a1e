/// `swift test` reads the test process's output in 4 KB pieces and drops a piece that ends
/// inside a UTF-8 sequence: a report over 4 KB with Cyrillic or box-drawing text vanishes
/// from the console, whole or in part, with nothing to say so. A long report is therefore
/// recorded as several issues of at most `maximumBytes`, each saying which part it is, so
/// the diff prints whole.
package enum ConsoleParts {
    package static let maximumBytes = 3_000

    package static func split(_ report: String, title: String) -> [String] {
        guard report.utf8.count > maximumBytes else { return [report] }
        var pieces: [String] = []
        for line in report.split(separator: "\n", omittingEmptySubsequences: false) {
            var rest = Substring(line)
            var first = true
            repeat {
                // A line longer than a part goes on in the next piece, marked with `…`.
                var take = rest.startIndex
                var bytes = first ? 0 : 3
                while take < rest.endIndex, bytes + rest[take].utf8.count <= maximumBytes - 200 {
                    bytes += rest[take].utf8.count
                    take = rest.index(after: take)
                }
                if take == rest.startIndex, take < rest.endIndex { take = rest.index(after: take) }
                pieces.append((first ? "" : "…") + rest[..<take])
                rest = rest[take...]
                first = false
            } while !rest.isEmpty
        }
        var parts: [[String]] = [[]]
        var size = 0
        for piece in pieces {
            if size + piece.utf8.count + 1 > maximumBytes - 100, !(parts.last ?? []).isEmpty {
                parts.append([])
                size = 0
            }
            parts[parts.count - 1].append(piece)
            size += piece.utf8.count + 1
        }
        return parts.enumerated().map { index, lines in
            "\(title) (part \(index + 1) of \(parts.count)):\n" + lines.joined(separator: "\n")
        }
    }
}
