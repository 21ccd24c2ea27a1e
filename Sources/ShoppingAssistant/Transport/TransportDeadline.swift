/// The total time one exchange may take, redirects included, on the transport's clock: the
/// HTTP libraries' own timers run on wall time (and URLSession's is an idle timer that every
/// byte resets), so the package's transports end a stalled or trickled answer with this.
package enum TransportDeadline {
    /// Runs `exchange`; if `deadline` passes on `clock` first, cancels it and throws
    /// `HTTPTransportError.timedOut`. Whichever ends first decides; the other is cancelled, which
    /// for the exchange closes its connection.
    package static func run(
        on clock: any Clock<Duration>, deadline: Duration,
        _ exchange: @escaping @Sendable () async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        try Task.checkCancellation()
        return try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
            group.addTask { try await exchange() }
            group.addTask {
                // Almost always cancelled by the answer: see `SlicedSleep` for why in slices.
                try await SlicedSleep.sleep(on: clock, for: deadline, slice: SlicedSleep.slice(for: clock))
                throw HTTPTransportError.timedOut
            }
            defer { group.cancelAll() }
            guard let response = try await group.next() else { throw CancellationError() }
            return response
        }
    }
}
