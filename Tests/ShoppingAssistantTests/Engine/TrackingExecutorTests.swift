import Foundation
import Testing

@testable import ShoppingAssistant

/// The tracking queue: every tracker's tasks on one serial queue, and the drains of what the
/// engines queued run there once it has nothing else to run — or after `patience` jobs, so a
/// queue kept busy never holds a drain back for long. Other suites' trackers share the queue
/// while these run: their jobs can only make a drain come sooner.
@Suite(.timeLimit(.minutes(2))) struct TrackingExecutorTests {
    // covers: B13
    @Test func aDrainAskedForOnAnIdleQueueRunsAtOnce() async {
        await withCheckedContinuation { (ran: CheckedContinuation<Void, Never>) in
            TrackingExecutor.shared.drainWhenIdle { ran.resume() }
        }
    }

    // A task that yields again and again keeps the queue busy: the drain still runs within
    // `patience` of its jobs, not when the task is done.
    // covers: B13
    @Test func aDrainOnABusyQueueWaitsNoLongerThanItsPatience() async {
        let executor = TrackingExecutor.shared
        let patience = TrackingExecutor.patience
        let spins = patience * 8
        let asked = 10
        let done = Locked(0)
        let ranAfter = Locked<Int?>(nil)
        await Task(executorPreference: executor) {
            for spin in 0..<spins {
                if spin == asked {
                    executor.drainWhenIdle { ranAfter.withLock { $0 = done.withLock { $0 } } }
                }
                done.withLock { $0 = spin + 1 }
                await Task.yield()  // one job of the queue each
            }
        }.value
        let after = ranAfter.withLock { $0 }
        #expect(after != nil, "the drain ran before the busy task ended")
        #expect((after ?? .max) <= asked + 1 + patience, "within its patience: ran after spin \(after ?? -1)")
    }
}
