import ShoppingAssistant

/// A clock that moves only when a test says so, so the 10 s preparation timeout, the 120 s
/// reply timeout and the 1 s impression timer are tested in microseconds.
///
/// `waitForSleepers(_:)` suspends until the code under test is really sleeping, so a test
/// never guesses with `Task.yield()` loops before it advances time.
public final class ManualClock: Clock, Sendable {
    /// A point on the manual clock's timeline: the time since the clock was created.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock was created; what a test reads to check a deadline.
        public var offset: Duration

        /// The instant `offset` after the clock was created, for deadlines a test computes.
        public init(offset: Duration) { self.offset = offset }

        /// The instant `duration` later, as `Clock` requires.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`, as `Clock` requires.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Earlier instants first, so deadlines sort in the order they fire.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// `t+…`, short enough for a failure message.
        public var description: String { "t+\(offset)" }
    }

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var cancelledBeforeSleeping: Set<UInt64> = []
    }

    private let state = Locked(State())
    private let sleeperWaiters = Waitlist()
    /// Told when a task parks on this clock and when it is woken, for replay quiescence.
    private let activity: ActivityMonitor?

    /// A clock at `t+0` that nothing moves but the test.
    public init() {
        activity = nil
    }

    /// The same, telling `activity` when a task parks on the clock and when it is woken, so
    /// a replay or an `EngineTestBed` can tell when nothing can run.
    package init(activity: ActivityMonitor?) {
        self.activity = activity
    }

    /// The current instant; moves only with `advance`.
    public var now: Instant { state.withLock { $0.now } }
    /// One nanosecond: a manual clock can be moved to any instant.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The deadlines of the current sleepers, earliest first.
    public var pendingDeadlines: [Instant] { state.withLock { $0.sleepers.map(\.deadline).sorted() } }

    /// Suspends until the test moves the clock to `deadline`; throws `CancellationError` when
    /// the sleeping task is cancelled, as `ContinuousClock` does.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.cancelledBeforeSleeping.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome)
                } else {
                    activity?.end()
                    sleeperWaiters.recheck()
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if let index = state.sleepers.firstIndex(where: { $0.id == id }) {
                    return state.sleepers.remove(at: index)
                }
                state.cancelledBeforeSleeping.insert(id)
                return nil
            }
            if let sleeper {
                activity?.begin()
                sleeper.continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// Moves time forward, waking every sleeper whose deadline has passed, earliest first.
    public func advance(by duration: Duration) {
        let target = state.withLock { $0.now.advanced(by: duration) }
        advance(to: target)
    }

    /// Moves time to `target` (never backwards), waking sleepers in deadline order.
    public func advance(to target: Instant) {
        while true {
            let next = state.withLock { state -> Sleeper? in
                guard
                    let index = state.sleepers.indices.min(by: {
                        state.sleepers[$0].deadline < state.sleepers[$1].deadline
                    }),
                    state.sleepers[index].deadline <= target
                else {
                    if state.now < target { state.now = target }
                    return nil
                }
                let sleeper = state.sleepers.remove(at: index)
                if state.now < sleeper.deadline { state.now = sleeper.deadline }
                return sleeper
            }
            guard let next else { return }
            activity?.begin()
            next.continuation.resume()
        }
    }

    /// Moves time to the earliest sleeper's deadline and wakes it; returns false if nobody sleeps.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let deadline = pendingDeadlines.first else { return false }
        advance(to: deadline)
        return true
    }

    /// Suspends until at least `count` tasks are sleeping on this clock. Returns `false`
    /// instead if the waiting task is cancelled first (a test's time limit), so a broken
    /// deadline fails the test rather than hanging it.
    @discardableResult
    public func waitForSleepers(_ count: Int = 1) async -> Bool {
        await sleeperWaiters.wait { [state] in state.withLock { $0.sleepers.count >= count } }
    }
}
