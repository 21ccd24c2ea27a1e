/// Log levels of B2, most verbose first. `.none` silences the engine.
public enum AssistantLogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    case debug, info, error, none

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

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
    /// Receives each message that passes the level, synchronously, on the logging thread.
    public typealias Listener = @Sendable (AssistantLogLevel, String) -> Void

    private struct State {
        var level: AssistantLogLevel
        var listener: Listener?
        var secrets: [String]
    }

    private let state: Locked<State>

    public init(level: AssistantLogLevel = .error, listener: Listener? = nil) {
        state = Locked(State(level: level, listener: listener, secrets: []))
    }

    public var level: AssistantLogLevel {
        get { state.withLock { $0.level } }
        set { state.withLock { $0.level = newValue } }
    }

    /// Replaces the listener; `nil` stops delivery.
    public func setListener(_ listener: Listener?) {
        state.withLock { $0.listener = listener }
    }

    /// Strings that are replaced by `<redacted>` in every message (the API key).
    func addSecret(_ secret: String) {
        guard !secret.isEmpty else { return }
        state.withLock { $0.secrets.append(secret) }
    }

    /// Whether a message of this level would be delivered; lets callers skip building it.
    public func isEnabled(_ level: AssistantLogLevel) -> Bool {
        level != .none && state.withLock { level >= $0.level && $0.listener != nil }
    }

    public func log(_ level: AssistantLogLevel, _ message: @autoclosure () -> String) {
        guard level != .none else { return }
        let (listener, secrets) = state.withLock { state -> (Listener?, [String]) in
            guard level >= state.level else { return (nil, []) }
            return (state.listener, state.secrets)
        }
        guard let listener else { return }
        var text = message()
        for secret in secrets { text = text.replacingOccurrences(of: secret, with: "<redacted>") }
        listener(level, text)
    }
}
