/// Content calls made together leave as one `/choose` (B16), as the flutter SDK's
/// `RequestBatcher` sends them: the calls of one instant that share user, `ctx`, options and
/// identity go as one request with one `data` item per selector, each with its own `option`;
/// identical calls share one item and one answer.
///
/// The first call of an instant opens the window; the window ends with that instant (a timer of
/// no length on the engine's clock), so a call with no company waits for nothing it could
/// measure, and a call made once its instant's request has left never joins it. Two items for
/// one selector with different options cannot be told apart in the answer, which names only the
/// selector: the second goes in a request of its own (flutter's "waves"), still merged with
/// the other selectors of its wave.
///
/// Pure: the machine hands it the calls and takes back the requests to send, each under the
/// ID its answer comes back with.
struct ContentBatcher: Sendable, Hashable {
    /// One content call, as decided when it was made: whose it is (a host's
    /// `getContentBySelector` or a preparation's configuration) and everything its request says.
    struct Call: Sendable, Hashable {
        let id: RequestID
        let selector: String
        let settings: GravityContentSettings
        let envelope: GravityClient.Envelope
        let identityEpoch: UInt64
    }

    /// A request to send now: one call on its own, under its own ID, or several under a
    /// merged one (`RequestID.contents`).
    struct Departure: Sendable, Hashable {
        let id: RequestID
        let call: GravityCall
    }

    /// What withdrawing a call found.
    enum Withdrawal: Sendable, Hashable {
        /// The call is not the batcher's: it left on its own, or never was.
        case notHere
        /// It was waiting for its instant to end: it never leaves.
        case fromWindow
        /// It is one of the calls of merged request `merged`; `wasLast` when no call waits for
        /// that request any more.
        case fromMerged(UInt64, wasLast: Bool)
    }

    /// The calls of the instant now ending, in the order they came.
    private(set) var waiting: [Call] = []
    /// The calls each merged request on its way answers, in the order of its items.
    private(set) var merged: [UInt64: [Call]] = [:]
    private var nextMerged: UInt64 = 0

    /// Whether a window is open: some call waits for its instant to end.
    var isWindowOpen: Bool { !waiting.isEmpty }

    /// A content call was made. Returns `true` when it opens the window (the first of its
    /// instant), so the machine starts the timer that ends it.
    mutating func called(_ call: Call) -> Bool {
        waiting.append(call)
        return waiting.count == 1
    }

    /// The instant ended: what its calls send, one request per envelope and wave. A request
    /// that answers a single call goes as that call's own, so a call alone is sent exactly as
    /// before there was a window.
    mutating func windowEnded() -> [Departure] {
        let calls = waiting
        waiting = []
        var departures: [Departure] = []
        for group in Self.groups(calls) {
            for wave in Self.waves(group) {
                departures.append(depart(wave, envelope: group[0].envelope))
            }
        }
        return departures
    }

    /// The calls merged request `merged` answers, which it no longer keeps; none for a request
    /// whose every call was withdrawn.
    mutating func answered(_ merged: UInt64) -> [Call] {
        self.merged.removeValue(forKey: merged) ?? []
    }

    /// Nobody waits for call `id` any more (a cancelled caller, a superseded preparation).
    mutating func withdrawn(_ id: RequestID) -> Withdrawal {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            waiting.remove(at: index)
            return .fromWindow
        }
        for (key, calls) in merged {
            guard let index = calls.firstIndex(where: { $0.id == id }) else { continue }
            var remaining = calls
            remaining.remove(at: index)
            merged[key] = remaining.isEmpty ? nil : remaining
            return .fromMerged(key, wasLast: remaining.isEmpty)
        }
        return .notHere
    }

    // MARK: - Grouping

    /// One request for `wave`: a single call as its own, else a merged one.
    private mutating func depart(_ wave: [Item], envelope: GravityClient.Envelope) -> Departure {
        if wave.count == 1, wave[0].calls.count == 1 {
            let call = wave[0].calls[0]
            return Departure(
                id: call.id, call: .choose(selector: call.selector, settings: call.settings, envelope: envelope))
        }
        nextMerged += 1
        merged[nextMerged] = wave.flatMap(\.calls)
        return Departure(
            id: .contents(nextMerged),
            call: .chooseTogether(
                wave.map { GravitySelectorRequest(selector: $0.selector, options: $0.settings) }, envelope: envelope))
    }

    /// One `data` item and the calls it answers: identical calls share it.
    private struct Item {
        let selector: String
        let settings: GravityContentSettings
        var calls: [Call]
    }

    /// The calls that may share a request: the same identity and envelope (user, `ctx`,
    /// options, permission), in the order each group's first call came — groups made at one
    /// instant by tasks of their own are ordered by what they ask, not by which came first.
    private static func groups(_ calls: [Call]) -> [[Call]] {
        var order: [GroupKey] = []
        var groups: [GroupKey: [Call]] = [:]
        for call in calls {
            let key = GroupKey(identityEpoch: call.identityEpoch, envelope: call.envelope)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(call)
        }
        let sorted = order.map { groups[$0] ?? [] }
        guard sorted.count > 1 else { return sorted }
        return sorted.sorted { precedes($0, $1) }
    }

    private struct GroupKey: Hashable {
        let identityEpoch: UInt64
        let envelope: GravityClient.Envelope
    }

    /// Whether group `a` goes before group `b`: by the selector it asks for first, then its
    /// page. Groups alike in both keep the order they came in.
    private static func precedes(_ a: [Call], _ b: [Call]) -> Bool {
        let first = { (group: [Call]) in group.map(\.selector).min() ?? "" }
        let (left, right) = (first(a), first(b))
        if left != right { return left < right }
        let (pageA, pageB) = (a[0].envelope.context, b[0].envelope.context)
        if pageA.location != pageB.location { return pageA.location < pageB.location }
        return pageA.type.rawValue < pageB.type.rawValue
    }

    /// The requests of one group: items by selector, the k-th distinct option of each selector
    /// in the k-th request. Identical calls (the same selector and option) share an item.
    private static func waves(_ group: [Call]) -> [[Item]] {
        var items: [Item] = []
        for call in group {
            if let index = items.firstIndex(where: { $0.selector == call.selector && $0.settings == call.settings }) {
                items[index].calls.append(call)
            } else {
                items.append(Item(selector: call.selector, settings: call.settings, calls: [call]))
            }
        }
        items.sort { ($0.selector, SettingsOrder($0.settings)) < ($1.selector, SettingsOrder($1.settings)) }
        var waves: [[Item]] = []
        var previous: String?
        var wave = 0
        for item in items {
            wave = item.selector == previous ? wave + 1 : 0
            previous = item.selector
            if wave == waves.count { waves.append([]) }
            waves[wave].append(item)
        }
        return waves
    }
}

/// Orders a selector's options so that its waves do not depend on which call came first:
/// whole products before SKUs only, every field before a list of them.
private struct SettingsOrder: Comparable {
    let skusOnly: Bool
    let fields: [String]?

    init(_ settings: GravityContentSettings) {
        skusOnly = settings.skusOnly
        fields = settings.fields
    }

    static func < (lhs: SettingsOrder, rhs: SettingsOrder) -> Bool {
        if lhs.skusOnly != rhs.skusOnly { return !lhs.skusOnly }
        switch (lhs.fields, rhs.fields) {
        case (nil, nil): return false
        case (nil, _): return true
        case (_, nil): return false
        case (let left?, let right?): return left.lexicographicallyPrecedes(right)
        }
    }
}
