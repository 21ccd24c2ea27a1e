import Dispatch
import ShoppingAssistant

/// Waits `limit` of wall time, or until the calling task is cancelled, whichever comes first.
///
/// It is the timer of a hang guard, which is almost always cancelled long before it passes.
/// `Task.sleep` is the wrong tool for that: a cancelled sleep returns at once, but the runtime
/// keeps its timer and a small task until the original deadline, so a long test that guards
/// every step keeps one of each for every step of the last minute, a curve that looks like a
/// leak. A cancelled dispatch timer is released at once.
///
/// `what` names the guarded wait for `HangWatchdog`, which ends the process if this call has
/// not returned long after `limit`: then nothing in the process runs any more, not even the
/// timer of this wait.
package func wallClockWait(_ limit: Duration, for what: String = "a guarded wait") async {
    let watch = HangWatchdog.shared.begin(what, limit: limit)
    defer { HangWatchdog.shared.end(watch) }
    let alarm = WallClockAlarm()
    await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            alarm.arm(after: limit, continuation)
        }
    } onCancel: {
        alarm.ring()
    }
}

/// One wait of `wallClockWait(_:)`: a continuation resumed once, by the timer or by the
/// cancellation, whichever comes first; the other finds nothing to do.
private final class WallClockAlarm: Sendable {
    /// Unchecked only for the dispatch timer, which Linux's Dispatch does not mark `Sendable`:
    /// it is set and taken under the lock, and cancelling it is safe from any thread.
    private struct State: @unchecked Sendable {
        var continuation: CheckedContinuation<Void, Never>?
        var timer: (any DispatchSourceTimer)?
        var rung = false
    }

    private let state = Locked(State())

    func arm(after limit: Duration, _ continuation: CheckedContinuation<Void, Never>) {
        let rungAlready = state.withLock { state -> Bool in
            guard !state.rung else { return true }
            let timer = DispatchSource.makeTimerSource(queue: .global())
            let (seconds, attoseconds) = limit.components
            // Clamped to about 68 years, so an absurd limit cannot wrap around to "now".
            let nanoseconds = Int(clamping: min(seconds, 1 << 31)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            timer.schedule(deadline: .now() + .nanoseconds(max(0, nanoseconds)))
            timer.setEventHandler { [self] in ring() }
            state.continuation = continuation
            state.timer = timer
            timer.resume()
            return false
        }
        if rungAlready { continuation.resume() }
    }

    func ring() {
        let (continuation, timer) = state.withLock { state in
            state.rung = true
            defer {
                state.continuation = nil
                state.timer = nil
            }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume()
    }
}
