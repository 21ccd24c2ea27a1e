import ShoppingAssistant

/// The impression timers' clock in a session on real time that waits for each command (piped,
/// or recorded): it runs with the real clock while a command runs and stands still between
/// commands, and while a step waits for the tracking its command queued. Time spent typing the
/// next command does not count, exactly as on virtual time, where time only passes while a step
/// waits; so a card earns its impression during `:wait 2s` or a slow answer, in a terminal, in a
/// pipe and in the replay alike, and never in the pause before the next input, nor while a
/// loaded machine or a slow host delivers tracking, which a replay does not have.
package final class StepClock: Clock, Sendable {
    /// Time counted so far, as an offset from zero (the virtual clock's instant serves).
    package typealias Instant = VirtualClock.Instant

    private struct State: WaitingState {
        /// Time counted up to the last start.
        var counted: Duration = .zero
        /// When the running period started on the base clock; nil while stopped.
        var runningSince: Duration?
        /// Sleepers waiting for the next start; `false` wakes a cancelled one.
        var waiters = ParkedCallers<Bool, Void>()
    }

    private let state = Locked(State())
    private let base: any Clock<Duration>
    private let elapsed: @Sendable () -> Duration

    /// A stopped clock over `base` (the real clock; tests pass a manual one).
    package init(base: any Clock<Duration> = ContinuousClock()) {
        self.base = base
        elapsed = stopwatch(on: base)
    }

    package var now: Instant {
        let now = elapsed()
        return state.withLock { Instant(offset: $0.counted + ($0.runningSince.map { now - $0 } ?? .zero)) }
    }

    package var minimumResolution: Duration { .milliseconds(1) }

    /// Whether time passes now.
    package var isRunning: Bool { state.withLock { $0.runningSince != nil } }

    /// A command started: time passes. Sleepers waiting for that wake up and go on sleeping
    /// on the base clock.
    package func start() {
        let now = elapsed()
        let waiters = state.withLock { state -> [ParkedCallers<Bool, Void>.Waiter] in
            guard state.runningSince == nil else { return [] }
            state.runningSince = now
            return state.waiters.takeAll()
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// The command finished: time stands still until the next `start()`.
    package func stop() {
        let now = elapsed()
        state.withLock { state in
            guard let since = state.runningSince else { return }
            state.counted += now - since
            state.runningSince = nil
        }
    }

    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        while true {
            try Task.checkCancellation()
            let remaining = now.duration(to: deadline)
            if remaining <= .zero { return }
            if isRunning {
                // Wakes up on time if the clock kept running; if it stopped meanwhile, the
                // loop finds time left and waits for the next start.
                try await base.sleep(for: remaining)
            } else {
                try await waitForStart()
            }
        }
    }

    /// Suspends until `start()`, or throws when the task is cancelled.
    private func waitForStart() async throws {
        let started = await state.wait(cancelled: false) { $0.runningSince != nil ? .proceed(true) : .park(()) }
        if !started { throw CancellationError() }
    }
}
