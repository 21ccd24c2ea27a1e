import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// Deadlines on the system's clocks are slept a second at a time (a cancelled system sleep is
/// kept until it was to end); they still end exactly when due, and a cancellation ends them
/// at once. Other clocks are slept on in one piece.
@Suite(.timeLimit(.minutes(1))) struct SlicedSleepTests {
    @Test func onlyTheSystemsClocksAreSleptOnInSlices() {
        #expect(SlicedSleep.slice(for: ContinuousClock()) == .seconds(1))
        #expect(SlicedSleep.slice(for: SuspendingClock()) == .seconds(1))
        #expect(SlicedSleep.slice(for: ManualClock()) == nil)
    }

    @Test func aSlicedSleepEndsExactlyWhenDueWhetherTimeMovesInStepsOrJumps() async throws {
        let clock = ManualClock()
        let sleep = Task { try await SlicedSleep.sleep(on: clock, for: .milliseconds(2_500), slice: .seconds(1)) }
        for expected in [Duration.seconds(1), .seconds(2), .milliseconds(2_500)] {
            await clock.waitForSleepers(1)
            #expect(clock.pendingDeadlines.map(\.offset) == [expected])
            clock.advance(to: clock.pendingDeadlines[0])
        }
        try await sleep.valueUnlessCancelled
        #expect(clock.sleeperCount == 0)

        let jumped = Task { try await SlicedSleep.sleep(on: clock, for: .seconds(120), slice: .seconds(1)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(119))
        await clock.waitForSleepers(1)  // woke early with time left: sleeps the last second
        #expect(clock.pendingDeadlines.map(\.offset) == [.milliseconds(2_500) + .seconds(120)])
        clock.advance(by: .seconds(1))
        try await jumped.valueUnlessCancelled
    }

    @Test func aCancelledSlicedSleepEndsAtOnceAndLeavesNoSleeper() async {
        let clock = ManualClock()
        let sleep = Task { try await SlicedSleep.sleep(on: clock, for: .seconds(130), slice: .seconds(1)) }
        await clock.waitForSleepers(1)
        sleep.cancel()
        await #expect(throws: CancellationError.self) { try await sleep.valueUnlessCancelled }
        #expect(clock.sleeperCount == 0)
    }

    @Test func withoutASliceTheSleepIsOnePiece() async throws {
        let clock = ManualClock()
        let sleep = Task { try await SlicedSleep.sleep(on: clock, for: .seconds(130), slice: nil) }
        await clock.waitForSleepers(1)
        #expect(clock.pendingDeadlines.map(\.offset) == [.seconds(130)])
        clock.advance(by: .seconds(130))
        try await sleep.valueUnlessCancelled
    }
}
