import ShoppingAssistant

/// The request headers a transcript records and matches: those that say who is calling and
/// what it sends — `Accept`, `Authorization`, `Content-Type`, `User-Agent` — in that order.
/// A change that dropped `Authorization: Bearer …` fails every file it touches.
///
/// Two are written as placeholders: the API key is `<key>` (`Authorization: Bearer <key>`),
/// so no key ever reaches a file — a replay binds `<key>` to its own key before it starts —
/// and the `User-Agent` is `<user-agent>`, which binds on first sight and must then be the
/// same on every request, whatever the version.
enum RequestHeaders {
    static let significant = ["Accept", "Authorization", "Content-Type", "User-Agent"]

    /// The placeholder the API key is written as.
    static let keyName = "key"
    static let userAgent = "<user-agent>"

    /// The significant headers of `headers` (names looked up ignoring case), as sent.
    static func sent(_ headers: [String: String]) -> [Transcript.Header] {
        significant.compactMap { name in
            headers.first { HTTPFieldName.matches($0.key, name) }.map {
                Transcript.Header(name, $0.value)
            }
        }
    }

    /// `headers` as a file writes them: `apiKey` as `<key>`, the user agent as `<user-agent>`.
    static func written(_ headers: [Transcript.Header], apiKey: String) -> [Transcript.Header] {
        headers.map { header in
            if header.name == "User-Agent" { return Transcript.Header(header.name, userAgent) }
            guard !apiKey.isEmpty else { return header }
            return Transcript.Header(header.name, header.value.replacingOccurrences(of: apiKey, with: "<\(keyName)>"))
        }
    }
}
