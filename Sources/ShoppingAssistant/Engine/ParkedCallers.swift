/// Callers parked inside a `Locked` state until its owner resumes them or their task is
/// cancelled, whichever comes first: the one cancellable wait of the package and its test
/// support (the waitlist, the tracker's flush, the activity monitor, the clocks, the screen
/// flow), so that a waiter never outlives a cancelled task and a cancellation never leaves
/// anything behind.
///
/// Each waiter carries a `Tag` (what it waits for: a deadline, a sequence number, a
/// condition) by which the owner picks whom to resume. The owner keeps the `ParkedCallers` inside
/// the state its lock guards (`WaitingState`) and decides, under that lock, whether a caller
/// can go on at once or must park, so no wake-up falls between the check and the parking.
package struct ParkedCallers<Wakeup: Sendable, Tag: Sendable>: Sendable {
    /// A parked caller, taken out by the owner to be resumed outside the lock.
    package struct Waiter: Sendable {
        package let ticket: UInt64
        package let tag: Tag
        fileprivate let continuation: CheckedContinuation<Wakeup, Never>

        /// Lets the caller go on with `value`. Call it once, outside the lock.
        package func resume(returning value: Wakeup) { continuation.resume(returning: value) }
    }

    private var nextTicket: UInt64 = 0
    private(set) var parked: [Waiter] = []
    /// Tickets handed out whose caller has not parked yet, and those of them already cancelled.
    private var registering: Set<UInt64> = []
    private var cancelledBeforeParking: Set<UInt64> = []

    package init() {}

    /// How many callers are parked.
    package var count: Int { parked.count }

    /// Tickets still remembered for callers that have not parked (registering, or cancelled
    /// before they could): empty whenever no caller is between its ticket and its parking, so a
    /// cancellation never leaves anything behind.
    package var unsettledTickets: Int { registering.count + cancelledBeforeParking.count }

    /// What the parked callers wait for, in the order they parked.
    package var tags: [Tag] { parked.map(\.tag) }

    /// The parked callers' tickets and tags, in the order they parked.
    package var waiting: [(ticket: UInt64, tag: Tag)] { parked.map { ($0.ticket, $0.tag) } }

    /// Removes and returns the parked callers with these tickets.
    package mutating func take(tickets: Set<UInt64>) -> [Waiter] {
        guard !tickets.isEmpty else { return [] }
        var taken: [Waiter] = []
        parked.removeAll { waiter in
            guard tickets.contains(waiter.ticket) else { return false }
            taken.append(waiter)
            return true
        }
        return taken
    }

    /// Removes and returns the parked callers whose tag matches, in the order they parked.
    package mutating func take(where matches: (Tag) -> Bool) -> [Waiter] {
        guard !parked.isEmpty else { return [] }
        var taken: [Waiter] = []
        parked.removeAll { waiter in
            guard matches(waiter.tag) else { return false }
            taken.append(waiter)
            return true
        }
        return taken
    }

    /// Removes and returns every parked caller.
    package mutating func takeAll() -> [Waiter] {
        defer { parked = [] }
        return parked
    }

    /// Removes and returns the parked caller that comes first by `precedes` among those that
    /// match (the earliest deadline, say).
    package mutating func takeFirst(by precedes: (Tag, Tag) -> Bool, where matches: (Tag) -> Bool) -> Waiter? {
        guard
            let index = parked.indices.filter({ matches(parked[$0].tag) }).min(by: {
                precedes(parked[$0].tag, parked[$1].tag)
            })
        else { return nil }
        return parked.remove(at: index)
    }

    fileprivate mutating func issueTicket() -> UInt64 {
        nextTicket += 1
        registering.insert(nextTicket)
        return nextTicket
    }

    /// The caller of `ticket` is about to decide; `false` if it was cancelled already.
    fileprivate mutating func beginParking(_ ticket: UInt64) -> Bool {
        registering.remove(ticket)
        return cancelledBeforeParking.remove(ticket) == nil
    }

    fileprivate mutating func park(_ ticket: UInt64, _ tag: Tag, _ continuation: CheckedContinuation<Wakeup, Never>) {
        parked.append(Waiter(ticket: ticket, tag: tag, continuation: continuation))
    }

    /// The task of `ticket` was cancelled: its waiter if it is parked; otherwise, if it has not
    /// parked yet, a mark it will see. A ticket already resumed leaves nothing behind.
    fileprivate mutating func cancel(_ ticket: UInt64) -> Waiter? {
        if let index = parked.firstIndex(where: { $0.ticket == ticket }) { return parked.remove(at: index) }
        if registering.contains(ticket) { cancelledBeforeParking.insert(ticket) }
        return nil
    }
}

/// A state guarded by `Locked` that parks callers in `waiters`.
package protocol WaitingState: Sendable {
    associatedtype Wakeup: Sendable
    associatedtype Tag: Sendable
    var waiters: ParkedCallers<Wakeup, Tag> { get set }
}

/// What a caller does, decided under the lock: go on with a value, or park with a tag.
package enum WaitDecision<Wakeup, Tag> {
    case proceed(Wakeup)
    case park(Tag)
}

extension Locked where Value: WaitingState {
    /// Parks the calling task until the owner resumes it, or returns `cancelled` as soon as the
    /// task is cancelled. `decide` runs under the lock, once: to go on at once, or park.
    ///
    /// - Parameters:
    ///   - activity: told that the task stops being runnable while it is parked, and is
    ///     runnable again when a cancellation resumes it (the owner tells it for its own
    ///     resumptions), for replay quiescence.
    ///   - parked: runs once the caller is parked, outside the lock.
    package func wait(
        cancelled: Value.Wakeup, activity: ActivityMonitor? = nil, parked: (() -> Void)? = nil,
        _ decide: (inout Value) -> WaitDecision<Value.Wakeup, Value.Tag>
    ) async -> Value.Wakeup {
        let ticket = withLock { $0.waiters.issueTicket() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value.Wakeup, Never>) in
                let now = withLock { state -> Value.Wakeup? in
                    guard state.waiters.beginParking(ticket) else { return cancelled }
                    switch decide(&state) {
                    case .proceed(let value): return value
                    case .park(let tag):
                        state.waiters.park(ticket, tag, continuation)
                        return nil
                    }
                }
                if let now {
                    continuation.resume(returning: now)
                } else {
                    activity?.end()
                    parked?()
                }
            }
        } onCancel: {
            guard let waiter = withLock({ $0.waiters.cancel(ticket) }) else { return }
            activity?.begin()
            waiter.resume(returning: cancelled)
        }
    }
}
