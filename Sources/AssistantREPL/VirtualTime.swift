import ShoppingAssistant

/// Virtual time for piped demo sessions and transcript replay: the clock moves only when
/// nothing can run, straight to the next deadline. A 120 s reply timeout takes no wall time,
/// and the same input always produces the same output.
///
/// It is an event loop of one event at a time: whenever nothing can run, it lets one held
/// request have its answer (`requests`, in rank order) or, when none is held, wakes the one
/// sleeper of the clock that is due first, and waits until nothing can run again before the
/// next. Two answers, or two timers due at the same instant, never race: every line a session
/// prints has one position, fixed by what caused it.
package struct VirtualTime: Sendable {
    package let clock: VirtualClock
    package let activity: ActivityMonitor
    /// Requests of in-process backends waiting for their turn to be answered.
    package let requests: HeldRequests

    package init() {
        activity = ActivityMonitor()
        clock = VirtualClock(activity: activity)
        requests = HeldRequests(activity: activity)
    }

    /// Runs `body` as counted work and moves time whenever everything waits on the clock.
    /// Returns once `body` is done and nothing it caused can run or be answered without time
    /// passing; false if `body` waits for something no deadline will bring.
    package func run(_ body: @escaping @Sendable () async -> Void) async -> Bool {
        let done = Locked(false)
        activity.spawn {
            await body()
            done.withLock { $0 = true }
        }
        while true {
            if await settle() { continue }
            if done.withLock({ $0 }) { return true }
            guard clock.wakeNext() else { return false }
        }
    }

    /// Lets `duration` pass, firing every deadline on the way in order.
    package func advance(by duration: Duration) async {
        let target = clock.now.advanced(by: duration)
        while true {
            if await settle() { continue }
            guard clock.wakeNext(notAfter: target) else { break }
        }
        clock.advance(to: target)
        while await settle() {}
    }

    /// Waits until nothing can run, then lets the first held request go; false when none was
    /// held (nothing can happen now without time passing).
    private func settle() async -> Bool {
        await activity.waitUntilIdle()
        return requests.releaseFirst()
    }
}
