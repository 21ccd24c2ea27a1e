import ShoppingAssistant

/// An identity store that keeps the uid in memory, records every write the engine asks for,
/// and refuses writes while a test says so — the way a full disk or a read-only state
/// directory refuses them — reporting each refusal through its warning handler, as
/// `FileIdentityStore` does.
///
/// With it a test sees what reached the store and what the engine did when the store said no:
/// the uid kept in memory, and written again when Gravity answers with it (B14).
public final class RecordingIdentityStore: IdentityStore {
    private struct State {
        var uid: String?
        var saves: [String?] = []
        var refusesWrites = false
        var warn: (@Sendable (String) -> Void)?
    }

    private let state: Locked<State>
    private let waiters = Waitlist()

    /// Starts holding `uid`, as if a previous run had saved it; `nil` is a first start.
    public init(uid: String? = nil) { state = Locked(State(uid: uid)) }

    /// Whether writes are refused from now on: each is recorded, warned about, and changes
    /// nothing the store holds. Set it back to `false` and the next write is taken.
    public var refusesWrites: Bool {
        get { state.withLock { $0.refusesWrites } }
        set { state.withLock { $0.refusesWrites = newValue } }
    }

    /// Every write the engine asked for, refused ones included, in order.
    public var saves: [String?] { state.withLock { $0.saves } }

    /// The uid the store holds: the last one it took, or the one it started with.
    public func loadUid() -> String? { state.withLock { $0.uid } }

    /// Takes `uid`, unless writes are refused.
    public func saveUid(_ uid: String?) { _ = attemptToSaveUid(uid) }

    /// Records the write and takes it, or refuses it with a warning while `refusesWrites`.
    public func attemptToSaveUid(_ uid: String?) -> Bool {
        let (taken, warn) = state.withLock { state -> (Bool, (@Sendable (String) -> Void)?) in
            state.saves.append(uid)
            guard !state.refusesWrites else { return (false, state.warn) }
            state.uid = uid
            return (true, nil)
        }
        waiters.recheck()
        if !taken { warn?("the identity could not be saved: the store refused the write") }
        return taken
    }

    /// Where refusals are reported; the engine sets it when it is created.
    public func setWarningHandler(_ handler: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.warn = handler }
    }

    /// Suspends until `count` writes were asked for in total, or the test is cancelled. A write
    /// happens inside an event of the engine's actor, so once it is seen, the rest of that
    /// event is done before the test's next call to the engine.
    public func waitForSaves(_ count: Int) async {
        await waiters.wait { [state] in state.withLock { $0.saves.count >= count } }
    }
}
