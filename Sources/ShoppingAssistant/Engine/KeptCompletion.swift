/// The completion of a call that returns once what it sends is kept (`triggerEvent`, DL5):
/// the store's queue completes it the moment the write is over, and its caller resumes from
/// there instead of waiting for a task to carry the news through the actor first. The machine
/// decides that a call completes this way (`EngineAction.completeWhenKept`); any completion the
/// machine asks later (an answer, a cancellation, the shutdown) is the call's result if it
/// comes first, and changes nothing if it comes after.
final class KeptCompletion: Sendable {
    private enum State {
        case pending
        case parked(CheckedContinuation<CallResult, Never>)
        case completed(CallResult)
        case over
    }

    private let state = Locked(State.pending)
    /// Counts the parked caller out of, and back into, the runnable work (replay quiescence).
    private let activity: ActivityMonitor?

    init(activity: ActivityMonitor?) { self.activity = activity }

    /// The first completion is the call's result; later ones change nothing.
    func complete(_ result: CallResult) {
        let parked = state.withLock { state -> CheckedContinuation<CallResult, Never>? in
            switch state {
            case .pending:
                state = .completed(result)
                return nil
            case .parked(let continuation):
                state = .over
                return continuation
            case .completed, .over:
                return nil
            }
        }
        guard let parked else { return }
        activity?.begin()
        parked.resume(returning: result)
    }

    /// The call's result: at once if it already completed, else once it does. Awaited once.
    func result() async -> CallResult {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> CallResult? in
                switch state {
                case .completed(let result):
                    state = .over
                    return result
                case .pending:
                    state = .parked(continuation)
                    return nil
                case .parked, .over:
                    preconditionFailure("a kept completion's result is awaited once")
                }
            }
            if let ready { return continuation.resume(returning: ready) }
            activity?.end()  // parked: no longer runnable work until `complete` counts it again
        }
    }
}
