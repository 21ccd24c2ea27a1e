extension Clock {
    /// One of the system's clocks (`ContinuousClock`, `SuspendingClock`), as opposed to a clock
    /// of the host's own (a manual clock in tests, a replay's virtual clock): the runtime keeps
    /// a cancelled sleep on it until its end (`SlicedSleep`), and libcurl's monotonic clock
    /// keeps the same time (`CurlTransport` lets libcurl keep its deadline).
    package var isSystemClock: Bool { self is ContinuousClock || self is SuspendingClock }
}
