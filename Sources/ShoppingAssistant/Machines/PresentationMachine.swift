/// Identifies one presentation of the chat; product refs carry it (PR6, PR8).
struct OpeningID: Hashable, Sendable, CustomStringConvertible {
    let value: UInt64
    var description: String { "opening#\(value)" }
}

/// Opening and closing the chat (O1–O6), the presentation locks (B6), snapshot delivery to
/// the presenter, and what waits for a close (PR10, AC5), as a value type.
///
/// The presenter is called one call at a time (present, update, dismiss, hand-over all go
/// through the actor's serial host queue), so snapshots reach it in order; while a call is
/// under way a newer snapshot waits, and only the newest is delivered next.
struct PresentationMachine: Sendable {
    enum State: Sendable, Hashable {
        case closed
        /// The presenter is being given the first snapshot; the lock is held (O5).
        case presenting(OpeningID)
        case open(OpeningID)
        /// The presenter is being told to dismiss; the lock is still held (O5).
        case closing(OpeningID)
    }

    enum Action: Sendable, Hashable {
        /// Locks changed: tell the listener.
        case notifyLocks(PresentationLocks)
        /// Give the presenter the first snapshot of `opening`.
        case present(OpeningID)
        /// Give the presenter the newest snapshot.
        case update(OpeningID)
        /// Ask the presenter to dismiss the chat.
        case dismiss(OpeningID)
        /// The chat is presented: report it and answer the callers of `open` (O1).
        case opened(OpeningID, callers: [CallID])
        /// The chat is fully closed: the lock is released (O5, O6).
        case closed(OpeningID)
        /// Hand queued navigation to the host, in order, after the close (PR10, AC5).
        case handOver([AssistantAction])
        /// These callers waited for the close and what followed it; they may return.
        case closeFinished([CloseWaiter])
        /// A snapshot was delivered: callers waiting for the presenter to see an outcome
        /// (`waitForReply`) may return.
        case delivered(revision: UInt64)
    }

    private(set) var state: State = .closed
    private(set) var locks = PresentationLocks()
    private var lastOpening: UInt64 = 0
    /// A present or update call is under way.
    private var delivering = false
    /// A newer snapshot than the one being delivered waits.
    private var pendingUpdate = false
    /// Callers of `openAssistant` waiting for the present to finish.
    private var openers: [CallID] = []
    /// Navigation to hand over once the close completes (PR10, AC5).
    private var afterClose: [AssistantAction] = []
    /// Hand-overs given to the host and not finished yet.
    private var handOversInFlight = 0
    /// Callers waiting for the close and its hand-overs to finish.
    private var closeWaiters: [CloseWaiter] = []

    /// The opening whose refs are current: the chat is being presented or is open (PR8).
    var currentOpening: OpeningID? {
        switch state {
        case .presenting(let id), .open(let id): return id
        case .closed, .closing: return nil
        }
    }

    var isClosed: Bool { state == .closed }

    /// The presentation on screen in any way: being presented, open or closing.
    var shownOpening: OpeningID? {
        switch state {
        case .presenting(let id), .open(let id), .closing(let id): return id
        case .closed: return nil
        }
    }

    var isOpen: Bool {
        if case .open = state { return true }
        return false
    }

    // MARK: - Opening (O1–O5)

    /// `openAssistant`. `isReady` is whether the latest preparation is ready (O2);
    /// `presenter` is the presenter's availability (O3).
    /// Whether the chat opens, or why not.
    enum OpenOutcome: Sendable, Hashable {
        case opening([Action])
        case refused(AssistantOpenResult)
    }

    mutating func openCalled(_ call: CallID, isReady: Bool, presenter: AssistantPresenterAvailability) -> OpenOutcome {
        guard state == .closed else { return .refused(.alreadyOpen) }  // O4
        guard isReady else { return .refused(.notReady) }  // O2
        guard presenter == .available else { return .refused(.invalidPresenter) }  // O3
        lastOpening += 1
        let id = OpeningID(value: lastOpening)
        state = .presenting(id)
        locks.assistant = true  // O5: the lock is taken before presenting
        delivering = true
        pendingUpdate = false
        openers = [call]
        return .opening([.notifyLocks(locks), .present(id)])
    }

