import ShoppingAssistant

/// Virtual time for piped demo sessions and transcript replay: the clock moves only when
/// nothing can run, straight to the next deadline. A 120 s reply timeout takes no wall time,
/// and the same input always produces the same output.
package struct VirtualTime: Sendable {
    package let clock: VirtualClock
    package let activity: ActivityMonitor

    package init() {
        activity = ActivityMonitor()
        clock = VirtualClock(activity: activity)
    }

    /// Runs `body` as counted work and moves time whenever everything waits on the clock.
    /// Returns false if `body` waits for something no deadline will bring.
    package func run(_ body: @escaping @Sendable () async -> Void) async -> Bool {
        let done = Locked(false)
        activity.spawn {
            await body()
            done.withLock { $0 = true }
        }
        while true {
            await activity.waitUntilIdle()
            if done.withLock({ $0 }) { return true }
            guard clock.advanceToNextDeadline() else { return false }
        }
    }

    /// Lets `duration` pass, firing every deadline on the way in order.
    package func advance(by duration: Duration) async {
        let target = clock.now.advanced(by: duration)
        while true {
            await activity.waitUntilIdle()
            guard let next = clock.pendingDeadlines.first, next <= target else { break }
            clock.advance(to: next)
        }
        clock.advance(to: target)
        await activity.waitUntilIdle()
    }
}

/// Time passed on `clock` since this call, as a function: works on any clock (virtual time
/// in piped sessions and replays, the continuous clock otherwise).
package func stopwatch(on clock: any Clock<Duration>) -> @Sendable () -> Duration {
    func start<C: Clock>(_ clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }
    return start(clock)
}
