/// What a failed Gravity call or tracking `GET` means for trying again (DL1, DL3; wire.md
/// § Failure classes, as the flutter SDK's `retry_class.dart` sorts them).
enum FailureClass: Hashable, Sendable {
    /// Cannot connect, connection lost before a whole answer, timed out: the network, which
    /// may come back at any moment.
    case transient
    /// 408, 429 or 5xx: the server is there but cannot take it now; `retryAfter` is its
    /// `Retry-After`, when it gave one in seconds.
    case server(retryAfter: Duration?)
    /// Anything else: another status, an answer that is not JSON, cancellation. Sending the
    /// same bytes again cannot help.
    case final

    /// Sorts a call's failure.
    init(_ failure: WireFailure) {
        switch failure {
        case .cancelled:
            self = .final
        case .failed(let error, _):
            if let status = error.httpStatus {
                self = Self.retryable(status: status) ? .server(retryAfter: error.retryAfter) : .final
            } else {
                switch error.code {
                case .network, .timeout: self = .transient
                default: self = .final
                }
            }
        }
    }

    /// The statuses worth the same request again (408, 429, 5xx).
    static func retryable(status: Int) -> Bool { status == 408 || status == 429 || (500...599).contains(status) }

    /// Whether another attempt may succeed.
    var isRetryable: Bool { self != .final }
}

/// When a call that failed is tried again within its deadline (DL1): 1 s, 2 s, then 4 s, as
/// the flutter SDK's `Api.retryDelays`, while the next attempt would still start inside the
/// deadline; a `Retry-After` that fits replaces the step. A pure rule, so that it is tested on
/// its own and every caller (the engine's Gravity calls, the outbox's first attempts) shares it.
enum RetrySchedule {
    /// The pauses before the second, third and fourth attempts.
    static let steps: [Duration] = [.seconds(1), .seconds(2), .seconds(4)]

    /// The pause before the next attempt, or `nil` when there is none: the failure is final,
    /// the steps are spent, or the attempt would start after the deadline.
    ///
    /// - Parameters:
    ///   - failed: how many attempts have failed, this one included (1 after the first).
    ///   - failure: what the last one failed with.
    ///   - elapsed: time since the call started.
    ///   - deadline: the call's whole budget, measured from its start (B13).
    static func pause(afterFailed failed: Int, _ failure: FailureClass, elapsed: Duration, deadline: Duration)
        -> Duration?
    {
        guard failure.isRetryable, failed >= 1, failed <= steps.count else { return nil }
        var pause = steps[failed - 1]
        if case .server(let retryAfter?) = failure {
            // The server's own wait, when it fits; a longer one means not within this call.
            guard elapsed + retryAfter < deadline else { return nil }
            pause = retryAfter
        }
        return elapsed + pause < deadline ? pause : nil
    }
}

/// Runs attempts of one request until one succeeds or `RetrySchedule` says stop, sleeping on
/// the engine's clock in between (DL1). Every attempt is the same request, so the same bytes.
struct RetryLoop: Sendable {
    let clock: any Clock<Duration>
    /// The call's whole budget (B13).
    let deadline: Duration

    func run(_ attempt: @Sendable () async -> Result<HTTPResponse, WireFailure>) async -> Result<
        HTTPResponse, WireFailure
    > {
        let elapsed = stopwatch(on: clock)
        var failed = 0
        while true {
            let result = await attempt()
            guard case .failure(let failure) = result else { return result }
            failed += 1
            guard !Task.isCancelled,
                let pause = RetrySchedule.pause(
                    afterFailed: failed, FailureClass(failure), elapsed: elapsed(), deadline: deadline)
            else { return result }
            do { try await clock.sleep(for: pause) } catch { return result }
        }
    }
}
