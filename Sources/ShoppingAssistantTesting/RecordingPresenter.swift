import ShoppingAssistant

/// A presenter that records every snapshot the engine pushed, so a test asserts what the user
/// would have seen instead of reading the engine's state.
///
/// It can also hold its next call of a kind until the test releases it, to observe what
/// happens while a close or an update is under way (a second tap during the close, PR9; the
/// lock held until the dismissal completes, O5). Every wait returns `false` instead of
/// hanging when the test's time limit cancels it.
///
/// The engine keeps presenters weakly (O5): keep this one alive for as long as the chat
/// should stay open.
public final class RecordingPresenter: AssistantPresenter {
    /// One call the engine made, with the snapshot it carried.
    public enum Call: Sendable, Equatable {
        /// `presentAssistant`: the chat appeared with this snapshot.
        case present(AssistantChatSnapshot)
        /// `updateAssistant`: the chat on screen changed to this snapshot.
        case update(AssistantChatSnapshot)
        /// `dismissAssistant`: the chat was asked to go away.
        case dismiss

        /// Which kind of call this is, for holding and counting.
        public var kind: CallKind {
            switch self {
            case .present: .present
            case .update: .update
            case .dismiss: .dismiss
            }
        }
    }

    /// The presenter's three callbacks, named for `hold(_:)` and `count(_:)`.
    public enum CallKind: Sendable, Hashable {
        /// `presentAssistant`.
        case present
        /// `updateAssistant`.
        case update
        /// `dismissAssistant`.
        case dismiss
    }

    private struct State {
        var availability: AssistantPresenterAvailability
        var calls: [Call] = []
        /// Kinds whose next call is to be held.
        var armed: Set<CallKind> = []
        /// Held calls, waiting for `release`.
        var held: [CallKind: CheckedContinuation<Void, Never>] = [:]
    }

    private let state: Locked<State>
    private let waiters = Waitlist()
    /// Told that a held call parks and runs again, so an engine test bed can become idle
    /// while the test holds a call.
    private let activity: ActivityMonitor?

    /// The timeline this presenter writes its dismissals to.
    public let log: HostCallLog

    /// - Parameters:
    ///   - availability: what `availability` answers until `setAvailability(_:)` changes it.
    ///   - log: shared with a `RecordingActionHandler` to check close-then-navigate (PR10).
    public convenience init(availability: AssistantPresenterAvailability = .available, log: HostCallLog = HostCallLog())
    {
        self.init(availability: availability, log: log, activity: nil)
    }

    package init(availability: AssistantPresenterAvailability, log: HostCallLog, activity: ActivityMonitor?) {
        state = Locked(State(availability: availability))
        self.log = log
        self.activity = activity
    }

    /// Whether the engine may open the chat here (O2); change it to test refusals.
    public var availability: AssistantPresenterAvailability { state.withLock { $0.availability } }

    /// Changes what `availability` answers from now on.
    public func setAvailability(_ value: AssistantPresenterAvailability) {
        state.withLock { $0.availability = value }
    }

    /// Every call so far, in order, held ones included.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// The snapshot on screen: the latest presented or updated one.
    public var latest: AssistantChatSnapshot? {
        state.withLock { state in
            for call in state.calls.reversed() {
                switch call {
                case .present(let snapshot), .update(let snapshot): return snapshot
                case .dismiss: continue
                }
            }
            return nil
        }
    }

    /// How many calls of `kind` were made, held ones included.
    public func count(_ kind: CallKind) -> Int {
        state.withLock { $0.calls.filter { $0.kind == kind }.count }
    }

    // MARK: - Holding a call

    /// Holds the next call of `kind` until `release(_:)`: the engine's call stays under way.
    public func hold(_ kind: CallKind) {
        state.withLock { _ = $0.armed.insert(kind) }
    }

    /// Lets the held call of `kind` return; with none held yet, the next one is not held after all.
    public func release(_ kind: CallKind) {
        let held = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.armed.remove(kind)
            return state.held.removeValue(forKey: kind)
        }
        guard let held else { return }
        activity?.begin()  // runnable again, counted before it is resumed
        held.resume()
    }

    /// Whether a call of `kind` is being held right now.
    public func isHolding(_ kind: CallKind) -> Bool {
        state.withLock { $0.held[kind] != nil }
    }

    /// Suspends until a call of `kind` is being held. Returns `false` if the test was
    /// cancelled first, so a call that never comes fails the test instead of hanging it.
    @discardableResult
    public func waitUntilHolding(_ kind: CallKind) async -> Bool {
        await waiters.wait { [state] in state.withLock { $0.held[kind] != nil } }
    }

    // MARK: - Waiting for what the engine shows

    /// Suspends until the snapshot on screen satisfies `condition` and returns it; `nil` if
    /// the test was cancelled first.
    @discardableResult
    public func waitForSnapshot(_ condition: @escaping @Sendable (AssistantChatSnapshot) -> Bool) async
        -> AssistantChatSnapshot?
    {
        let met = await waiters.wait { [self] in latest.map(condition) ?? false }
        return met ? latest : nil
    }

    /// Suspends until at least `count` calls were made in total; `false` if cancelled first.
    @discardableResult
    public func waitForCalls(_ count: Int) async -> Bool {
        await waiters.wait { [state] in state.withLock { $0.calls.count >= count } }
    }

    // MARK: - AssistantPresenter

    /// Records the first snapshot (and holds, if asked to).
    public func presentAssistant(_ chat: AssistantChatSnapshot) async {
        await perform(.present(chat))
    }

    /// Records the new snapshot (and holds, if asked to).
    public func updateAssistant(_ chat: AssistantChatSnapshot) async {
        await perform(.update(chat))
    }

    /// Records the dismissal on the call log, at its start and its end (and holds, if asked to).
    public func dismissAssistant() async {
        log.append(.dismissStarted)
        await perform(.dismiss)
        log.append(.dismissEnded)
    }

    private func perform(_ call: Call) async {
        let kind = call.kind
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Recording, deciding to hold and parking happen under one lock: a `release` can
            // never fall between them.
            let held = state.withLock { state -> Bool in
                state.calls.append(call)
                guard state.armed.remove(kind) != nil else { return false }
                state.held[kind] = continuation
                return true
            }
            if held {
                activity?.end()  // parked until the test releases it
            }
            waiters.recheck()
            if !held { continuation.resume() }
        }
    }
}
