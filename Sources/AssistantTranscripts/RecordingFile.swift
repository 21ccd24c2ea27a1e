import Foundation
import ShoppingAssistant

#if canImport(Glibc)
    import Glibc
#endif

/// The file a recording goes to, opened when the session starts so that a path it cannot
/// write, or a file that is already there, is said at once — not at `:quit`, after the session
/// it would have held. Each step is appended as it is settled (`TranscriptRecorder`).
package final class RecordingFile: Sendable {
    /// Why the file cannot be recorded into, in one line.
    package enum OpenError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The file is already there and `--force` was not given.
        case exists(String)
        /// It cannot be created or written: the path and the system's reason.
        case cannotWrite(String, String)

        package var description: String {
            switch self {
            case .exists(let path):
                return "\(path) already exists: --record writes a new transcript (--force replaces it)"
            case .cannotWrite(let path, let reason): return "cannot record to \(path): \(reason)"
            }
        }
    }

    package let path: String
    private let descriptor: Locked<Int32>
    /// The first write that failed, reported when the recording ends.
    private let failure = Locked<String?>(nil)

    /// Creates `path` for writing; one that exists is refused unless `replacing`, when it is
    /// emptied.
    package static func create(_ path: String, replacing: Bool) throws(OpenError) -> RecordingFile {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (replacing ? O_TRUNC : O_EXCL)
        let descriptor = open(path, flags, 0o644)
        guard descriptor >= 0 else {
            if errno == EEXIST { throw .exists(path) }
            throw .cannotWrite(path, String(cString: strerror(errno)))
        }
        return RecordingFile(path: path, descriptor: descriptor)
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Locked(descriptor)
    }

    /// Appends `lines`, each followed by a newline. A failure is kept for `close()`.
    func append(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    let reason = String(cString: strerror(errno))
                    failure.withLock { $0 = $0 ?? reason }
                    return
                }
                offset += written
            }
        }
    }

    /// Closes the file; throws the first write that failed, if one did.
    func close() throws(OpenError) {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { _ = Glibc.close(descriptor) }
            descriptor = -1
        }
        if let reason = failure.withLock({ $0 }) { throw .cannotWrite(path, reason) }
    }
}
