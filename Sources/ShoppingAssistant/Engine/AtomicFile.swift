import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replaces a small file so that a crash at any moment leaves either the old contents or the
/// new ones, never a mix: write a temporary file in the same directory (so the rename cannot
/// cross file systems), flush it to disk, rename it over the target, flush the directory so
/// the rename itself survives a power cut.
package enum AtomicFile {
    /// The name temporary files of `name` start with; what follows is `<pid>-<random>`.
    package static func temporaryPrefix(for name: String) -> String { ".\(name).tmp-" }

    /// Writes `data` to `path` with mode `permissions`. Returns `nil` on success, else what
    /// failed; the old file is then untouched and no temporary file is left.
    package static func replace(_ path: String, with data: Data, permissions: mode_t = 0o600) -> String? {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary =
            (directory.isEmpty ? "" : directory + "/") + temporaryPrefix(for: name)
            + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, permissions)
        guard fd >= 0 else { return "cannot create \(temporary) (errno \(errno))" }
        var failure: String?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, failure == nil {
                let written = write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { failure = "cannot write (errno \(errno))" } else { offset += written }
            }
        }
        if failure == nil, fchmod(fd, permissions) != 0 { failure = "cannot set permissions (errno \(errno))" }
        if failure == nil, fsync(fd) != 0 { failure = "cannot flush (errno \(errno))" }
        if close(fd) != 0, failure == nil { failure = "cannot close (errno \(errno))" }
        if failure == nil, rename(temporary, path) != 0 { failure = "cannot rename over \(path) (errno \(errno))" }
        guard failure == nil else {
            unlink(temporary)
            return failure
        }
        let directoryFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
        return nil
    }
}
