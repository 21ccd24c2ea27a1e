import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@testable import AssistantREPL

/// `:log` at a terminal waits for the first attempts under way a moment at most: offline, their
/// retries take seconds (DL1), and the prompt must not freeze meanwhile.
@Suite(.timeLimit(.minutes(2))) struct LogPatienceTests {
    @Test func aWaitThatOutlastsItsPatienceReturnsWhileTheWorkGoesOn() async {
        let clock = ManualClock()
        let release = AsyncStream<Void>.makeStream()
        let finished = Locked(false)
        let waiting = Task {
            await REPLSession.ends(within: .milliseconds(300), on: clock) {
                for await _ in release.stream {}
                finished.withLock { $0 = true }
            }
        }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .milliseconds(300))
        #expect(await waiting.value == false, "its patience ran out first")
        #expect(finished.withLock { $0 } == false, "the work goes on")
        release.continuation.finish()
    }

    @Test func aWaitForWorkThatEndsInTimeSaysSo() async {
        let clock = ManualClock()
        let ended = await REPLSession.ends(within: .milliseconds(300), on: clock) {}
        #expect(ended)
    }
}
