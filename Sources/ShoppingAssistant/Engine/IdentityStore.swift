import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the SDK-managed `uid` survives restarts (B3; `UserDefaults` on mobile).
public protocol IdentityStore: Sendable {
    /// The persisted uid, or `nil` on a first start; called once, when the engine is created (B3).
    /// Must not throw or block for long: an unreadable store means a fresh identity.
    func loadUid() -> String?
    /// Persists the uid Gravity returned, or `nil` after `resetIdentity()` (B3). Called from the
    /// engine's actor; a failure is the store's to report through the warning handler.
    func saveUid(_ uid: String?)
    /// Persists `uid` as `saveUid(_:)` does, and says whether the store took it: `false` when it
    /// refused the write (a full disk, a read-only directory), after reporting why through the
    /// warning handler. The engine calls this one, so that a refused uid is not lost: it keeps
    /// the uid in memory and writes it again each time Gravity answers with it, until a write is
    /// taken (B14). The default calls `saveUid(_:)` and answers `true`: a store that cannot
    /// refuse implements `saveUid(_:)` alone.
    func attemptToSaveUid(_ uid: String?) -> Bool
    /// Where the store reports problems it recovered from on its own (a corrupt file it
    /// replaced with a fresh identity, a write that failed), so they reach the engine's log
    /// instead of vanishing. The engine sets it once, when it is created, before `loadUid()`.
    /// The default implementation ignores it: a store with nothing to report needs nothing.
    func setWarningHandler(_ handler: @escaping @Sendable (String) -> Void)
}

extension IdentityStore {
    /// Ignores the handler, for stores that never recover from anything on their own.
    public func setWarningHandler(_ handler: @escaping @Sendable (String) -> Void) {}

    /// Saves with `saveUid(_:)`, for stores that never refuse a write: the uid is taken.
    public func attemptToSaveUid(_ uid: String?) -> Bool {
        saveUid(uid)
        return true
    }
}

/// Keeps the uid in memory only: for tests and for hosts that manage identity themselves.
public final class InMemoryIdentityStore: IdentityStore {
    private let uid: Locked<String?>

    /// Starts with `uid`, as if a previous run had saved it; `nil` is a first start.
    public init(uid: String? = nil) { self.uid = Locked(uid) }

    /// The uid last saved, or the one given at creation.
    public func loadUid() -> String? { uid.withLock { $0 } }
    /// Keeps `uid` until the process ends; nothing reaches the disk.
    public func saveUid(_ uid: String?) { self.uid.withLock { $0 = uid } }
}

/// Keeps the uid in a small JSON file, by default `$XDG_STATE_HOME/shopping-assistant/identity.json`
/// (or `~/.local/state/…`).
///
/// A crash never leaves a half-written file: a save writes a temporary file in the same
/// directory, flushes it to disk, renames it over the old one and flushes the directory, so
/// the file is always the old identity or the new one. A file that cannot be read as an
/// identity (corrupt, truncated by something else, not JSON, too large) is reported through
/// the warning handler, moved aside to `<name>.corrupt` for inspection, and read as "no uid
/// yet": the user starts with a fresh identity and the engine never stops over it.
public final class FileIdentityStore: IdentityStore {
    private struct Stored: Codable { var uid: String? }

    private struct State {
        var warn: (@Sendable (String) -> Void)?
        /// Warnings from before a handler was set, delivered when one is.
        var pending: [String] = []
    }

    /// More than any identity file this store writes; a larger file is not read into memory.
    static let maximumFileBytes = 64 * 1024

    /// The identity file; its directory is created on the first save.
    public let fileURL: URL
    private let state = Locked(State())

    /// Nothing is read or written until the engine loads the uid, so creating a store is free
    /// and cannot fail.
    public init(fileURL: URL) { self.fileURL = fileURL }

    /// `$XDG_STATE_HOME/shopping-assistant/identity.json`, else under `~/.local/state`: per user,
    /// so two users of one machine never share a uid.
    public static func defaultLocation(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty {
            base = URL(fileURLWithPath: state, isDirectory: true)
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            base = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
                ".local/state", isDirectory: true)
        }
        return base.appendingPathComponent("shopping-assistant/identity.json")
    }

    /// Delivers the warnings of loads that happened before it was set, then each new one.
    public func setWarningHandler(_ handler: @escaping @Sendable (String) -> Void) {
        let pending = state.withLock { state -> [String] in
            state.warn = handler
            defer { state.pending = [] }
            return state.pending
        }
        for warning in pending { handler(warning) }
    }

    /// The stored uid; an unreadable file is moved aside and reads as "no uid yet", with a warning.
    public func loadUid() -> String? {
        let (uid, warning) = state.withLock { _ -> (String?, String?) in
            removeAbandonedTemporaryFiles()
            switch read() {
            case .absent:
                return (nil, nil)
            case .stored(let uid):
                return (uid, nil)
            case .unusable(let reason):
                let aside = fileURL.path + ".corrupt"
                let moved = rename(fileURL.path, aside) == 0
                return (
                    nil,
                    "the identity file \(fileURL.path) \(reason); starting with a fresh identity"
                        + (moved ? " (the file was moved to \(aside))" : "")
                )
            }
        }
        if let warning { deliver(warning) }
        return uid
    }

    /// Replaces the file atomically: after a crash it holds the old uid or the new one, never half.
    public func saveUid(_ uid: String?) {
        _ = attemptToSaveUid(uid)
    }

    /// Replaces the file atomically, and answers `false` when it could not be written (the
    /// directory cannot be made, the disk is full or read-only): the file then still holds the
    /// uid it held, and the warning handler has heard why (B14).
    public func attemptToSaveUid(_ uid: String?) -> Bool {
        let failure = state.withLock { _ -> String? in
            let directory = fileURL.deletingLastPathComponent().path
            if !FileManager.default.fileExists(atPath: directory) {
                try? FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            guard let data = try? JSONEncoder().encode(Stored(uid: uid)) else { return "could not be encoded" }
            return AtomicFile.replace(fileURL.path, with: data)
        }
        guard let failure else { return true }
        deliver("the identity could not be saved to \(fileURL.path): \(failure)")
        return false
    }

    // MARK: - Reading

    private enum Contents {
        case absent
        case stored(String?)
        case unusable(String)
    }

    private func read() -> Contents {
        let path = fileURL.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == ENOENT ? .absent : .unusable("cannot be read (errno \(errno))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return .unusable("is not a regular file") }
        guard info.st_size <= Self.maximumFileBytes else { return .unusable("is too large (\(info.st_size) bytes)") }
        guard let data = FileManager.default.contents(atPath: path) else { return .unusable("cannot be read") }
        guard let stored = try? JSONDecoder().decode(Stored.self, from: data) else {
            return .unusable("is corrupt (\(data.count) bytes that are not an identity)")
        }
        if let uid = stored.uid, uid.isEmpty { return .unusable("holds an empty uid") }
        return .stored(stored.uid)
    }

    /// Temporary files of saves that never finished: their process is gone.
    private func removeAbandonedTemporaryFiles() {
        let directory = fileURL.deletingLastPathComponent().path
        let prefix = AtomicFile.temporaryPrefix(for: fileURL.lastPathComponent)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            let pid = name.dropFirst(prefix.count).prefix { $0 != "-" }
            guard let pid = Int32(pid), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(directory + "/" + name)
        }
    }

    // MARK: - Warnings

    private func deliver(_ warning: String) {
        let handler = state.withLock { state -> (@Sendable (String) -> Void)? in
            if state.warn == nil { state.pending.append(warning) }
            return state.warn
        }
        handler?(warning)
    }
}