    /// The presenter returned from `presentAssistant`.
    mutating func presentFinished(_ id: OpeningID) -> [Action] {
        guard state == .presenting(id) else { return finishedDelivery() }
        state = .open(id)
        let callers = openers
        openers = []
        return [.opened(id, callers: callers)] + finishedDelivery()
    }

    // MARK: - Snapshots

    /// The chat model changed: deliver it now, or after the call under way.
    mutating func snapshotChanged() -> [Action] {
        guard case .open(let id) = state else {
            if case .presenting = state { pendingUpdate = true }
            return []
        }
        guard !delivering else {
            pendingUpdate = true
            return []
        }
        delivering = true
        return [.update(id)]
    }

    /// The presenter returned from `updateAssistant` with the snapshot of `revision`.
    mutating func updateFinished(_ id: OpeningID, revision: UInt64) -> [Action] {
        [.delivered(revision: revision)] + finishedDelivery()
    }

    private mutating func finishedDelivery() -> [Action] {
        delivering = false
        guard pendingUpdate else { return [] }
        pendingUpdate = false
        return snapshotChanged()
    }

    // MARK: - Closing (O5, O6, PR10, AC5)

    /// `closeAssistant` (or a tap or button that closes): dismiss, then release the lock once
    /// dismissed. `caller`, if any, returns after the close and its hand-overs.
    mutating func closeRequested(by caller: CloseWaiter?, thenHandOver action: AssistantAction? = nil) -> [Action] {
        if let action { afterClose.append(action) }
        switch state {
        case .presenting(let id), .open(let id):
            state = .closing(id)
            if let caller { closeWaiters.append(caller) }
            return [.dismiss(id)]
        case .closing:
            if let caller { closeWaiters.append(caller) }
            return []
        case .closed:
            // Nothing to close; anything queued is handed over now.
            if let caller { closeWaiters.append(caller) }
            return handOverQueued()
        }
    }

    /// The presenter finished dismissing, dismissed by itself (the mobile "Back"), or went
    /// away (O5). `opening` is the presentation it was for; `nil` means whatever is shown.
    mutating func dismissed(_ opening: OpeningID?) -> [Action] {
        switch state {
        case .closed:
            return []
        case .presenting(let id), .open(let id), .closing(let id):
            guard opening == nil || opening == id else { return [] }  // an older presentation's dismissal
            state = .closed
            locks.assistant = false  // O6: only the assistant's own lock
            delivering = false
            pendingUpdate = false
            let openers = self.openers
            self.openers = []
            // A presenter that dismissed itself before it finished presenting was still opened.
            let opened: [Action] = openers.isEmpty ? [] : [.opened(id, callers: openers)]
            return opened + [.notifyLocks(locks), .closed(id)] + handOverQueued()
        }
    }

    private mutating func handOverQueued() -> [Action] {
        // PR10, AC5: hand-overs only once closed, one batch at a time; callers return after them.
        guard handOversInFlight == 0 else { return [] }
        guard !afterClose.isEmpty else { return finishClose() }
        let actions = afterClose
        afterClose = []
        handOversInFlight = actions.count
        return [.handOver(actions)]
    }

    /// The host returned from one hand-over.
    mutating func handOverFinished() -> [Action] {
        guard handOversInFlight > 0 else { return [] }
        handOversInFlight -= 1
        guard handOversInFlight == 0 else { return [] }
        return afterClose.isEmpty ? finishClose() : handOverQueued()
    }

    private mutating func finishClose() -> [Action] {
        guard !closeWaiters.isEmpty else { return [] }
        let callers = closeWaiters
        closeWaiters = []
        return [.closeFinished(callers)]
    }

    // MARK: - The app's lock (B6)

    mutating func lockedByApp() -> [Action] {
        guard !locks.app else { return [] }  // B6: idempotent, not counted
        locks.app = true
        return [.notifyLocks(locks)]
    }

    mutating func unlockedByApp() -> [Action] {
        guard locks.app else { return [] }  // B6
        locks.app = false
        return [.notifyLocks(locks)]
    }
}
