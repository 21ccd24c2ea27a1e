/// Identifies one presentation of the chat; product refs carry it (PR6, PR8).
struct OpeningID: Hashable, Sendable, CustomStringConvertible {
    let value: UInt64
    var description: String { "opening#\(value)" }
}

/// Who holds the presentation lock (B6). Not counted: each holder holds it or not.
public struct PresentationLocks: Sendable, Hashable, CustomStringConvertible {
    /// The app's own lock (`lockPresentation()`), never touched by the assistant (O6).
    public var app: Bool
    /// The assistant's lock, held exactly while the chat is presented (O5).
    public var assistant: Bool

    public init(app: Bool = false, assistant: Bool = false) {
        self.app = app
        self.assistant = assistant
    }

    /// While any lock is held, auto-shown in-app campaigns are suppressed (B6, O7).
    public var isLocked: Bool { app || assistant }

    public var description: String {
        let holders = [app ? "app" : nil, assistant ? "assistant" : nil].compactMap { $0 }
        return holders.isEmpty ? "none" : holders.joined(separator: ", ")
    }
}

/// Opening and closing the chat (O1–O6) and the presentation locks (B6), as a value type.
struct PresentationMachine: Sendable {
    enum State: Sendable, Hashable {
        case closed
        case open(OpeningID)
        /// The presenter is being told to dismiss; the lock is still held (O5).
        case closing(OpeningID)
    }

    enum Action: Sendable, Hashable {
        /// Locks changed: tell the listener.
        case notifyLocks(PresentationLocks)
        /// Show the chat on the presenter given to `open`.
        case present(OpeningID)
        /// Ask the presenter to dismiss the chat.
        case dismiss(OpeningID)
        /// The chat is fully closed: the lock is released; run what waited for the close.
        case closed(OpeningID)
    }

    private(set) var state: State = .closed
    private(set) var locks = PresentationLocks()
    private var lastOpening: UInt64 = 0

    /// The opening whose refs are current, if the chat is open (PR8).
    var currentOpening: OpeningID? {
        if case .open(let id) = state { return id }
        return nil
    }

    /// O1–O4. `isReady` is whether the latest preparation is ready; `presenter` its availability.
    mutating func open(isReady: Bool, presenter: AssistantPresenterAvailability) -> (AssistantOpenResult, [Action]) {
        switch state {
        case .open, .closing: return (.alreadyOpen, [])  // O4
        case .closed: break
        }
        guard isReady else { return (.notReady, []) }  // O2
        guard presenter == .available else { return (.invalidPresenter, []) }  // O3
        lastOpening += 1
        let id = OpeningID(value: lastOpening)
        state = .open(id)
        locks.assistant = true  // O5: the lock is taken before presenting
        return (.opened, [.notifyLocks(locks), .present(id)])
    }

    /// `closeAssistant()`: dismiss, then release the lock once dismissed.
    mutating func close() -> [Action] {
        guard case .open(let id) = state else { return [] }
        state = .closing(id)
        return [.dismiss(id)]
    }

    /// The presenter finished dismissing, dismissed by itself, or went away (O5).
    mutating func dismissed() -> [Action] {
        switch state {
        case .closed: return []
        case .open(let id), .closing(let id):
            state = .closed
            locks.assistant = false  // O6: only the assistant's own lock
            return [.notifyLocks(locks), .closed(id)]
        }
    }

    mutating func lockByApp() -> [Action] {
        guard !locks.app else { return [] }
        locks.app = true
        return [.notifyLocks(locks)]
    }

    mutating func unlockByApp() -> [Action] {
        guard locks.app else { return [] }
        locks.app = false
        return [.notifyLocks(locks)]
    }
}
