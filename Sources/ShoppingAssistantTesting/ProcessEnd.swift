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

    private struct State {
        var ended: Status?
        var waiters: [CheckedContinuation<Status, Never>] = []
    }

    private let state = Locked(State())

    /// Watches `process`, which must not have started yet: a handler set after it starts could
    /// miss an end that came first. Takes the process's termination handler.
    package init(watching process: Process) {
        precondition(!process.isRunning, "watch a process before it starts")
        process.terminationHandler = { [state] process in
            let ended = Status(
                status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal)
            let waiters = state.withLock { state -> [CheckedContinuation<Status, Never>] in
                state.ended = ended
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: ended) }
        }
    }

    /// Waits for the process to end. Never returns for a process that never ends: bound it
    /// with a hang guard.
    package func wait() async -> Status {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Status? in
                if let ended = state.ended { return ended }
                state.waiters.append(continuation)
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    /// How the process ended, or `nil` while it runs.
    package var status: Status? { state.withLock { $0.ended } }
}
