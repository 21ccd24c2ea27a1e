/// What the host must have seen before a held action takes effect.
///
/// The one mechanism behind every "returns once the host has seen its effect": a call that
/// opens, closes, taps, fetches a campaign or changes what the chat shows is decided at once,
/// and its completion is held until the milestone (H1 makes the exception: see
/// `EngineMachine.hold(_:until:)`).
enum HostMilestone: Sendable, Hashable {
    /// The presenter returned from presenting `opening`, or the chat closed first (O1).
    case presented(OpeningID)
    /// The chat is fully closed: the presenter dismissed it (O5).
    case closed
    /// The chat is closed and every hand-over queued for the close has returned (PR10, AC5):
    /// a close after the first `afterCloses` ones finished, even if the chat opened again since.
    case handedOver(afterCloses: UInt64)
    /// The presenter of the chat on screen has returned from a snapshot of dialog `revision`
    /// or a newer one — or no chat is on screen (D2).
    case delivered(revision: UInt64)
    /// No message is in flight; what waited for it then waits for that outcome's delivery.
    case settled
    /// The in-app campaigns that the call fetched have been shown, or dropped (B6).
    case campaignsShown(CallID)

    /// Whether only the host can bring the milestone about: a call made from inside a host
    /// callback never waits for one of these (H1). `.settled` comes from the network and the
    /// engine's own deadlines.
    var isTheHosts: Bool { self != .settled }
}

/// Actions held until a `HostMilestone`: completions of public calls, and notes that must not
/// reach the log before what they are about reaches the screen. In the order they were held.
struct HeldActions: Sendable, Hashable {
    struct Entry: Sendable, Hashable {
        let milestone: HostMilestone
        let action: EngineAction
    }

    private(set) var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }

    mutating func append(_ action: EngineAction, until milestone: HostMilestone) {
        entries.append(Entry(milestone: milestone, action: action))
    }

    /// Removes and returns the entries whose milestone `isReached`, in the order they were held.
    mutating func take(where isReached: (HostMilestone) -> Bool) -> [Entry] {
        guard !entries.isEmpty else { return [] }
        var taken: [Entry] = []
        entries.removeAll { entry in
            guard isReached(entry.milestone) else { return false }
            taken.append(entry)
            return true
        }
        return taken
    }

    /// Removes and returns the held completion of `call`, if any: a cancelled caller returns
    /// at once with what was decided for it (H1).
    mutating func takeCompletion(of call: CallID) -> EngineAction? {
        guard
            let index = entries.firstIndex(where: {
                if case .complete(call, _) = $0.action { return true } else { return false }
            })
        else { return nil }
        return entries.remove(at: index).action
    }

    /// Removes and returns everything held (a shutdown, H2).
    mutating func takeAll() -> [Entry] {
        defer { entries = [] }
        return entries
    }
}
