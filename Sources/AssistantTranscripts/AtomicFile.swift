import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Replaces a file's contents all at once: the text goes to a temporary file beside it, which
/// is then renamed over it, so a reader (or a crash) sees the old file or the new one, never
/// half of either. The file keeps its permissions.
enum AtomicFile {
    /// Why a file could not be replaced, in one line.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func write(_ text: String, to path: String) throws(Failure) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = ((directory.isEmpty ? "." : directory) as NSString)
            .appendingPathComponent(".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let mode = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) else {
            throw Failure(description: "cannot create a file in \(directory.isEmpty ? "." : directory)")
        }
        if let mode { try? FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: temporary) }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: "cannot replace \(path): \(reason)")
        }
    }
}
