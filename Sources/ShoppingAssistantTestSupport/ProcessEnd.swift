import Foundation
import ShoppingAssistant

/// The end of a `Process`, awaited without holding a thread.
///
/// Foundation's `waitUntilExit()` on Linux polls a run loop: called on any thread but the one
/// that started the process, that run loop has no source and the poll spins a whole core until
/// the process ends (measured: 3 s of CPU for a 3 s child). A test that waits for a child that
/// way takes one of CI's two cores from the child it waits for. Here the process's termination
/// handler, set before it starts, resumes the waiters: no thread waits and nothing spins.
package final class ProcessEnd: Sendable {
    /// How a process ended: its exit status, or the signal that ended it.
    package struct Status: Sendable, Equatable {
        package var status: Int32
        package var signaled: Bool

        package init(status: Int32, signaled: Bool) {
            self.status = status
            self.signaled = signaled
        }
    }

    private struct State: WaitingState {
        var ended: Status?
        /// `nil`: the waiter's task was cancelled first.
        var waiters = ParkedCallers<Status?, Void>()
    }

    private let state = Locked(State())

    /// Watches `process`, which must not have started yet: a handler set after it starts could
    /// miss an end that came first. Takes the process's termination handler.
    package init(watching process: Process) {
        precondition(!process.isRunning, "watch a process before it starts")
        process.terminationHandler = { [state] process in
            let ended = Status(
                status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal)
            let waiters = state.withLock { state in
                state.ended = ended
                return state.waiters.takeAll()
            }
            for waiter in waiters { waiter.resume(returning: ended) }
        }
    }

    /// Waits for the process to end; `nil` if the calling task was cancelled first. A process
    /// that never ends is for a hang guard to bound.
    package func wait() async -> Status? {
        await state.wait(cancelled: nil) { state in
            if let ended = state.ended { return .proceed(ended) }
            return .park(())
        }
    }

    /// How the process ended, or `nil` while it runs.
    package var status: Status? { state.withLock { $0.ended } }
}
