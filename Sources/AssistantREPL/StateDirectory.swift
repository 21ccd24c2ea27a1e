import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where the REPL keeps what outlives a session: the line history (`history`), the delivery
/// queue (`outbox/`) and, against live services, the SDK-managed identity (`identity.json`).
///
/// `--state-dir` names it; without it, it is `$XDG_STATE_HOME/shopping-assistant` or
/// `~/.local/state/shopping-assistant`, the directory `FileIdentityStore.defaultLocation`
/// uses, so the REPL and an embedding app on the same machine agree. XDG requires an absolute
/// `XDG_STATE_HOME`; a relative or empty one is ignored.
package struct StateDirectory: Sendable, Hashable {
    /// The directory's name under the XDG state home.
    package static let name = "shopping-assistant"

    /// The directory, as given or derived (not resolved against the working directory).
    package let path: String

    package init(path: String) {
        self.path = path
    }

    /// The line history, 0600.
    package var historyPath: String { Self.joined(path, "history") }

    /// The SDK-managed identity, against live services.
    package var identityFile: URL { URL(fileURLWithPath: Self.joined(path, "identity.json")) }

    /// The current dialog (`FileDialogStore`), beside the identity: the conversation the next
    /// start brings back (D18).
    package var dialogFile: URL { URL(fileURLWithPath: Self.joined(path, "dialog.bin")) }

    /// The demo store's SDK-managed identity: a restarted demo session is the same visitor, as
    /// an app restarted against the real service is.
    package var demoIdentityFile: URL { URL(fileURLWithPath: Self.joined(path, "demo-identity.json")) }

    /// What the demo store's Shopping API received (`DemoStore.keepThreads`): a restarted demo
    /// session meets the same server, with the same threads and history.
    package var demoThreadsFile: URL { URL(fileURLWithPath: Self.joined(path, "demo-threads.jsonl")) }

    /// The delivery queue's journals (`FileDeliveryStore`), beside the identity.
    package var outboxDirectory: URL { URL(fileURLWithPath: Self.joined(path, "outbox"), isDirectory: true) }

    /// The default directory, or nil without an absolute `XDG_STATE_HOME` or `HOME` (history
    /// then stays in memory, and so does the identity). Nothing is created here: the files'
    /// writers create the directory when they first write.
    package static func standard(environment: [String: String]) -> StateDirectory? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return StateDirectory(path: joined(state, name))
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return StateDirectory(path: joined(home, ".local/state/" + name))
        }
        return nil
    }

    /// The directory `--state-dir` names, created (0700, with its parents) when missing and
    /// checked for writing, so a bad value is an error at start rather than a history that
    /// silently never saves.
    package static func prepare(_ path: String) throws(CommandLineOptions.ParseError) -> StateDirectory {
        func invalid(_ reason: String) -> CommandLineOptions.ParseError {
            CommandLineOptions.ParseError(.invalidValue(source: "--state-dir", value: path, reason: reason))
        }
        guard !path.isEmpty else { throw invalid("it is empty") }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw invalid("it is not a directory") }
        } else if let failure = makeDirectories(path) {
            throw invalid("cannot create it: \(failure)")
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw invalid("it is not writable: \(String(cString: strerror(errno)))")
        }
        return StateDirectory(path: path)
    }

    /// The directory a session keeps its files in, and the warning to print once when there is
    /// none: `--state-dir` must be usable (else a usage error); the default is used when it can
    /// be written or created, and otherwise dropped with one warning saying what is lost, so
    /// the history (`history`) and the identity (`identity`, live services) stay in memory
    /// instead of failing at every line. With neither, nothing is written there and nothing
    /// is checked.
    package static func resolve(
        explicit: String?, environment: [String: String], history: Bool, identity: Bool
    ) throws(CommandLineOptions.ParseError) -> (directory: StateDirectory?, warning: String?) {
        if let explicit { return (try prepare(explicit), nil) }
        guard let directory = standard(environment: environment) else { return (nil, nil) }
        guard history || identity, let reason = directory.unwritableReason() else { return (directory, nil) }
        let kept = [history ? "the line history" : nil, identity ? "the identity" : nil].compactMap { $0 }
        let warning =
            "warning: cannot keep state in \(directory.path) (\(reason)): \(kept.joined(separator: " and ")) "
            + "\(kept.count > 1 ? "last" : "lasts") only for this session; --state-dir DIR keeps "
            + "\(kept.count > 1 ? "them" : "it") elsewhere"
        return (nil, warning)
    }

    /// Why the directory cannot be written or made, or nil when it can: its nearest existing
    /// ancestor must be a directory this process may write (nothing is created here).
    package func unwritableReason() -> String? {
        var candidate = path
        while true {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else { return "\(candidate) is not a directory" }
                guard access(candidate, W_OK | X_OK) == 0 else {
                    return "\(candidate): \(String(cString: strerror(errno)))"
                }
                return nil
            }
            let parent = (candidate as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != candidate else { return nil }
            candidate = parent
        }
    }

    /// `mkdir -p` with mode 0700; the system's reason when a component cannot be made.
    private static func makeDirectories(_ path: String) -> String? {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: prefix, isDirectory: &isDirectory) {
                if isDirectory.boolValue { continue }
                return "\(prefix) is not a directory"
            }
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                return String(cString: strerror(errno))
            }
        }
        return nil
    }

    private static func joined(_ directory: String, _ rest: String) -> String {
        directory.hasSuffix("/") ? directory + rest : directory + "/" + rest
    }
}
