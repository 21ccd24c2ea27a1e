import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Makes the session configurations `URLSessionTransport` starts from: no cookies, no cache,
/// no credential store, and no trace of them on disk.
///
/// On Linux, swift-corelibs-foundation builds every configuration, `.ephemeral` included, from
/// `.default`, which creates the process-wide cookie store and URL cache on first use. Each
/// makes its directory: `~/.local/share/<name of the executable's directory>` (`debug` for a
/// `swift run` build) and `~/.cache/org.swift.foundation.URLCache/<process name>`; `.ephemeral`
/// then makes its own in-memory cache, which creates the second directory again. No public
/// initializer avoids this. So the factory reads `.default` once per process, and removes the
/// directories that this first read created and left empty (`rmdir` never removes a directory
/// with content). The transport's sessions use neither store.
enum SessionConfigurationFactory {
    /// A fresh configuration for one session.
    static func make() -> URLSessionConfiguration {
        // `copy()` of an `URLSessionConfiguration` is one; a failed cast cannot happen.
        let configuration = (template.copy() as? URLSessionConfiguration) ?? template
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.urlCredentialStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// `.default`, read once, with what reading it left on disk cleaned up.
    private static let template: URLSessionConfiguration = {
        #if canImport(FoundationNetworking)
            let candidates = sideEffectDirectories()
            let existedBefore = candidates.filter { FileManager.default.fileExists(atPath: $0) }
            let configuration = URLSessionConfiguration.default
            // Deepest first, so that a parent this read created is empty when its turn comes.
            for path in candidates.sorted(by: { $0.count > $1.count }) where !existedBefore.contains(path) {
                _ = rmdir(path)
            }
            return configuration
        #else
            return URLSessionConfiguration.default
        #endif
    }()

    /// The directories swift-corelibs-foundation creates for the shared cookie store and the
    /// shared URL cache, worked out the way it does, with all their parents.
    static func sideEffectDirectories() -> [String] {
        let fileManager = FileManager.default
        var directories: [URL] = []
        if let support = fileManager.urls(for: .applicationSupportDirectory, in: .userDomainMask).first {
            var bundleName = (Bundle.main.bundlePath as NSString).lastPathComponent
            if let dot = bundleName.range(of: ".", options: .backwards) {
                bundleName = String(bundleName[..<dot.lowerBound])
            }
            if !bundleName.isEmpty { directories.append(support.appendingPathComponent(bundleName)) }
        }
        if let caches = fileManager.urls(for: .cachesDirectory, in: .userDomainMask).first {
            let name = (Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName)
                .replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "\\", with: "_")
                .replacingOccurrences(of: ":", with: "_")
            directories.append(
                caches.appendingPathComponent("org.swift.foundation.URLCache").appendingPathComponent(name))
        }
        // Each target and its parents: creating a directory creates its missing parents, and
        // only what did not exist before the read is ever removed, so the walk can go to "/".
        var paths: Set<String> = []
        for directory in directories {
            var path = (directory.path as NSString).standardizingPath
            while path.count > 1 {
                paths.insert(path)
                path = (path as NSString).deletingLastPathComponent
            }
        }
        return Array(paths)
    }
}
