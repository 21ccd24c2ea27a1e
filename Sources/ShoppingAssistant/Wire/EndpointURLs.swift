import Foundation

/// Endpoint URLs (`base` + a path), resolved once per process: Foundation's
/// `appendingPathComponent` costs several microseconds a call, more than the rest of building
/// a request, and an engine that kept its own resolved copies would take kilobytes more each.
/// Engines of one process nearly always share their base URLs, so they share these too. The
/// bases are the services' http(s) URLs: nothing here asks the file system (as
/// `appendingPathComponent` may for a `file:` URL), so a cached answer cannot go stale.
enum EndpointURLs {
    private struct Key: Hashable {
        let base: URL
        let path: String
    }

    /// A handful of base URLs per process is the rule; a process that makes engines for ever
    /// new ones (a test per loopback port) starts the cache over instead of growing it.
    private static let capacity = 64
    private static let cache = Locked<[Key: URL]>([:])

    /// `base.appendingPathComponent(path)`.
    static func url(_ base: URL, _ path: String) -> URL {
        let key = Key(base: base, path: path)
        if let url = cache.withLock({ $0[key] }) { return url }
        let url = base.appendingPathComponent(path)
        cache.withLock { cache in
            if cache.count >= capacity { cache.removeAll() }
            cache[key] = url
        }
        return url
    }
}
