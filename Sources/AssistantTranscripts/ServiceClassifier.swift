import Foundation
import ShoppingAssistant

/// Names the service of a request the way transcripts write it: `gravity` or `shopping` with
/// the target relative to that service's base URL, or `tracking` with the whole URL.
///
/// A tracking request is told by what its URL is, not by its host: a GET of a URL that an
/// earlier answer named in an `events` list (a content's, a reply's or a product's) is
/// tracking even when it lives on the Shopping or Gravity host. The recorder and the replay
/// both learn those URLs from the answers they pass on, so a live recording against one host
/// replays against the default ones.
final class ServiceClassifier: Sendable {
    private let bases: [(name: String, prefix: String)]
    private let eventURLs = Locked<Set<String>>([])

    init(gravityBase: URL, shoppingBase: URL) {
        bases = [("gravity", gravityBase), ("shopping", shoppingBase)].map { name, base in
            let text = base.absoluteString
            return (name, text.hasSuffix("/") ? String(text.dropLast()) : text)
        }
    }

    /// Remembers the tracking URLs an answer names.
    func learn(from answer: JSONValue?) {
        guard let answer else { return }
        let urls = CanonicalJSON.eventURLs(in: answer)
        if !urls.isEmpty { eventURLs.withLock { $0.formUnion(urls) } }
    }

    /// (`gravity` | `shopping` | `tracking`, target).
    func describe(_ method: HTTPRequest.Method, _ url: URL) -> (service: String, target: String) {
        let text = url.absoluteString
        if method == .get, eventURLs.withLock({ $0.contains(text) }) { return ("tracking", text) }
        for (name, prefix) in bases where text.hasPrefix(prefix + "/") {
            return (name, String(text.dropFirst(prefix.count)))
        }
        return ("tracking", text)
    }
}
