/// Identifies one presentation of the chat; product refs carry it (PR6, PR8).
struct OpeningID: Hashable, Sendable, CustomStringConvertible {
    let value: UInt64
    var description: String { "opening#\(value)" }
}

/// Opening and closing the chat (O1–O6), the presentation locks (B6), snapshot delivery to
/// the presenter, and what waits for a close (PR10, AC5), as a value type.
///
/// The presenter is one channel: one call at a time for the current opening (present, then
/// updates, then dismiss), so snapshots reach it in order; while a call is under way a newer
/// snapshot waits, and only the newest is delivered next; a close asked for meanwhile
/// dismisses right after it. Hand-overs are a channel of their own, one at a time, after the
/// close. Nothing here waits for anything else: what waits for these milestones is held by
/// the root machine (`HostMilestone`).
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
        /// The presenter has shown the chat, or it closed before it had: report the opening;
        /// `openAssistant` may return (O1).
        case presented(OpeningID)
        /// The chat is fully closed: the lock is released (O5, O6).
        case closed(OpeningID)
        /// Hand one queued navigation to the host, after the close (PR10, AC5).
        case handOver(AssistantAction)
        /// The chat is closed and every hand-over queued for it has returned.
        case handedOver
        /// The presenter returned from a snapshot of `revision`.
        case delivered(revision: UInt64)
    }

    /// Whether the chat opens, or why not.
    enum OpenOutcome: Sendable, Hashable {
        case opening(OpeningID, [Action])
        case refused(AssistantOpenResult)
    }

    private(set) var state: State = .closed
    private(set) var locks = PresentationLocks()
    private var lastOpening: UInt64 = 0
    /// The opening whose present, update or dismiss is under way: one presenter call at a time.
    private var presenterCall: OpeningID?
    /// A newer snapshot than the one being delivered waits.
    private var pendingUpdate = false
    /// A close was asked for while a presenter call was under way: dismiss right after it.
    private var pendingDismiss = false
    /// Navigation to hand over once the close completes (PR10, AC5).
    private var afterClose: [AssistantAction] = []
    /// A hand-over was given to the host and has not returned.
    private var handOverInFlight = false
    /// How many times a close finished with its hand-overs (`.handedOver`).
    private(set) var closesHandedOver: UInt64 = 0

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

    /// Navigation is queued for after the close, or being handed over.
    var handOversPending: Bool { handOverInFlight || !afterClose.isEmpty }

    // MARK: - Opening (O1–O5)

    /// `openAssistant`. `isReady` is whether the latest preparation is ready (O2);
    /// `presenter` is the presenter's availability (O3).
    mutating func openCalled(isReady: Bool, presenter: AssistantPresenterAvailability) -> OpenOutcome {
        guard state == .closed else { return .refused(.alreadyOpen) }  // O4
        guard isReady else { return .refused(.notReady) }  // O2
        guard presenter == .available else { return .refused(.invalidPresenter) }  // O3
        lastOpening += 1
        let id = OpeningID(value: lastOpening)
        state = .presenting(id)
        locks.assistant = true  // O5: the lock is taken before presenting
        presenterCall = id
        pendingUpdate = false
        pendingDismiss = false
        return .opening(id, [.notifyLocks(locks), .present(id)])
    }

    /// The presenter returned from `presentAssistant` of `id`, which showed `revision`. A
    /// return for another opening than the one under way changes nothing.
    mutating func presentFinished(_ id: OpeningID, revision: UInt64) -> [Action] {
        guard presenterCall == id else { return [] }
        presenterCall = nil
        var actions: [Action] = []
        if state == .presenting(id) {
            state = .open(id)
            actions.append(.presented(id))
        }
        return actions + [.delivered(revision: revision)] + nextPresenterCall()
    }

    // MARK: - Snapshots

    /// The chat model changed: deliver it now, or after the presenter call under way.
    mutating func snapshotChanged() -> [Action] {
        switch state {
        case .presenting:
            pendingUpdate = true
            return []
        case .open(let id):
            guard presenterCall == nil else {
                pendingUpdate = true
                return []
            }
            presenterCall = id
            return [.update(id)]
        case .closing, .closed:
            return []
        }
    }

    /// The presenter returned from `updateAssistant` of `id` with the snapshot of `revision`.
    /// A return for another opening (one the presenter dismissed meanwhile) is not a delivery
    /// to the chat on screen and changes nothing.
    mutating func updateFinished(_ id: OpeningID, revision: UInt64) -> [Action] {
        guard presenterCall == id else { return [] }
        presenterCall = nil
        return [.delivered(revision: revision)] + nextPresenterCall()
    }

    /// The presenter's next call once it is free: a dismissal asked for meanwhile, or the
    /// newest snapshot.
    private mutating func nextPresenterCall() -> [Action] {
        switch state {
        case .closing(let id) where pendingDismiss:
            pendingDismiss = false
            presenterCall = id
            return [.dismiss(id)]
        case .open(let id) where pendingUpdate:
            pendingUpdate = false
            presenterCall = id
            return [.update(id)]
        default:
            return []
        }
    }

    // MARK: - Closing (O5, O6, PR10, AC5)

    /// `closeAssistant` (or a tap or button that closes): dismiss, then release the lock once
    /// dismissed; `action`, if any, is handed over after the close.
    mutating func closeRequested(thenHandOver action: AssistantAction? = nil) -> [Action] {
        if let action { afterClose.append(action) }
        switch state {
        case .presenting(let id), .open(let id):
            state = .closing(id)
            pendingUpdate = false
            guard presenterCall == nil else {
                pendingDismiss = true  // after the call under way: the presenter sees calls in order
                return []
            }
            presenterCall = id
            return [.dismiss(id)]
        case .closing:
            return []
        case .closed:
            // Nothing to close; anything queued is handed over now.
            return handOverQueued()
        }
    }

    /// The presenter returned from `dismissAssistant` of `id`.
    mutating func dismissFinished(_ id: OpeningID) -> [Action] {
        guard presenterCall == id, state == .closing(id) else { return [] }
        return dismissed(id)
    }

    /// The presenter finished dismissing, dismissed by itself (the mobile "Back"), or went
    /// away (O5). `opening` is the presentation it was for; `nil` means whatever is shown.
    mutating func dismissed(_ opening: OpeningID?) -> [Action] {
        switch state {
        case .closed:
            return []
        case .presenting(let id), .open(let id), .closing(let id):
            guard opening == nil || opening == id else { return [] }  // an older presentation's dismissal
            let wasPresenting = state == .presenting(id)
            state = .closed
            locks.assistant = false  // O6: only the assistant's own lock
            presenterCall = nil
            pendingUpdate = false
            pendingDismiss = false
            // A presenter that dismissed itself before it finished presenting was still opened.
            let presented: [Action] = wasPresenting ? [.presented(id)] : []
            return presented + [.notifyLocks(locks), .closed(id)] + handOverQueued()
        }
    }

    private mutating func handOverQueued() -> [Action] {
        // PR10, AC5: hand-overs only once closed, one at a time, in order.
        guard !handOverInFlight else { return [] }
        guard !afterClose.isEmpty else {
            closesHandedOver += 1
            return [.handedOver]
        }
        handOverInFlight = true
        return [.handOver(afterClose.removeFirst())]
    }

    /// The host returned from the hand-over under way.
    mutating func handOverFinished() -> [Action] {
        guard handOverInFlight else { return [] }
        handOverInFlight = false
        return handOverQueued()
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
