import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// The engine's one deadline ticker as it runs on the system's clocks (`sleepersRunOut`): a
/// ticker no deadline needs any more sleeps on to its old target instead of being cancelled,
/// so a message's reply, which cancels its 120 s deadline, wakes no thread to end the ticker,
/// and the next message's deadline needs no new one. Deadlines still pass exactly on time.
@Suite(.timeLimit(.minutes(2))) struct DeadlineTickerTests {
    private let chooseMatcher = ScriptedTransport.Matcher.request(.post, pathSuffix: "/choose")

    /// Sleepers run out on the system's clocks only: a manual clock (a test's) and any clock of
    /// the host's own keep exact sleepers, which a replay advances time to.
    // covers: D3
    @Test func sleepersRunOutOnTheSystemsClocksOnly() async {
        let configuration = AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section)
        let transport = ScriptedTransport(clock: ManualClock())
        for (clock, runsOut) in [
            (ContinuousClock() as any Clock<Duration>, true), (SuspendingClock(), true), (ManualClock(), false),
        ] {
            let engine = AssistantEngine(configuration: configuration, transport: transport, clock: clock)
            #expect(await engine.sleepersRunOut == runsOut, "\(type(of: clock))")
        }
    }

    /// A ticker left to run out with no deadline left wakes at its old target and ends.
    // covers: P3
    @Test func aTickerLeftToRunOutEndsWhenItWakesWithNothingLeft() async throws {
        let h = await EngineHarness(sleepersRunOut: true)
        await h.prepareReady()
        try await h.bed.runUntilIdle()
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10)], "towards `/choose`'s deadline")
        h.clock.advance(by: .seconds(10))
        try await h.bed.runUntilIdle()
        #expect(h.clock.sleeperCount == 0, "it woke with nothing due and nothing left, and ended")
        #expect(await h.engine.preparationState == .ready)
        await h.verify()
    }

    /// Preparing leaves the ticker sleeping towards its `/choose` deadline (10 s), which the
    /// answer cancelled; the first message, answered at 5 s, and the second, sent at 6 s, start
    /// none of their own. At 10 s the ticker wakes with nothing due and sleeps on to the second
    /// message's deadline, which passes 120 s after it was sent, exactly (D3).
    // covers: D3
    @Test func aTickerLeftToRunOutStillEndsTheNextMessagesWaitAtExactly120Seconds() async throws {
        let h = await EngineHarness(sleepersRunOut: true)
        await h.prepareReady()
        h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respondAfter(.seconds(5), Fixtures.reply(to: "first")))
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        _ = try await h.sendAccepted("Первый вопрос")
        await h.clock.waitForSleepers(2)
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(5), .seconds(10)], "no ticker for 120 s")
        h.clock.advance(by: .seconds(5))
        await h.engine.waitForReply()
        try await h.bed.runUntilIdle()
        // The ticker sleeps on, and so does the deadline watcher of the reply's tracking (its
        // events went at 5 s, with 10 s deadlines), which no worker needs any more either.
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10), .seconds(15)])

        h.clock.advance(by: .seconds(1))  // at 6 s
        h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"),
            .respondAfter(.seconds(121), Fixtures.reply(to: "late", assistantMessageId: "am-late")))
        h.expectEvents(2)
        let messageId = try await h.sendAccepted(DialogEngineTests.text)
        let threadId = try #require(await h.engine.currentThreadId)
        let history = h.transport.expect(
            .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
            .respond(Fixtures.history(threadId: threadId, messageId: messageId, replyId: "am-h")))
        await h.clock.waitForSleepers(2)
        await h.clock.waitForSleepers(3)
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10), .seconds(15), .seconds(127)], "no new ticker")

        h.clock.advance(by: .seconds(4))  // at 10 s: the ticker's old target, nothing due
        await h.clock.waitForSleepers(3)
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(15), .seconds(126), .seconds(127)])
        h.clock.advance(by: .seconds(5))  // at 15 s: the watcher wakes with no worker, and ends
        await h.clock.waitForSleepers(2)
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(126), .seconds(127)])
        h.clock.advance(by: .seconds(111) - .milliseconds(1))
        #expect(await h.engine.dialogState == .sending)
        #expect(h.transport.request(for: history) == nil)

        h.clock.advance(by: .milliseconds(1))  // at 126 s: 120 s after the second message
        await h.engine.waitForReply()
        #expect(h.transport.request(for: history) != nil)
        #expect(await h.engine.chatSnapshot.messages.last?.id == "am-h")
        await h.verify()
    }

    /// A deadline earlier than the target of a ticker left to run out does not wait for it:
    /// the ticker is replaced, and a 3 s preparation times out at 3 s, not at the 10 s of the
    /// earlier preparation's `/choose` deadline, towards which the ticker still slept (P3).
    // covers: P3
    @Test func aDeadlineEarlierThanATickerLeftToRunOutPassesOnTime() async throws {
        let h = await EngineHarness(sleepersRunOut: true)
        let choose = h.transport.expect(chooseMatcher, .deferred)
        let first = await h.startPreparing(timeout: .seconds(60), requestsBefore: 0)
        await h.clock.waitForSleepers(1)
        h.transport.complete(choose, with: Fixtures.choose())
        #expect(await first.valueUnlessCancelled == .ready)
        try await h.bed.runUntilIdle()
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10)], "the ticker sleeps on to 10 s")

        h.transport.expect(chooseMatcher, .deferred)
        let second = await h.startPreparing(page: Fixtures.homePage, timeout: .seconds(3), requestsBefore: 1)
        await h.clock.waitForSleepers(1)
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(3)], "replaced by a ticker for 3 s")
        h.clock.advance(by: .seconds(3) - .milliseconds(1))
        #expect(await h.engine.preparationState == .preparing)
        h.clock.advance(by: .milliseconds(1))
        let result = await second.valueUnlessCancelled
        guard case .failure(let error) = result else {
            Issue.record("expected a timeout at 3 s, got \(result)")
            return
        }
        #expect(error.code == .timeout)
        await h.verify()
    }

    /// A shutdown ends a ticker and a tracking watcher left to run out at once: nothing of the
    /// engine sleeps on (H2).
    // covers: H2
    @Test func aShutdownEndsATickerAndAWatcherLeftToRunOut() async throws {
        let h = await EngineHarness(sleepersRunOut: true)
        await h.prepareReady()
        try await h.sendAndReceive("Вопрос", reply: Fixtures.reply(to: "m"))
        try await h.bed.runUntilIdle()
        // The ticker, towards `/choose`'s old deadline, and the reply's tracking watcher.
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10), .seconds(10)])
        await h.engine.shutdown()
        try await h.bed.runUntilIdle()
        #expect(h.clock.sleeperCount == 0, "no ticker is left asleep")
        #expect(h.activity.liveTasks == 0, "nothing of the engine runs")
    }

    /// A deadline watcher left to run out holds its tracker only while it looks: an engine
    /// released without a shutdown lets go of its tracker (and the transport) at once, not
    /// when the watcher next wakes.
    @Test func aWatcherLeftToRunOutKeepsNoReleasedEnginesTrackerAlive() async throws {
        weak var released: Outbox?
        let clock: ManualClock
        do {
            let h = await EngineHarness(sleepersRunOut: true)
            clock = h.clock
            released = await h.engine.outbox
            h.transport.expect(.get("https://t.example/a"), .respond(.text(204, "")))
            await h.engine.track([.url("https://t.example/a", user: GravityUser(uid: "u-8f3c"))])
            try await h.bed.runUntilIdle()
            #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(10)], "the watcher sleeps on")
            await h.verify()
        }
        #expect(released == nil, "the sleeping watcher does not keep the tracker")
        #expect(clock.sleeperCount == 1, "while it still sleeps")
    }
}
