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
        let matching = bases.filter { text.hasPrefix($0.prefix + "/") }
        guard let longest = matching.map(\.prefix.count).max() else { return ("tracking", text) }
        let target = String(text.dropFirst(longest))
        let closest = matching.filter { $0.prefix.count == longest }
        guard closest.count == 1 else {
            // One base URL for both services (a proxy in front of both): the path tells them
            // apart, as Gravity's three endpoints are not the Shopping API's.
            let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target
            return (Self.gravityPaths.contains(path) ? "gravity" : "shopping", target)
        }
        return (closest[0].name, target)
    }

    /// The paths of Gravity's endpoints under its base URL (wire.md).
    private static let gravityPaths: Set<String> = ["/visit", "/choose", "/event"]
}
