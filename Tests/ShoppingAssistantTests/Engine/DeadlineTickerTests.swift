import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// The engine's one deadline ticker as it runs on the system's clocks (`letsTickerRunOut`): a
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
            #expect(await engine.letsTickerRunOut == runsOut, "\(type(of: clock))")
        }
    }

    /// A ticker left to run out with no deadline left wakes at its old target and ends.
    // covers: P3
    @Test func aTickerLeftToRunOutEndsWhenItWakesWithNothingLeft() async throws {
        let h = await EngineHarness(letsTickerRunOut: true)
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
        let h = await EngineHarness(letsTickerRunOut: true)
        await h.prepareReady()
        h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respondAfter(.seconds(5), Fixtures.reply(to: "first")))
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        _ = try await h.sendAccepted("Первый вопрос")
        try await h.bed.runUntilIdle()
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(5), .seconds(10)], "no ticker for 120 s")
        h.clock.advance(by: .seconds(5))
        await h.engine.waitForReply()
        try await h.bed.runUntilIdle()
        // The ticker sleeps on, and so does the outbox's one deadline watcher, towards the
        // reply event's deadline (sent at 5 s, 10 s to go: B13).
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
        try await h.bed.runUntilIdle()
        #expect(
            h.clock.pendingDeadlines.map(\.offset) == [.seconds(10), .seconds(15), .seconds(127)], "no new ticker")

        h.clock.advance(by: .seconds(4))  // at 10 s: the ticker's old target, nothing due
        try await h.bed.runUntilIdle()
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(15), .seconds(126), .seconds(127)])
        h.clock.advance(by: .seconds(116) - .milliseconds(1))
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
        let h = await EngineHarness(letsTickerRunOut: true)
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

    /// A shutdown ends a ticker left to run out and every sleeper of the outbox at once — each
    /// send's own deadline, a send waiting for its next attempt (DL1) — and leaves what those
    /// sends carried in the store for the next engine: nothing of the engine sleeps on (H2).
    @Test func aShutdownEndsATickerLeftToRunOutAndEverySendsSleepers() async throws {
        let h = await EngineHarness(letsTickerRunOut: true)
        await h.prepareReady()
        try await h.sendAndReceive("Вопрос", reply: Fixtures.reply(to: "m"))
        try await h.bed.runUntilIdle()
        // The ticker sleeps towards `/choose`'s old deadline; the outbox's deadline watcher
        // sleeps beside it only if one of the chat's sends was still under way when its
        // deadline was listed, which is the scheduler's choice.
        let before = h.clock.pendingDeadlines.map(\.offset)
        #expect(before == [.seconds(10)] || before == [.seconds(10), .seconds(10)], "\(before)")
        h.transport.expect(.get("https://stalled.example/i"), .deferred)
        h.transport.expect(.get("https://offline.example/i"), .fail(.cannotConnect("offline")))
        let user = GravityUser(uid: "u-8f3c")
        await h.engine.track([
            .url("https://stalled.example/i", user: user), .url("https://offline.example/i", user: user),
        ])
        try await h.bed.runUntilIdle()
        // The second attempt of the URL that could not connect (at 1 s), the ticker, and the
        // one watcher of every send's deadline.
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(1), .seconds(10), .seconds(10)])
        // The stalled URL never answers: the shutdown waits out its flush deadline (2 s), in
        // which the other URL's second attempt (at 1 s) fails too.
        h.transport.expect(.get("https://offline.example/i"), .fail(.cannotConnect("offline")))
        let shutdown = h.bed.start { await $0.shutdown() }
        try await h.bed.runUntilIdle()
        h.clock.advance(by: .seconds(1))
        try await h.bed.runUntilIdle()
        #expect(shutdown.returnedValue == nil, "the flush deadline has not passed yet")
        h.clock.advance(by: .seconds(1))
        try await h.bed.runUntilIdle()
        #expect(shutdown.returnedValue != nil, "the shutdown ends at its flush deadline")
        #expect(h.clock.sleeperCount == 0, "nothing is left asleep: \(h.clock.pendingDeadlines)")
        #expect(h.activity.liveTasks == 0, "nothing of the engine runs")
        #expect(await h.engine.pendingDeliveries == 2, "both URLs wait in the store for the next engine")
    }

    /// A pause of the queue left sleeping holds the outbox only while it looks: an engine
    /// released without a shutdown lets go of its outbox (and the transport) at once, not when
    /// the pause ends; woken with no outbox, the pause ends. (This replaces the tracker's
    /// deadline watcher left to run out, which the outbox no longer has: a send's deadline
    /// ends with the send.)
    // covers: DL3
    @Test func aPauseLeftToRunKeepsNoReleasedEnginesOutboxAlive() async throws {
        weak var released: Outbox?
        let clock: ManualClock
        let activity: ActivityMonitor
        do {
            let h = await EngineHarness(letsTickerRunOut: true)
            clock = h.clock
            activity = h.activity
            released = await h.engine.outbox
            h.transport.expect(.get("https://stalled.example/i"), .deferred)
            await h.engine.track([.url("https://stalled.example/i", user: GravityUser(uid: "u-8f3c"))])
            try await h.bed.runUntilIdle()
            h.clock.advance(by: .seconds(10))  // its deadline: kept, and the queue pauses
            try await h.bed.runUntilIdle()
            #expect(await h.engine.trackingLog.map(\.failure) == ["timeout"])
            #expect(h.clock.sleeperCount == 1, "the pause sleeps")
            await h.verify()
        }
        #expect(released == nil, "the sleeping pause does not keep the outbox")
        #expect(clock.sleeperCount == 1, "while it still sleeps")
        clock.advance(by: .seconds(10))
        #expect(await activity.waitUntilIdle())
        #expect(clock.sleeperCount == 0, "woken with no outbox, it ended")
    }
}
