/// Time passed on `clock` since this call, as a function: the one way the package measures
/// elapsed time, so that it works on any clock (the continuous clock, a manual or virtual
/// clock in tests and replays) without a generic parameter spreading through its users.
package func stopwatch(on clock: any Clock<Duration>) -> @Sendable () -> Duration {
    func start<C: Clock>(_ clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }
    return start(clock)
}
