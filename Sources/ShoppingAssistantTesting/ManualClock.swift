import ShoppingAssistant

/// A clock that moves only when a test says so, so the 10 s preparation timeout, the 120 s
/// reply timeout and the 1 s impression timer are tested in microseconds.
///
/// `waitForSleepers(_:)` suspends until the code under test is really sleeping, so a test
/// never guesses with `Task.yield()` loops before it advances time.
public final class ManualClock: Clock, Sendable {
    /// A point on the manual clock's timeline: the time since the clock was created.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock was created; a test compares deadlines with it (`.seconds(10)` for P3).
        public var offset: Duration

        /// An instant `offset` after the clock's start, for asserting on `pendingDeadlines`.
        public init(offset: Duration) { self.offset = offset }

        /// `Clock` arithmetic: the code under test computes its deadlines with it.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// `Clock` arithmetic, exact: no rounding, so a 120 s deadline is exactly 120 s.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Earlier first, so sleepers wake in deadline order.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// `t+10.0 seconds`, so a failing test names the moment.
        public var description: String { "t+\(offset)" }
    }

    /// The clock itself: the engine package's virtual clock, which the REPL's virtual time
    /// runs on too.
    private let core: VirtualClock

    /// A clock at `t+0` with no sleepers; time moves only when the test advances it.
    public convenience init() { self.init(activity: nil) }

    /// The same, telling `activity` when a task parks on the clock and when it is woken, so
    /// that a replay on virtual time can tell when nothing can run.
    package init(activity: ActivityMonitor?) {
        core = VirtualClock(activity: activity)
    }

    /// The current virtual time; changes only through `advance(by:)`, `advance(to:)` and
    /// `advanceToNextDeadline()`.
    public var now: Instant { Instant(offset: core.now.offset) }
    /// One nanosecond: deadlines are kept exactly.
    public var minimumResolution: Duration { core.minimumResolution }

    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int { core.sleeperCount }

    /// The deadlines of the current sleepers, earliest first.
    public var pendingDeadlines: [Instant] { core.pendingDeadlines.map { Instant(offset: $0.offset) } }

    /// Suspends until the test advances the clock to `deadline`; returns at once when it has
    /// passed. Throws `CancellationError` when the sleeping task is cancelled, as `ContinuousClock`
    /// does, so timeouts cancelled by the engine never fire. `tolerance` is ignored.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await core.sleep(until: VirtualClock.Instant(offset: deadline.offset))
    }

    /// Moves time forward, waking every sleeper whose deadline has passed, earliest first.
    public func advance(by duration: Duration) {
        core.advance(by: duration)
    }

    /// Moves time to `target` (never backwards), waking sleepers in deadline order.
    public func advance(to target: Instant) {
        core.advance(to: VirtualClock.Instant(offset: target.offset))
    }

    /// Moves time to the earliest sleeper's deadline and wakes it; returns false if nobody sleeps.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        core.advanceToNextDeadline()
    }

    /// Suspends until at least `count` tasks are sleeping on this clock. Returns `false`
    /// instead if the waiting task is cancelled first (a test's time limit), so a broken
    /// deadline fails the test rather than hanging it.
    @discardableResult
    public func waitForSleepers(_ count: Int = 1) async -> Bool {
        await core.waitForSleepers(count)
    }
}
