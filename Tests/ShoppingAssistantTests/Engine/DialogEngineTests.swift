import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@Suite(.timeLimit(.minutes(2))) struct DialogEngineTests {
    static let text = "Помогите выбрать подарок"

    // MARK: - Timeout and history reconciliation

    /// Prepares, sends a message whose reply comes after 121 s, and scripts the history read
    /// that finds the reply (`am-h`), with the events of a reply (D3, D5).
    static func sendWithReplyAfter121Seconds(
        on h: EngineHarness
    ) async throws -> (post: ScriptedTransport.Exchange, history: ScriptedTransport.Exchange, messageId: String) {
        await h.prepareReady()
        let post = h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"),
            .respondAfter(.seconds(121), Fixtures.reply(to: "late", assistantMessageId: "am-late")))
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        let messageId = try await h.sendAccepted(text)
        let threadId = try #require(await h.engine.currentThreadId)
        let history = h.transport.expect(
            .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
            .respond(Fixtures.history(threadId: threadId, messageId: messageId, replyId: "am-h")))
        return (post, history, messageId)
    }

    // covers: D3, D5
    @Test func replyArrivingAfter120SecondsIsATimeoutAndTheReplyFoundInHistoryIsAdoptedWithoutResending() async throws {
        let h = await EngineHarness()
        let (post, history, messageId) = try await Self.sendWithReplyAfter121Seconds(on: h)
        await h.clock.waitForSleepers(2)  // the reply deadline and the reply still on its way
        #expect(h.transport.request(for: post) != nil)
        try #require(h.clock.pendingDeadlines.map(\.offset) == [.seconds(120), .seconds(121)])

        h.clock.advance(by: .seconds(119))
        #expect(await h.engine.dialogState == .sending)
        #expect(h.transport.request(for: history) == nil)

        h.clock.advance(by: .seconds(1))
        await h.engine.waitForReply()

        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.map(\.id) == [messageId, "am-h"])
        #expect(snapshot.messages.first?.status == .sent)
        #expect(snapshot.messages.last?.text == "Из истории")
        #expect(h.transport.messageRequests.count == 1)
        try await h.bed.runUntilIdle()  // the lifecycle events' deliveries, and their watcher, are over
        #expect(h.clock.sleeperCount == 0)  // the abandoned request no longer waits
        let historyRequest = h.transport.request(for: history)
        #expect(DialogWire.query(historyRequest, "resourceId") == "u-8f3c")
        #expect(DialogWire.query(historyRequest, "tenant_id") == Fixtures.section)
        await h.verify()
        #expect(h.sentEventTypes == ["chat_message_send", "chat_message_reply"])
        #expect(h.sentLifecycleEvents.last?.props["assistantMessageId"] == "am-h")
    }

    /// On the system's clocks the engine's ticker sleeps a second at a time (a cancelled
    /// system sleep is kept until it was to end); the reply deadline still passes at exactly
    /// 120 s, neither a slice early nor a slice late, whether time moves in steps or jumps.
    // covers: D3
    @Test func aTickerSleepingASecondAtATimeEndsTheWaitAtExactly120Seconds() async throws {
        let h = await EngineHarness(tickerSlice: .seconds(1))
        let (_, history, messageId) = try await Self.sendWithReplyAfter121Seconds(on: h)
        await h.clock.waitForSleepers(2)  // one slice of the ticker, and the reply on its way
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(1), .seconds(121)])

        for (step, slept) in [(Duration.seconds(1), Duration.seconds(2)), (.seconds(117), .seconds(119))] {
            h.clock.advance(by: step)
            await h.clock.waitForSleepers(2)  // the ticker woke, found nothing due, sleeps again
            #expect(h.clock.pendingDeadlines.map(\.offset) == [slept, .seconds(121)])
        }
        h.clock.advance(by: .seconds(1))  // at 119 s
        await h.clock.waitForSleepers(2)
        #expect(h.clock.pendingDeadlines.map(\.offset) == [.seconds(120), .seconds(121)])
        #expect(await h.engine.dialogState == .sending)
        #expect(h.transport.request(for: history) == nil)

        h.clock.advance(by: .seconds(1))
        await h.engine.waitForReply()
        #expect(await h.engine.chatSnapshot.messages.map(\.id) == [messageId, "am-h"])
        try await h.bed.runUntilIdle()  // the lifecycle events' deliveries, and their watcher, are over
        #expect(h.clock.sleeperCount == 0)
        await h.verify()
    }

    // covers: D3
    @Test func replyWithin120SecondsIsAdoptedWithoutReadingHistory() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respondAfter(.seconds(119), Fixtures.reply(to: "m")))
        h.expectEvents(2)
        let messageId = try await h.sendAccepted(Self.text)
        await h.clock.waitForSleepers(2)
        try #require(h.clock.pendingDeadlines.map(\.offset) == [.seconds(119), .seconds(120)])
        h.clock.advance(by: .seconds(119))
        await h.engine.waitForReply()
        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.map(\.id) == [messageId, "am-17"])
        try await h.bed.runUntilIdle()  // the lifecycle events' deliveries, and their watcher, are over
        #expect(h.clock.sleeperCount == 0)  // the reply deadline was stopped
        h.clock.advance(by: .seconds(10))
        await h.verify()  // no history request: the scripted transport would have flagged it
    }

    /// The outcomes after which the request may have reached the server (D5).
    enum Uncertain: String, CaseIterable, Sendable {
        case connectionLost, transportTimeout, badGateway, serviceUnavailable, gatewayTimeout

        func finish(_ exchange: ScriptedTransport.Exchange, on transport: ScriptedTransport) {
            switch self {
            case .connectionLost: transport.fail(exchange, with: .connectionLost("reset by peer"))
            case .transportTimeout: transport.fail(exchange, with: .timedOut)
            case .badGateway: transport.complete(exchange, with: .text(502, "Bad Gateway"))
            case .serviceUnavailable: transport.complete(exchange, with: Fixtures.errorBody(503, code: "UNAVAILABLE"))
            case .gatewayTimeout: transport.complete(exchange, with: .text(504, ""))
            }
        }
    }

    // covers: D5
    @Test(arguments: Uncertain.allCases)
    func uncertainOutcomeReadsHistoryAndAdoptsTheReplyFoundThere(_ outcome: Uncertain) async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        let messageId = try await h.sendAccepted(Self.text)
        let threadId = try #require(await h.engine.currentThreadId)
        h.transport.expect(
            .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
            .respond(Fixtures.history(threadId: threadId, messageId: messageId, replyId: "am-h")))
        outcome.finish(post, on: h.transport)
        await h.engine.waitForReply()
        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.map(\.id) == [messageId, "am-h"])
        #expect(snapshot.messages.first?.status == .sent)
        #expect(h.transport.messageRequests.count == 1)
        await h.verify()
    }

    // covers: D4, D5
    @Test func historyWithoutTheReplyFailsTheMessageKeepsItsTextAndOffersRetry() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // chat_message_send, chat_message_error
        let messageId = try await h.sendAccepted(Self.text)
        let threadId = try #require(await h.engine.currentThreadId)
        h.transport.expect(
            .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
            .respond(Fixtures.history(threadId: threadId, messageId: messageId, replyId: nil)))
        h.transport.complete(post, with: .text(503, ""))
        await h.engine.waitForReply()
        let message = await h.userMessage(messageId)
        #expect(message?.text == Self.text)
        #expect(DialogWire.failureCode(message) == .server)
        #expect(message?.canRetry == true)
        #expect(await h.engine.chatSnapshot.messages.count == 1)
        #expect(await h.engine.dialogState == .active)
        #expect(h.transport.messageRequests.count == 1)
        await h.verify()
        #expect(h.sentEventTypes == ["chat_message_send", "chat_message_error"])
    }

    // covers: D4
    @Test func certainNetworkErrorKeepsTheTextAndIsNeverResentAutomatically() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .fail(.cannotConnect("connection refused")))
        h.expectEvents(2)  // chat_message_send, chat_message_error
        let messageId = try await h.sendAccepted(Self.text)
        await h.engine.waitForReply()
        let message = await h.userMessage(messageId)
        #expect(message?.text == Self.text)
        #expect(DialogWire.failureCode(message) == .network)
        #expect(message?.canRetry == true)
        try await h.bed.runUntilIdle()  // the lifecycle events' deliveries, and their watcher, are over
        #expect(h.clock.sleeperCount == 0)
        h.clock.advance(by: .seconds(600))
        await h.verify()
        #expect(h.transport.messageRequests.count == 1)
    }

    // MARK: - Retry and conflicts

    // covers: D6
    @Test func retrySendsTheByteIdenticalBodyWithTheSameMessageID() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        let first = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .fail(.cannotConnect("down")))
        h.expectEvents(4)  // send, error, send (attempt 2), reply
        let messageId = try await h.sendAccepted(Self.text)
        await h.engine.waitForReply()
        let second = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m")))
        let retried = await h.engine.retryMessage(id: messageId)
        #expect(retried == .success(messageId))
        await h.engine.waitForReply()

        let firstBody = h.transport.request(for: first)?.body
        #expect(firstBody != nil)
        #expect(h.transport.request(for: second)?.body == firstBody)
        #expect(Fixtures.body(h.transport.request(for: second))["messageId"] as? String == messageId)
        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.map(\.id) == [messageId, "am-17"])
        #expect(snapshot.messages.first?.status == .sent)
        await h.verify()
        let attempts = h.sentLifecycleEvents.filter { $0.type == "chat_message_send" }.map { $0.props["attempt"] }
        #expect(attempts == ["1", "2"])
    }

    // covers: D8
    @Test func messageConflictIsNotRetriedGetsNoNewIDAndKeepsEarlierReplies() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        let firstId = try await h.sendAndReceive("Первый", reply: Fixtures.reply(to: "m"))
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // chat_message_send, chat_message_error
        let messageId = try await h.sendAccepted(Self.text)
        let marker = h.uuids.next()  // every ID the engine takes from here on comes after it
        h.transport.complete(post, with: Fixtures.errorBody(409, code: "MESSAGE_ID_CONFLICT"))
        await h.engine.waitForReply()

        let message = await h.userMessage(messageId)
        #expect(DialogWire.failureCode(message) == .messageConflict)
        #expect(message?.canRetry == false)
        #expect(message?.text == Self.text)
        #expect(await h.engine.retryMessage(id: messageId) == .failure(.notRetryable))
        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.map(\.id) == [firstId, "am-17", messageId])
        try #require(snapshot.messages.count > 1)
        #expect(snapshot.messages[1].text == "Вот несколько идей до 3000 ₽.")
        await h.verify()
        #expect(h.transport.messageRequests.count == 2)
        // No ID was generated after the conflict: the next one directly follows the marker.
        let next = h.uuids.next().uuidString
        #expect(next.suffix(12) == String(format: "%012d", (Int(marker.uuidString.suffix(12)) ?? 0) + 1))
    }

    // covers: D9, D10
    @Test func historyNotFoundIsLoggedAndNoLocalMessageIsErased() async throws {
        let logs = LogCollector()
        let h = await EngineHarness(logger: logs.makeLogger(level: .info))
        await h.prepareReady()
        let firstId = try await h.sendAndReceive("Первый", reply: Fixtures.reply(to: "m"))
        let threadId = try #require(await h.engine.currentThreadId)
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // chat_message_send, chat_message_error
        let messageId = try await h.sendAccepted(Self.text)
        h.transport.expect(
            .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
            .respond(Fixtures.errorBody(404, code: "SHOPPING_HISTORY_NOT_FOUND")))
        h.transport.complete(post, with: .text(504, ""))
        await h.engine.waitForReply()

        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.map(\.id) == [firstId, "am-17", messageId])
        try #require(snapshot.messages.count > 2)
        #expect(snapshot.messages[0].status == .sent)
        #expect(snapshot.messages[2].text == Self.text)
        #expect(snapshot.messages[2].canRetry)
        guard case .failed(let error) = snapshot.messages[2].status else {
            Issue.record("the message did not fail: \(snapshot.messages[2].status)")
            return
        }
        #expect(error.message.contains("history_unavailable"))
        #expect(logs.messages.filter { $0.contains("history_unavailable") }.count == 1, "one line per failure")
        #expect(logs.errors.isEmpty, "the dialog reports the failure: the log line is a note")
        #expect(await h.engine.currentThreadId == threadId)
        await h.verify()
    }

    // MARK: - Dialog lifetime

    // covers: D13, D15
    @Test func replyArrivingAfterNewChatNeverLandsAndTheNewDialogHasANewThread() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        let old = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(4)  // send, dialog_end, send, reply
        let oldId = try await h.sendAccepted("Первый")
        let oldThread = try #require(await h.engine.currentThreadId)
        await h.transport.waitForRequest(old)
        let inFlight = await h.dialogRequestsInFlight()

        await h.engine.startNewChat()
        #expect(await h.engine.chatSnapshot.messages.isEmpty)
        #expect(await h.engine.dialogState == .empty)
        #expect(await h.engine.currentThreadId == nil)

        h.transport.complete(old, with: Fixtures.reply(to: oldId, assistantMessageId: "am-old"))
        for task in inFlight { await task.valueUnlessCancelled }
        #expect(await h.engine.chatSnapshot.messages.isEmpty)
        #expect(await h.engine.dialogState == .empty)

        let new = h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m", assistantMessageId: "am-new"))
        )
        let newId = try await h.sendAccepted("Второй")
        await h.engine.waitForReply()
        let newThread = try #require(await h.engine.currentThreadId)
        #expect(newThread != oldThread)
        #expect(newThread != "s-1")  // never the Gravity session
        #expect(UUID(uuidString: newThread) != nil)
        #expect(Fixtures.body(h.transport.request(for: new))["threadId"] as? String == newThread)
        #expect(Fixtures.body(h.transport.request(for: old))["threadId"] as? String == oldThread)
        #expect(await h.engine.chatSnapshot.messages.map(\.id) == [newId, "am-new"])
        await h.verify()
        let end = h.sentLifecycleEvents.first { $0.type == "chat_dialog_end" }
        #expect(end?.props == ["threadId": oldThread, "reason": "new_chat"])
    }

    // covers: D13, D17
    @Test func replyArrivingAfterAnIdentityChangeNeverLandsAndNothingOldIsVisible() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        try await h.sendAndReceive("Первый", reply: Fixtures.reply(to: "m"))
        let old = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // send, dialog_end (identity_change)
        let oldId = try await h.sendAccepted("Второй")
        let oldThread = try #require(await h.engine.currentThreadId)
        await h.transport.waitForRequest(old)
        let inFlight = await h.dialogRequestsInFlight()

        await h.engine.setUser(userId: "manual-7")
        var snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.isEmpty)
        #expect(snapshot.suggests.isEmpty)
        #expect(await h.engine.currentThreadId == nil)
        #expect(await h.engine.sendMessage("Третий") == .failure(.notReady))

        h.transport.complete(old, with: Fixtures.reply(to: oldId, assistantMessageId: "am-late"))
        for task in inFlight { await task.valueUnlessCancelled }
        snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.isEmpty)

        await h.prepareWith(Fixtures.choose(uid: "u-new", ses: "s-2"))
        let new = h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m", assistantMessageId: "am-new"))
        )
        h.expectEvents(2)  // send, reply
        let newId = try await h.sendAccepted("Третий")
        await h.engine.waitForReply()
        snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.map(\.id) == [newId, "am-new"])
        #expect(snapshot.messages.allSatisfy { $0.id != "am-late" && $0.id != "am-17" })
        let newThread = try #require(await h.engine.currentThreadId)
        #expect(newThread != oldThread)
        #expect(Fixtures.body(h.transport.request(for: new))["threadId"] as? String == newThread)
        await h.verify()
    }

    // covers: D2
    @Test func secondSendWhileSendingIsRefusedAsBusyAndTheSnapshotShowsSending() async throws {
        let h = await EngineHarness()
        await h.openReady()
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // send, reply
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        let messageId = try await h.sendAccepted("Первый")

        #expect(await h.engine.sendMessage("Второй") == .failure(.busy))
        #expect(await h.engine.retryMessage(id: messageId) == .failure(.busy))
        #expect(await h.engine.dialogState == .sending)
        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.isSending)
        #expect(!snapshot.canSend)
        #expect(snapshot.messages.map(\.id) == [messageId])
        #expect(snapshot.messages.first?.status == .sending)
        #expect(h.presenter.latest?.isSending == true)
        #expect(h.presenter.latest?.canSend == false)

        h.transport.complete(post, with: Fixtures.reply(to: messageId))
        await h.engine.waitForReply()
        #expect(await h.engine.chatSnapshot.isSending == false)
        // The presenter is told after the dialog settles; wait for that update.
        let settled = await h.presenter.waitForSnapshot { !$0.isSending }
        #expect(settled?.canSend == true)
        #expect(settled?.messages.map(\.id) == [messageId, "am-17"])
        #expect(h.transport.messageRequests.count == 1)
        await h.verify()
    }

    // covers: D12
    @Test func closingTheChatDoesNotCancelASentMessageAndTheReplyIsThereAfterReopening() async throws {
        let h = await EngineHarness()
        await h.openReady()
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(4)  // send, close, reply, open
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        let messageId = try await h.sendAccepted(Self.text)
        await h.transport.waitForRequest(post)

        await h.engine.closeAssistant()
        #expect(await h.engine.isAssistantOpen == false)
        #expect(await h.engine.dialogState == .sending)
        let inFlight = await h.dialogRequestsInFlight()
        try #require(inFlight.count == 1 && !inFlight[0].isCancelled)

        h.transport.complete(post, with: Fixtures.reply(to: messageId))
        await h.engine.waitForReply()
        #expect(await h.engine.chatSnapshot.messages.map(\.id) == [messageId, "am-17"])

        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        #expect(h.presenter.count(.present) == 2)
        #expect(h.presenter.latest?.messages.map(\.id) == [messageId, "am-17"])
        #expect(h.presenter.latest?.messages.first?.status == .sent)
        #expect(h.transport.messageRequests.count == 1)
        await h.verify()
    }

    // covers: D14
    @Test func dialogContextIsFixedAtStartAndANewChatUsesTheNewPage() async throws {
        let h = await EngineHarness()
        await h.prepareReady(page: Fixtures.productPage)
        let first = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)
        _ = try await h.sendAccepted("Первый")
        // The shopper moves to another page while the first request is unfinished.
        await h.prepareReady(page: Fixtures.homePage)
        h.transport.complete(first, with: Fixtures.reply(to: "m"))
        await h.engine.waitForReply()

        let second = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m")))
        h.expectEvents(2)
        _ = try await h.sendAccepted("Второй")
        await h.engine.waitForReply()

        h.expectEvents(1)  // chat_dialog_end
        await h.engine.startNewChat()
        let third = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m")))
        h.expectEvents(2)
        _ = try await h.sendAccepted("Третий")
        await h.engine.waitForReply()

        for exchange in [first, second] {
            let page = DialogWire.page(h.transport.request(for: exchange))
            #expect(page["type"] as? String == "PRODUCT")
            #expect(page["location"] as? String == Fixtures.productPage.location)
            #expect(page["data"] as? [String] == ["SKU-123"])
        }
        let thirdPage = DialogWire.page(h.transport.request(for: third))
        #expect(thirdPage["type"] as? String == "HOMEPAGE")
        #expect(thirdPage["location"] as? String == Fixtures.homePage.location)
        let threads = [first, second, third].map { Fixtures.body(h.transport.request(for: $0))["threadId"] as? String }
        try #require(threads.count > 2)
        #expect(threads[0] == threads[1])
        #expect(threads[2] != threads[0])
        await h.verify()
    }

    // covers: D16
    @Test func newChatShowsTheStartScreenOfTheLatestReadyPreparation() async throws {
        let older = #"{"enabled":true,"title":"Старый экран","subtitle":"Раньше","suggests":["Старое"]}"#
        let newer = #"{"enabled":true,"title":"Новый экран","subtitle":"Сейчас","suggests":["Новое 1","Новое 2"]}"#
        let h = await EngineHarness()
        await h.prepareWith(Fixtures.choose(customJSON: older))
        h.expectEvents(1)  // chat_dialog_open
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        try await h.sendAndReceive("Первый", reply: Fixtures.reply(to: "m"))

        await h.prepareWith(Fixtures.choose(customJSON: newer), page: Fixtures.homePage)
        h.expectEvents(1)  // chat_dialog_end
        await h.engine.startNewChat()

        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.title == "Новый экран")
        #expect(snapshot.subtitle == "Сейчас")
        #expect(snapshot.suggests == ["Новое 1", "Новое 2"])
        #expect(snapshot.messages.isEmpty)
        #expect(snapshot.canSend)
        #expect(h.presenter.latest == snapshot)
        await h.verify()
    }

    // MARK: - Ratings

    // covers: D11
    @Test func replyIsRatedOnceByItsAssistantMessageID() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        try await h.sendAndReceive(Self.text, reply: Fixtures.reply(to: "m", assistantMessageId: "am-17"))
        #expect(await h.engine.chatSnapshot.messages.last?.canRate == true)
        let feedback = h.transport.expect(.request(.post, pathSuffix: "/v1/feedback"), .respond(.text(204, "")))
        h.expectEvents(1)  // chat_feedback

        try #require(await h.engine.rateReply(assistantMessageId: "am-17", rating: .like) == .sent)
        let rated = await h.engine.chatSnapshot.messages.last
        #expect(rated?.rating == .like)
        #expect(rated?.canRate == false)
        #expect(await h.engine.rateReply(assistantMessageId: "am-17", rating: .dislike) == .alreadyRated)
        #expect(await h.engine.rateReply(assistantMessageId: "am-17", rating: .like) == .alreadyRated)

        await h.transport.waitForRequest(feedback)
        let body = Fixtures.body(h.transport.request(for: feedback))
        let threadId = try #require(await h.engine.currentThreadId)
        #expect(body["threadId"] as? String == threadId)
        #expect(body["messageId"] as? String == "am-17")
        #expect(body["resourceId"] as? String == "u-8f3c")
        #expect(body["rating"] as? String == "like")
        await h.verify()
        #expect(h.transport.requests.filter { $0.url.path.hasSuffix("/v1/feedback") }.count == 1)
    }

    // covers: D11
    @Test func replyWithoutAnIDCannotBeRated() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        try await h.sendAndReceive(Self.text, reply: Fixtures.reply(to: "m", assistantMessageId: nil))
        let reply = await h.engine.chatSnapshot.messages.last
        #expect(reply?.role == .assistant)
        #expect(reply?.canRate == false)
        #expect(await h.engine.rateReply(assistantMessageId: reply?.id ?? "", rating: .like) == .unknownReply)
        #expect(await h.engine.rateReply(assistantMessageId: "am-17", rating: .like) == .unknownReply)
        await h.verify()  // no /v1/feedback request was made
    }

    // covers: D5, D11
    @Test func replyAdoptedFromHistoryIsRatedByItsHistoryID() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(3)  // send, reply, feedback
        let messageId = try await h.sendAccepted(Self.text)
        let threadId = try #require(await h.engine.currentThreadId)
        h.transport.expect(
            .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
            .respond(Fixtures.history(threadId: threadId, messageId: messageId, replyId: "am-h")))
        h.transport.complete(post, with: .text(502, ""))
        await h.engine.waitForReply()
        #expect(await h.engine.chatSnapshot.messages.last?.canRate == true)

        let feedback = h.transport.expect(.request(.post, pathSuffix: "/v1/feedback"), .respond(.text(200, "{}")))
        try #require(await h.engine.rateReply(assistantMessageId: "am-h", rating: .dislike) == .sent)
        await h.transport.waitForRequest(feedback)
        let body = Fixtures.body(h.transport.request(for: feedback))
        #expect(body["messageId"] as? String == "am-h")
        #expect(body["rating"] as? String == "dislike")
        await h.verify()
    }

    // MARK: - The text survives

    enum Failure: String, CaseIterable, Sendable {
        case network, timeout, conflict, serverError, forbidden

        var code: AssistantError.Code {
            switch self {
            case .network: return .network
            case .timeout: return .timeout
            case .conflict: return .messageConflict
            case .serverError: return .server
            case .forbidden: return .unauthorized
            }
        }
    }

    // covers: D4
    @Test(arguments: Failure.allCases)
    func userTextSurvivesEveryFailure(_ failure: Failure) async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // send, error
        let messageId = try await h.sendAccepted(Self.text)
        await h.transport.waitForRequest(post)
        switch failure {
        case .network:
            h.transport.fail(post, with: .cannotConnect("no route to host"))
        case .timeout:
            let threadId = try #require(await h.engine.currentThreadId)
            h.transport.expect(
                .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
                .respond(Fixtures.history(threadId: threadId, messageId: messageId, replyId: nil)))
            await h.clock.waitForSleepers(1)
            try #require(h.clock.pendingDeadlines.map(\.offset) == [.seconds(120)])
            h.clock.advance(by: .seconds(120))
        case .conflict:
            h.transport.complete(post, with: Fixtures.errorBody(409, code: "MESSAGE_ID_CONFLICT"))
        case .serverError:
            h.transport.complete(post, with: .text(500, "Internal Server Error"))
        case .forbidden:
            h.transport.complete(post, with: Fixtures.errorBody(403, code: "IP_NOT_ALLOWED"))
        }
        await h.engine.waitForReply()
        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.map(\.id) == [messageId])
        #expect(snapshot.messages.first?.text == Self.text)
        #expect(DialogWire.failureCode(snapshot.messages.first) == failure.code)
        #expect(snapshot.messages.first?.canRetry == (failure != .conflict))
        #expect(snapshot.canSend)
        #expect(h.transport.messageRequests.count == 1)
        await h.verify()
    }
}
