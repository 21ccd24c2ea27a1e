import CLibeditShim
import Foundation
import ShoppingAssistant

#if canImport(Glibc)
    import Glibc
#endif

/// The line history on disk, which every REPL of one user shares: each entered line is
/// appended, whole, under an exclusive lock, so two REPLs at once keep every line of both (a
/// rewrite of the whole history, last writer wins, would drop the other's lines).
///
/// - The lock is `flock(2)` on `<file>.lock` (0600), held only while one line is appended or
///   the file is compacted; the history file is opened again under each lock, so a writer
///   always appends to the file a compaction put in place.
/// - An append is one `write(2)` of the encoded line and its newline, flushed to disk: a crash
///   between two appends leaves whole lines, and loses no earlier one.
/// - When this REPL has seen the file grow past twice the history's size, it compacts it under
///   the lock: it reads the file as it is then (the lines of other REPLs included), keeps the
///   newest `size` lines, and writes them through a temporary file (0600) and `rename(2)`, so
///   the file is always the old history or the new one.
/// - Lines are encoded exactly as libedit writes them (`cle_history_encode`), so `H_LOAD`
///   reads the file back.
final class HistoryFile: Sendable {
    let path: String
    /// How many lines the history keeps: a compaction keeps the newest this many.
    let size: Int
    private let lockPath: String
    /// Lines in the file as far as this REPL knows: what it loaded, plus its appends.
    private let lines: Locked<Int>

    /// `loadedLines` is how many lines the file held when the history was loaded from it.
    init(path: String, size: Int, loadedLines: Int) {
        self.path = path
        self.size = max(1, size)
        lockPath = path + ".lock"
        lines = Locked(loadedLines)
    }

    /// Counts the entries of an existing history file (its lines after the header), or 0.
    static func countLines(at path: String) -> Int {
        guard let data = FileManager.default.contents(atPath: path) else { return 0 }
        return max(0, data.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } - 1)
    }

    /// Appends `line` to the file, creating it (0600, with libedit's header) when missing;
    /// false when it could not be written.
    @discardableResult
    func append(_ line: String) -> Bool {
        guard let raw = cle_history_encode(line) else { return false }
        let encoded = String(cString: raw)
        free(raw)
        // The encoding is a one-line history file: header, newline, the line, newline.
        guard let newline = encoded.firstIndex(of: "\n") else { return false }
        let header = Array(encoded[...newline].utf8)
        let entry = Array(encoded[encoded.index(after: newline)...].utf8)
        let written = withLock {
            let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            var info = stat()
            let isNew = fstat(descriptor, &info) == 0 && info.st_size == 0
            // One write: the header of a new file goes with its first line.
            let bytes = isNew ? header + entry : entry
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            return count == bytes.count && fsync(descriptor) == 0
        }
        guard written else { return false }
        let grown = lines.withLock { count -> Bool in
            count += 1
            return count > 2 * size
        }
        if grown { compact() }
        return true
    }

    /// Rewrites the file with its newest `size` lines, under the lock.
    func compact() {
        withLock {
            guard let data = FileManager.default.contents(atPath: path) else { return }
            var all = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            if all.last?.isEmpty == true { all.removeLast() }
            guard let header = all.first else { return }
            let kept = all.dropFirst().suffix(size)
            var bytes = Data(header) + Data([UInt8(ascii: "\n")])
            for line in kept { bytes += line + [UInt8(ascii: "\n")] }
            if Self.replace(path, with: bytes) { lines.withLock { $0 = kept.count } }
        }
    }

    /// Runs halfway through a compaction's temporary file: a crash test stops the process there,
    /// so its kill lands inside the write every time, whatever the machine's speed.
    static let midWrite = Locked<(@Sendable () -> Void)?>(nil)

    /// Writes `bytes` to a temporary file (0600), flushes it, and renames it over `path`; first
    /// removes the temporary files of compactions whose process is gone (killed mid-write).
    private static func replace(_ path: String, with bytes: Data) -> Bool {
        removeAbandonedTemporaryFiles(of: path)
        let temporary = "\(path).\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return false }
        _ = fchmod(descriptor, 0o600)
        // In two halves, with the crash test's pause between them.
        let half = bytes.count / 2
        var count = bytes.prefix(half).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        midWrite.withLock { $0 }?()
        count += bytes.dropFirst(half).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        // On disk before the rename, so a power cut cannot leave the new name on empty data.
        let flushed = count == bytes.count && fsync(descriptor) == 0
        close(descriptor)
        if flushed, rename(temporary, path) == 0 { return true }
        unlink(temporary)
        return false
    }

    private static func removeAbandonedTemporaryFiles(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + "."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let pid = name.dropFirst(prefix.count).dropLast(".tmp".count)
            guard let pid = Int32(pid), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(directory + "/" + name)
        }
    }

    /// Runs `body` holding the exclusive lock that every REPL's history writer takes.
    private func withLock<T>(_ body: () -> T) -> T {
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        // Without a lock file (a read-only directory) the write below fails anyway.
        guard descriptor >= 0 else { return body() }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0, errno == EINTR {}
        defer { flock(descriptor, LOCK_UN) }
        return body()
    }
}
