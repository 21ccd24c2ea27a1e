import Foundation

/// Where the SDK-managed `uid` survives restarts (B3; `UserDefaults` on mobile).
public protocol IdentityStore: Sendable {
    func loadUID() -> String?
    func saveUID(_ uid: String?)
}

/// Keeps the uid in memory only: for tests and for hosts that manage identity themselves.
public final class InMemoryIdentityStore: IdentityStore {
    private let uid: Locked<String?>

    public init(uid: String? = nil) { self.uid = Locked(uid) }

    public func loadUID() -> String? { uid.withLock { $0 } }
    public func saveUID(_ uid: String?) { self.uid.withLock { $0 = uid } }
}

/// Keeps the uid in a small JSON file, by default `$XDG_STATE_HOME/shopping-assistant/identity.json`
/// (or `~/.local/state/…`). Writes are atomic; an unreadable file reads as "no uid yet".
public final class FileIdentityStore: IdentityStore {
    private struct Stored: Codable { var uid: String? }

    public let fileURL: URL
    private let lock = Locked(())

    public init(fileURL: URL) { self.fileURL = fileURL }

    /// The per-user default location.
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

    public func loadUID() -> String? {
        lock.withLock { _ in
            guard let data = try? Data(contentsOf: fileURL),
                let stored = try? JSONDecoder().decode(Stored.self, from: data)
            else { return nil }
            return stored.uid
        }
    }

    public func saveUID(_ uid: String?) {
        lock.withLock { _ in
            let directory = fileURL.deletingLastPathComponent()
            try? FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard let data = try? JSONEncoder().encode(Stored(uid: uid)) else { return }
            try? data.write(to: fileURL, options: .atomic)
            try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: fileURL.path)
        }
    }
}
