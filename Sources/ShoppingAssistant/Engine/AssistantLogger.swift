/// Log levels of B2, most verbose first. `.none` silences the engine.
public enum AssistantLogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// From most to least verbose: `.debug` adds HTTP traffic and chat text, `.none` is silence.
    case debug, info, error, none

    /// `.debug` < `.info` < `.error` < `.none`: a message passes when its level is at least the logger's.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level's lower-case name, as a host would accept it in a flag or a setting.
    public var description: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .error: return "error"
        case .none: return "none"
        }
    }
}

/// The engine's logger (B2): messages that pass the level go to the listener. HTTP traffic
/// and chat text are logged only at `.debug`; the API key never reaches a message.
public final class AssistantLogger: Sendable {
    /// Receives each message that passes the level, synchronously, on the logging thread —
    /// the engine's, a transport's, or the one queue every engine's tracking shares: it must
    /// return quickly and never block, or tracking (and its deadlines, B13) waits for it.
    public typealias Listener = @Sendable (AssistantLogLevel, String) -> Void

    private struct State {
        var level: AssistantLogLevel
        var listener: Listener?
        var secrets: [String]
        /// The least level delivered (its raw value), `Int.max` when nothing is: one comparison
        /// decides that a message is dropped.
        var threshold: Int

        init(level: AssistantLogLevel, listener: Listener?) {
            self.level = level
            self.listener = listener
            secrets = []
            threshold = Int.max
            updateThreshold()
        }

        mutating func updateThreshold() {
            threshold = listener == nil || level == .none ? Int.max : level.rawValue
        }
    }

    /// Everything, under one lock: a message costs one uncontended lock whether it is
    /// delivered or not (`Locked`, not an atomic: `Synchronization` is newer than the
    /// package's platform floors).
    private let state: Locked<State>

    /// A logger for a host that wants its own listener before the engine exists; pass it to
    /// `AssistantEngine.init(logger:)`. Without a listener nothing is delivered.
    public init(level: AssistantLogLevel = .error, listener: Listener? = nil) {
        state = Locked(State(level: level, listener: listener))
    }

    /// Can be changed at any time, from any thread; the next message follows the new level.
    public var level: AssistantLogLevel {
        get { state.withLock { $0.level } }
        set {
            state.withLock { state in
                state.level = newValue
                state.updateThreshold()
            }
        }
    }

    /// Replaces the listener; `nil` stops delivery.
    public func setListener(_ listener: Listener?) {
        state.withLock { state in
            state.listener = listener
            state.updateThreshold()
        }
    }

    /// Strings that are replaced by `<redacted>` in every message (the API key).
    func addSecret(_ secret: String) {
        guard !secret.isEmpty else { return }
        state.withLock { $0.secrets.append(secret) }
    }

    /// Whether a message of this level would be delivered; lets callers skip building it.
    public func isEnabled(_ level: AssistantLogLevel) -> Bool {
        level != .none && level.rawValue >= state.withLock { $0.threshold }
    }

    /// Delivers `message` to the listener when `level` passes, with the API key redacted (B2).
    /// The message is only built when it will be delivered, so a `.debug` dump costs nothing otherwise.
    public func log(_ level: AssistantLogLevel, _ message: @autoclosure () -> String) {
        guard level != .none else { return }
        let (listener, secrets) = state.withLock { state -> (Listener?, [String]) in
            guard level.rawValue >= state.threshold else { return (nil, []) }
            return (state.listener, state.secrets)
        }
        guard let listener else { return }
        var text = message()
        for secret in secrets { text = text.replacingOccurrences(of: secret, with: "<redacted>") }
        listener(level, text)
    }
}
