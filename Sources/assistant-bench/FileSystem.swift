import Foundation

/// The file system a path is on, from `/proc/self/mounts`.
enum FileSystem {
    static func type(of path: String) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return nil }
        var best: (mountPoint: String, type: String)?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 2 else { continue }
            let mountPoint = String(fields[1])
            let prefix = mountPoint.hasSuffix("/") ? mountPoint : mountPoint + "/"
            guard path == mountPoint || path.hasPrefix(prefix), mountPoint.count >= (best?.mountPoint.count ?? -1)
            else { continue }
            best = (mountPoint, String(fields[2]))
        }
        return best.map { "\($0.type) at \($0.mountPoint)" }
    }
}
