import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The guard for a child process: a fresh test binary that starts, discovers its tests and
/// runs one role. On two cores busy with the socket suites under the thread sanitizer that
/// alone has taken over a minute, so children get three.
let childProcessGuardSeconds = 180

/// Waits for something a test expects to happen soon, and fails the test instead of hanging
/// the run when it does not happen within a generous bound (60 s of wall time, far beyond
/// what any step takes on a loaded machine under the thread sanitizer). The bound is only a
/// guard: nothing waits for it to pass.
func withinHangGuard<Value: Sendable>(
    _ what: @autoclosure () -> String, seconds: Int = 60, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () async -> Value
) async -> Value? {
    let description = what()
    let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
        let pending = Locked<CheckedContinuation<Value?, Never>?>(continuation)
        let take: @Sendable () -> CheckedContinuation<Value?, Never>? = {
            pending.withLock { value -> CheckedContinuation<Value?, Never>? in
                defer { value = nil }
                return value
            }
        }
        let timer = Task {
            await wallClockWait(.seconds(seconds), for: description)
            guard !Task.isCancelled else { return }
            take()?.resume(returning: nil)
        }
        Task {
            let value = await body()
            timer.cancel()
            take()?.resume(returning: value)
        }
    }
    if outcome == nil {
        Issue.record("hang: \(description) did not happen within \(seconds) s", sourceLocation: sourceLocation)
    }
    return outcome
}

/// Lets at most `width` tests of a parameterized matrix run at once, so hundreds of cases do
/// not open hundreds of sessions, servers and threads together on a 2-core machine.
final class AsyncLimiter: Sendable {
    private struct State {
        var available: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>

    init(width: Int) { state = Locked(State(available: width)) }

    func run<Value: Sendable>(_ body: () async throws -> Value) async rethrows -> Value {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.available > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.available -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.available += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
