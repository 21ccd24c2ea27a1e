/// Who holds the presentation lock (B6). Not counted: each holder holds it or not.
public struct PresentationLocks: Sendable, Hashable, CustomStringConvertible {
    /// The app's own lock (`lockPresentation()`), never touched by the assistant (O6).
    public var app: Bool
    /// The assistant's lock, held exactly while the chat is presented (O5).
    public var assistant: Bool

    /// Locks held by the app, the assistant, both or neither.
    public init(app: Bool = false, assistant: Bool = false) {
        self.app = app
        self.assistant = assistant
    }

    /// While any lock is held, auto-shown in-app campaigns are suppressed (B6, O7).
    public var isLocked: Bool { app || assistant }

    /// The holders, `app, assistant` or `none`.
    public var description: String {
        let holders = [app ? "app" : nil, assistant ? "assistant" : nil].compactMap { $0 }
        return holders.isEmpty ? "none" : holders.joined(separator: ", ")
    }
}
