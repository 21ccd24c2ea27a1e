/// Sleeping on a clock when the sleep is usually cancelled long before it ends: a deadline.
///
/// On the system's clocks (`ContinuousClock`, `SuspendingClock`) the runtime keeps a cancelled
/// `sleep` (a small task and its timer, about 250 B) until the time it was to end. A 130 s
/// request deadline or a 120 s reply deadline that is cancelled as soon as the answer arrives
/// would keep one of those per request for two minutes; sleeping a second at a time keeps one
/// second's worth. A clock of the host's own (a manual clock in tests, a replay's virtual
/// clock) keeps nothing and is slept on in one piece, so time in a test moves only where
/// something waits.
package enum SlicedSleep {
    /// The longest one sleep lasts on `clock`: a second on the system's clocks, else `nil`
    /// (until the end).
    package static func slice(for clock: any Clock<Duration>) -> Duration? {
        clock.isSystemClock ? .seconds(1) : nil
    }

    /// Sleeps `duration` on `clock`, at most `slice` at a time, until `duration` has passed on
    /// `clock`; throws `CancellationError` as soon as the calling task is cancelled.
    package static func sleep<C: Clock>(on clock: C, for duration: Duration, slice: Duration?) async throws
    where C.Duration == Duration {
        guard let slice else { return try await clock.sleep(for: duration) }
        let end = clock.now.advanced(by: duration)
        while true {
            let remaining = clock.now.duration(to: end)
            guard remaining > .zero else { return }
            try await clock.sleep(for: min(remaining, slice))
        }
    }
}
