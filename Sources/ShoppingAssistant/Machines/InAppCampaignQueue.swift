/// Auto-shown in-app campaigns on their way to the host's campaign handler (B6, O7), as the iOS
/// SDK shows the campaigns of a page view: highest `priority` first, one at a time, each after
/// its `delayTime` once its turn has come. Each is counted against the call that fetched it, so
/// that the call can return once all of its campaigns are shown or dropped.
///
/// A campaign that arrives while a presentation lock is held is dropped by the caller, not
/// queued; one that waits here (its turn, or its delay) while a lock is taken is dropped when
/// it would be shown (B6).
///
/// A campaign is for the moment and the user its answer came for (B15): one whose delay ends
/// later than its call's deadline plus that delay (it waited its turn behind others) is
/// dropped, and so is every campaign still waiting when the identity changes.
struct InAppCampaignQueue: Sendable, Hashable {
    struct Entry: Sendable, Hashable {
        let campaign: InAppCampaign
        let caller: CallID
        /// The deadline of the call whose answer brought it, on the engine's clock (B13, B15).
        let deadline: Duration
    }

    /// Why a campaign was dropped instead of shown.
    enum DropReason: Sendable, Hashable {
        /// A presentation lock was held when it came up (B6, O7).
        case locked
        /// Its delay ended after its call's deadline plus the delay (B15).
        case late
        /// The identity changed while it waited (B15).
        case identityChanged
    }

    /// A campaign dropped, and why.
    struct Drop: Sendable, Hashable {
        let campaign: InAppCampaign
        let reason: DropReason
    }

    /// What to do next: show one campaign, or wait its delay, after dropping any that a lock
    /// now holds back.
    struct Step: Sendable, Hashable {
        var dropped: [Drop] = []
        var show: Entry?
        /// Wait `delay`, then call `delayPassed(turn)`.
        var wait: (turn: UInt64, delay: Duration)?
        /// A delay that leads nowhere any more (its campaign was dropped): stop waiting for it.
        var stop: UInt64?

        static func == (lhs: Step, rhs: Step) -> Bool {
            lhs.dropped == rhs.dropped && lhs.show == rhs.show && lhs.wait?.turn == rhs.wait?.turn
                && lhs.wait?.delay == rhs.wait?.delay && lhs.stop == rhs.stop
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(dropped)
            hasher.combine(show)
            hasher.combine(wait?.turn)
            hasher.combine(wait?.delay)
            hasher.combine(stop)
        }
    }

    private var waiting: [Entry] = []
    /// The campaign the host is showing, if any.
    private(set) var showing: Entry?
    /// The campaign whose turn has come and whose delay is running, with its turn number.
    private var delaying: (turn: UInt64, entry: Entry)?
    private var turns: UInt64 = 0
    /// Campaigns not yet shown or dropped, by the call that fetched them.
    private var remaining: [CallID: Int] = [:]

    var isIdle: Bool { showing == nil && delaying == nil && waiting.isEmpty }

    /// Whether every campaign fetched by `caller` has been shown or dropped.
    func isDone(_ caller: CallID) -> Bool { remaining[caller] == nil }

    /// The campaigns of one answer, highest priority first (none counts as 0; equal ones keep
    /// the service's order), after those that came before. `deadline` is the deadline of the
    /// call whose answer brought them (B15).
    mutating func arrived(_ campaigns: [InAppCampaign], for caller: CallID, deadline: Duration) {
        guard !campaigns.isEmpty else { return }
        let ordered = campaigns.enumerated().sorted { lhs, rhs in
            let (left, right) = (lhs.element.priority ?? 0, rhs.element.priority ?? 0)
            return left != right ? left > right : lhs.offset < rhs.offset
        }
        waiting += ordered.map { Entry(campaign: $0.element, caller: caller, deadline: deadline) }
        remaining[caller, default: 0] += campaigns.count
    }

    /// The next campaign to hand to the host, unless one is being shown or delayed. `isLocked`
    /// is whether a presentation lock is held now: campaigns that come up then are dropped (B6, O7).
    mutating func next(isLocked: Bool) -> Step {
        var step = Step()
        guard showing == nil, delaying == nil else { return step }
        while !waiting.isEmpty {
            let entry = waiting.removeFirst()
            if isLocked {  // B6: dropped, not kept for later
                step.dropped.append(Drop(campaign: entry.campaign, reason: .locked))
                count(entry)
                continue
            }
            if let delay = entry.campaign.delay, delay > .zero {
                turns += 1
                delaying = (turns, entry)
                step.wait = (turns, delay)
                return step
            }
            showing = entry
            step.show = entry
            break
        }
        return step
    }

    /// The delay of `turn` passed at `now` (on the engine's clock): the campaign is shown now,
    /// or dropped if a lock was taken meanwhile (B6), or if `now` is later than its call's
    /// deadline plus its delay — its delay began late, behind other campaigns, and what its
    /// answer said is no longer news (B15). A turn that is not the one delayed (after a
    /// shutdown) changes nothing.
    mutating func delayPassed(_ turn: UInt64, isLocked: Bool, now: Duration) -> Step {
        guard let (current, entry) = delaying, current == turn else { return Step() }
        delaying = nil
        let late = now > entry.deadline + (entry.campaign.delay ?? .zero)  // B15
        if isLocked || late {
            count(entry)
            return Step(dropped: [Drop(campaign: entry.campaign, reason: isLocked ? .locked : .late)])
        }
        showing = entry
        return Step(show: entry)
    }

    /// The identity changed (B15): every campaign waiting for its turn or its delay was for the
    /// user that was, and is dropped; the one the host is showing stays until it returns (it
    /// cannot be taken back, and the next waits for it).
    mutating func identityChanged() -> Step {
        var step = Step()
        if let (turn, entry) = delaying {
            delaying = nil
            step.stop = turn
            step.dropped.append(Drop(campaign: entry.campaign, reason: .identityChanged))
            count(entry)
        }
        for entry in waiting {
            step.dropped.append(Drop(campaign: entry.campaign, reason: .identityChanged))
            count(entry)
        }
        waiting = []
        return step
    }

    /// The host returned from showing the current campaign.
    mutating func finishedShowing() {
        guard let entry = showing else { return }
        showing = nil
        count(entry)
    }

    /// Forgets every campaign (a shutdown, H2).
    mutating func clear() {
        self = InAppCampaignQueue()
    }

    private mutating func count(_ entry: Entry) {
        guard let left = remaining[entry.caller] else { return }
        remaining[entry.caller] = left > 1 ? left - 1 : nil
    }

    static func == (lhs: InAppCampaignQueue, rhs: InAppCampaignQueue) -> Bool {
        lhs.waiting == rhs.waiting && lhs.showing == rhs.showing && lhs.delaying?.turn == rhs.delaying?.turn
            && lhs.delaying?.entry == rhs.delaying?.entry && lhs.turns == rhs.turns && lhs.remaining == rhs.remaining
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(waiting)
        hasher.combine(showing)
        hasher.combine(turns)
    }
}
