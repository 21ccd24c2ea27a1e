/// Auto-shown in-app campaigns on their way to the host's campaign handler (B6, O7): one at a
/// time, in the order they arrived, each counted against the call that fetched it so that the
/// call can return once all of its campaigns are shown or dropped.
///
/// A campaign that arrives while a presentation lock is held is dropped by the caller, not
/// queued; one that waits here while a lock is taken is dropped when its turn comes (B6).
struct InAppCampaignQueue: Sendable, Hashable {
    struct Entry: Sendable, Hashable {
        let campaign: InAppCampaign
        let caller: CallID
    }

    /// What to do next: show one campaign, after dropping any that a lock now holds back.
    struct Step: Sendable, Hashable {
        var dropped: [InAppCampaign] = []
        var show: Entry?
    }

    private var waiting: [Entry] = []
    /// The campaign the host is showing, if any.
    private(set) var showing: Entry?
    /// Campaigns not yet shown or dropped, by the call that fetched them.
    private var remaining: [CallID: Int] = [:]

    var isIdle: Bool { showing == nil && waiting.isEmpty }

    /// Whether every campaign fetched by `caller` has been shown or dropped.
    func isDone(_ caller: CallID) -> Bool { remaining[caller] == nil }

    mutating func arrived(_ campaigns: [InAppCampaign], for caller: CallID) {
        guard !campaigns.isEmpty else { return }
        waiting += campaigns.map { Entry(campaign: $0, caller: caller) }
        remaining[caller, default: 0] += campaigns.count
    }

    /// The next campaign to hand to the host, unless one is being shown. `isLocked` is whether
    /// a presentation lock is held now: campaigns that come up then are dropped (B6, O7).
    mutating func next(isLocked: Bool) -> Step {
        var step = Step()
        guard showing == nil else { return step }
        while !waiting.isEmpty {
            let entry = waiting.removeFirst()
            if isLocked {  // B6: dropped, not kept for later
                step.dropped.append(entry.campaign)
                count(entry)
                continue
            }
            showing = entry
            step.show = entry
            break
        }
        return step
    }

    /// The host returned from showing the current campaign.
    mutating func finishedShowing() {
        guard let entry = showing else { return }
        showing = nil
        count(entry)
    }

    /// Forgets every campaign (a shutdown, H2); returns the callers that waited for them.
    mutating func clear() -> [CallID] {
        defer { self = InAppCampaignQueue() }
        return Array(remaining.keys)
    }

    private mutating func count(_ entry: Entry) {
        guard let left = remaining[entry.caller] else { return }
        remaining[entry.caller] = left > 1 ? left - 1 : nil
    }
}
