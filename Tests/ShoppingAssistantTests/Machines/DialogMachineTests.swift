import Foundation
import Testing

@testable import ShoppingAssistant

@Suite(.timeLimit(.minutes(2))) struct DialogMachineTests {
    typealias Start = DialogStart

    static let configuration = AssistantConfiguration(
        enabled: true, title: "Помощник", subtitle: nil, suggests: ["Помогите выбрать подарок"])

    static func prepared(page: PageContext = Fixtures.productPage, id: UInt64 = 1) -> PreparedAssistant {
        PreparedAssistant(
            id: PreparationID(value: id), selector: "shopping-assistant", pageContext: page,
            configuration: configuration, campaignId: "c-1")
    }

    static func start(page: PageContext = Fixtures.productPage, uid: String = "u-8f3c") -> Start {
        DialogStart(prepared: prepared(page: page), uid: uid, tenant: "shop-1", identityEpoch: 1, page: page)
    }

    static func reply(id: String? = "am-17", text: String = "Вот идеи") -> ReplyContent {
        var object: [String: JSONValue] = ["text": .string(text)]
        if let id { object["assistantMessageId"] = .string(id) }
        guard let reply = ReplyContent(json: .object(object), idKey: .assistantMessageId) else {
            preconditionFailure("fixture reply must decode")
        }
        return reply
    }

    static let networkError = AssistantError(code: .network, message: "cannot connect")
    static let uncertainError = AssistantError(code: .server, message: "HTTP 503", httpStatus: 503)

    static func json(_ data: Data) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    /// A machine with one message in flight; returns it with the message's tag.
    static func sending(_ text: String = "Помогите выбрать подарок", id: String = "m-1") -> (DialogMachine, DialogTag) {
        var machine = DialogMachine()
        _ = machine.send(text: text, messageId: id, newThreadId: "t-1", start: start())
        return (machine, DialogTag(dialog: machine.epoch, messageId: id, attempt: 1))
    }

    static func userEntry(_ machine: DialogMachine, _ id: String) -> DialogMachine.UserEntry? {
        for case .user(let entry) in machine.entries where entry.messageId == id { return entry }
        return nil
    }

    // covers: D1, D3, D15
    @Test func firstMessageStartsADialogSendsAndArmsThe120SecondTimeout() throws {
        var machine = DialogMachine()
        #expect(machine.publicState == .empty)
        let actions = try machine.send(
            text: "Помогите выбрать подарок", messageId: "m-1", newThreadId: "t-1", start: Self.start()
        ).get()
        let tag = DialogTag(dialog: 1, messageId: "m-1", attempt: 1)
        let body = try #require(Self.userEntry(machine, "m-1")?.body)
        #expect(
            actions == [
                .sendMessage(tag, body: body), .startReplyTimeout(tag, .seconds(120)),
                .track(.messageSend(threadId: "t-1", messageId: "m-1", attempt: 1)), .publish,
            ])
        #expect(machine.publicState == .sending)
        #expect(machine.context?.threadId == "t-1")
        let object = Self.json(body)
        #expect(object["threadId"] as? String == "t-1")
        #expect(object["messageId"] as? String == "m-1")
        #expect(object["resourceId"] as? String == "u-8f3c")
        #expect(object["text"] as? String == "Помогите выбрать подарок")
    }

    // covers: D2
    @Test func sendingWhileSendingIsRefusedAsBusy() {
        var (machine, _) = Self.sending()
        let second = machine.send(text: "Ещё вопрос", messageId: "m-2", newThreadId: "t-2", start: Self.start())
        #expect(second == .failure(.busy))
        #expect(machine.retry(messageId: "m-1") == .failure(.busy))
        #expect(machine.entries.count == 1)
        #expect(machine.publicState == .sending)
    }

    @Test func emptyTextAndNoStartScreenAreRefused() {
        var machine = DialogMachine()
        #expect(
            machine.send(text: "  \n", messageId: "m-1", newThreadId: "t-1", start: Self.start())
                == .failure(.emptyText))
        #expect(machine.send(text: "Привет", messageId: "m-1", newThreadId: "t-1", start: nil) == .failure(.notReady))
        #expect(machine.publicState == .empty)
        #expect(machine.context == nil)
    }

    // covers: D1
    @Test func replyToTheMessageInFlightIsAdopted() {
        var (machine, tag) = Self.sending()
        let actions = machine.replyReceived(tag, .success(Self.reply()))
        #expect(
            actions == [
                .stopReplyTimeout(tag),
                .track(.messageReply(threadId: "t-1", messageId: "m-1", assistantMessageId: "am-17", products: 0)),
                .publish,
            ])
        #expect(machine.publicState == .active)
        #expect(Self.userEntry(machine, "m-1")?.status == .sent)
        #expect(machine.reply(assistantMessageId: "am-17")?.text == "Вот идеи")
    }

    // covers: D13
    @Test func resultWithAStaleTagIsDropped() {
        var (machine, tag) = Self.sending()
        let before = machine
        let otherAttempt = DialogTag(dialog: tag.dialog, messageId: tag.messageId, attempt: 2)
        let otherDialog = DialogTag(dialog: tag.dialog + 1, messageId: tag.messageId, attempt: 1)
        #expect(machine.replyReceived(otherAttempt, .success(Self.reply())).isEmpty)
        #expect(machine.replyReceived(otherDialog, .success(Self.reply())).isEmpty)
        #expect(machine.replyTimedOut(otherDialog).isEmpty)
        #expect(machine.historyReceived(otherDialog, .success([])).isEmpty)
        #expect(machine.entries == before.entries)
        #expect(machine.state == before.state)
    }

    // covers: D4
    @Test func certainFailureKeepsTheTextAndOffersRetryWithoutResending() {
        var (machine, tag) = Self.sending()
        let actions = machine.replyReceived(tag, .failure(.failed(Self.networkError, uncertain: false)))
        #expect(
            actions == [
                .stopReplyTimeout(tag), .track(.messageError(threadId: "t-1", messageId: "m-1", code: .network)),
                .publish, .diagnostics(["message m-1 not delivered: \(Self.networkError)"]),
            ])
        let entry = Self.userEntry(machine, "m-1")
        #expect(entry?.text == "Помогите выбрать подарок")
        #expect(entry?.status == .failed(Self.networkError, retryable: true))
        #expect(machine.publicState == .active)
    }

    // covers: D5
    @Test func uncertainFailureReadsTheHistoryFirst() {
        var (machine, tag) = Self.sending()
        let actions = machine.replyReceived(tag, .failure(.failed(Self.uncertainError, uncertain: true)))
        #expect(
            actions == [
                .stopReplyTimeout(tag), .fetchHistory(tag, threadId: "t-1", resourceId: "u-8f3c", tenant: "shop-1"),
                .startReplyTimeout(tag, DialogMachine.historyTimeout),
            ])
        #expect(machine.state == .sending(tag, reconciling: Self.uncertainError))
        #expect(Self.userEntry(machine, "m-1")?.status == .sending)
    }

    // covers: D3, D5
    @Test func replyTimeoutAbandonsTheRequestReadsHistoryAndDropsTheLateReply() {
        var (machine, tag) = Self.sending()
        let actions = machine.replyTimedOut(tag)
        #expect(
            actions == [
                .abandonRequest(tag), .fetchHistory(tag, threadId: "t-1", resourceId: "u-8f3c", tenant: "shop-1"),
                .startReplyTimeout(tag, DialogMachine.historyTimeout),
            ])
        guard case .sending(_, let reconciling?) = machine.state else {
            Issue.record("expected reconciling, got \(machine.state)")
            return
        }
        #expect(reconciling.code == .timeout)
        // The generation reply arriving after the deadline is not adopted: history decides.
        #expect(machine.replyReceived(tag, .success(Self.reply())).isEmpty)
        #expect(machine.reply(assistantMessageId: "am-17") == nil)
    }

    // covers: D5, D4
    @Test func stalledHistoryCheckFailsTheMessageAtItsOwnDeadline() {
        var (machine, tag) = Self.sending()
        _ = machine.replyTimedOut(tag)
        let actions = machine.replyTimedOut(tag)  // the history deadline passes
        #expect(actions.first == .abandonHistory(tag))
        #expect(actions.contains(.track(.messageError(threadId: "t-1", messageId: "m-1", code: .timeout))))
        #expect(Self.userEntry(machine, "m-1")?.text == "Помогите выбрать подарок")
        guard case .failed(_, retryable: true)? = Self.userEntry(machine, "m-1")?.status else {
            Issue.record("expected a retryable failure")
            return
        }
        #expect(machine.publicState == .active)
        #expect(machine.historyReceived(tag, .success([])).isEmpty)  // a late history answer changes nothing
    }

    // covers: D5, D11
    @Test func replyFoundInHistoryIsAdoptedUnderItsHistoryID() {
        var (machine, tag) = Self.sending()
        _ = machine.replyTimedOut(tag)
        let history: [HistoryMessage] = [
            HistoryMessage(id: "m-1", role: "user", replyTo: nil, json: ["id": "m-1", "role": "user", "text": "Q"]),
            HistoryMessage(
                id: "am-other", role: "assistant", replyTo: "m-0",
                json: ["id": "am-other", "role": "assistant", "replyTo": "m-0", "text": "старый"]),
            HistoryMessage(
                id: "am-h", role: "assistant", replyTo: "m-1",
                json: ["id": "am-h", "role": "assistant", "replyTo": "m-1", "text": "Из истории"]),
        ]
        let actions = machine.historyReceived(tag, .success(history))
        #expect(
            actions == [
                .stopReplyTimeout(tag),
                .track(.messageReply(threadId: "t-1", messageId: "m-1", assistantMessageId: "am-h", products: 0)),
                .publish,
            ])
        #expect(!actions.contains { if case .sendMessage = $0 { return true } else { return false } })
        #expect(machine.reply(assistantMessageId: "am-h")?.text == "Из истории")
        #expect(Self.userEntry(machine, "m-1")?.status == .sent)
        let rating = machine.rate(assistantMessageId: "am-h", .like)
        guard case .sendFeedback(_, let request)? = rating?.first else {
            Issue.record("no feedback for the history reply: \(String(describing: rating))")
            return
        }
        #expect(request.messageId == "am-h")
    }

    // covers: D4, D5
    @Test func historyWithoutTheReplyFailsTheMessageKeepingTextAndRetry() {
        var (machine, tag) = Self.sending()
        _ = machine.replyReceived(tag, .failure(.failed(Self.uncertainError, uncertain: true)))
        let history = [HistoryMessage(id: "m-1", role: "user", replyTo: nil, json: ["id": "m-1", "role": "user"])]
        let actions = machine.historyReceived(tag, .success(history))
        #expect(
            actions == [
                .stopReplyTimeout(tag), .track(.messageError(threadId: "t-1", messageId: "m-1", code: .server)),
                .publish, .diagnostics(["message m-1 not delivered: \(Self.uncertainError)"]),
            ])
        let entry = Self.userEntry(machine, "m-1")
        #expect(entry?.status == .failed(Self.uncertainError, retryable: true))
        #expect(entry?.text == "Помогите выбрать подарок")
        #expect(machine.publicState == .active)
    }

    // covers: D9, D10
    @Test func unreadableHistoryKeepsEveryLocalMessageAndReportsTheSendError() {
        var machine = DialogMachine()
        _ = machine.send(text: "Первый", messageId: "m-1", newThreadId: "t-1", start: Self.start())
        _ = machine.replyReceived(DialogTag(dialog: 1, messageId: "m-1", attempt: 1), .success(Self.reply()))
        _ = machine.send(text: "Второй", messageId: "m-2", newThreadId: "t-x", start: nil)
        let tag = DialogTag(dialog: 1, messageId: "m-2", attempt: 1)
        _ = machine.replyReceived(tag, .failure(.failed(Self.uncertainError, uncertain: true)))
        let notFound = AssistantError(
            code: .historyUnavailable, message: "HTTP 404 SHOPPING_HISTORY_NOT_FOUND", httpStatus: 404)
        let actions = machine.historyReceived(tag, .failure(.failed(notFound, uncertain: false)))
        // The history failure is part of the send's error, not a second report.
        #expect(
            actions == [
                .stopReplyTimeout(tag), .track(.messageError(threadId: "t-1", messageId: "m-2", code: .server)),
                .publish,
                .diagnostics([
                    "message m-2 not delivered: server (HTTP 503): HTTP 503; history could not be read: history_unavailable"
                ]),
            ])
        #expect(machine.entries.count == 3)
        #expect(machine.reply(assistantMessageId: "am-17") != nil)
        #expect(Self.userEntry(machine, "m-1")?.status == .sent)
        guard case .failed(let error, retryable: true)? = Self.userEntry(machine, "m-2")?.status else {
            Issue.record("m-2 not failed and retryable")
            return
        }
        #expect(error.code == .server)
        #expect(error.message.contains("history_unavailable"))
        #expect(machine.context?.threadId == "t-1")
    }

    // covers: D6
    @Test func retryReusesTheMessageIDAndTheExactBody() throws {
        var (machine, tag) = Self.sending()
        let firstBody = try #require(Self.userEntry(machine, "m-1")?.body)
        _ = machine.replyReceived(tag, .failure(.failed(Self.networkError, uncertain: false)))
        let actions = try machine.retry(messageId: "m-1").get()
        let retryTag = DialogTag(dialog: tag.dialog, messageId: "m-1", attempt: 2)
        #expect(
            actions == [
                .sendMessage(retryTag, body: firstBody), .startReplyTimeout(retryTag, .seconds(120)),
                .track(.messageSend(threadId: "t-1", messageId: "m-1", attempt: 2)), .publish,
            ])
        #expect(machine.entries.count == 1)
        // The first attempt's late result no longer counts.
        #expect(machine.replyReceived(tag, .success(Self.reply())).isEmpty)
    }

    // covers: D6
    @Test func newTextAfterAFailureIsANewMessageWithANewID() throws {
        var (machine, tag) = Self.sending()
        _ = machine.replyReceived(tag, .failure(.failed(Self.networkError, uncertain: false)))
        let actions = try machine.send(text: "Исправленный текст", messageId: "m-2", newThreadId: "t-x", start: nil)
            .get()
        guard case .sendMessage(let newTag, let body)? = actions.first else {
            Issue.record("no send: \(actions)")
            return
        }
        #expect(newTag == DialogTag(dialog: tag.dialog, messageId: "m-2", attempt: 1))
        #expect(Self.json(body)["messageId"] as? String == "m-2")
        #expect(Self.json(body)["threadId"] as? String == "t-1")
        #expect(Self.userEntry(machine, "m-1")?.status == .failed(Self.networkError, retryable: true))
    }

    @Test func onlyAFailedMessageCanBeRetried() {
        var (machine, tag) = Self.sending()
        _ = machine.replyReceived(tag, .success(Self.reply()))
        #expect(machine.retry(messageId: "m-1") == .failure(.notRetryable))
        #expect(machine.retry(messageId: "unknown") == .failure(.notRetryable))
    }

    // covers: D8
    @Test func messageConflictIsNotRetryableAndKeepsEarlierReplies() {
        var machine = DialogMachine()
        _ = machine.send(text: "Первый", messageId: "m-1", newThreadId: "t-1", start: Self.start())
        _ = machine.replyReceived(DialogTag(dialog: 1, messageId: "m-1", attempt: 1), .success(Self.reply()))
        _ = machine.send(text: "Второй", messageId: "m-2", newThreadId: "t-x", start: nil)
        let tag = DialogTag(dialog: 1, messageId: "m-2", attempt: 1)
        let conflict = AssistantError(code: .messageConflict, message: "HTTP 409 MESSAGE_ID_CONFLICT", httpStatus: 409)
        let actions = machine.replyReceived(tag, .failure(.failed(conflict, uncertain: false)))
        #expect(
            actions == [
                .stopReplyTimeout(tag),
                .track(.messageError(threadId: "t-1", messageId: "m-2", code: .messageConflict)),
                .publish, .diagnostics(["message m-2 not delivered: \(conflict)"]),
            ])
        #expect(Self.userEntry(machine, "m-2")?.status == .failed(conflict, retryable: false))
        #expect(machine.retry(messageId: "m-2") == .failure(.notRetryable))
        #expect(machine.reply(assistantMessageId: "am-17")?.text == "Вот идеи")
        #expect(machine.entries.count == 3)
    }

    // covers: D13, D15
    @Test func endingADialogStartsAFreshOneAndDropsTheOldReply() throws {
        var (machine, tag) = Self.sending()
        let actions = machine.end(.newChat)
        #expect(actions == [.stopReplyTimeout(tag), .track(.dialogEnd(threadId: "t-1", reason: .newChat)), .publish])
        #expect(machine.epoch == tag.dialog + 1)
        #expect(machine.context == nil)
        #expect(machine.entries.isEmpty)
        #expect(machine.publicState == .empty)
        #expect(machine.replyReceived(tag, .success(Self.reply())).isEmpty)
        #expect(machine.entries.isEmpty)
        _ = try machine.send(text: "Снова", messageId: "m-2", newThreadId: "t-2", start: Self.start()).get()
        #expect(machine.context?.threadId == "t-2")
        #expect(machine.replyReceived(tag, .success(Self.reply())).isEmpty)
        #expect(machine.entries.count == 1)
    }

    // covers: D13
    @Test func everyEndReasonIsReportedWithTheOldThread() {
        for reason in [DialogEndReason.newChat, .identityChange, .assistantChange] {
            var (machine, tag) = Self.sending()
            _ = machine.replyReceived(tag, .success(Self.reply()))
            #expect(machine.end(reason) == [.track(.dialogEnd(threadId: "t-1", reason: reason)), .publish])
        }
        var empty = DialogMachine()
        #expect(empty.end(.newChat) == [.publish])
        #expect(empty.epoch == 2)
    }

    // covers: D14
    @Test func dialogContextIsFixedAtTheFirstMessage() throws {
        var (machine, tag) = Self.sending()
        _ = machine.replyReceived(tag, .success(Self.reply()))
        let laterStart = Self.start(page: Fixtures.homePage, uid: "u-other")
        let actions = try machine.send(text: "Ещё", messageId: "m-2", newThreadId: "t-2", start: laterStart).get()
        guard case .sendMessage(_, let body)? = actions.first else {
            Issue.record("no send: \(actions)")
            return
        }
        let object = Self.json(body)
        let page = (object["runtimeContext"] as? [String: Any])?["page"] as? [String: Any]
        #expect(object["threadId"] as? String == "t-1")
        #expect(object["resourceId"] as? String == "u-8f3c")
        #expect(page?["type"] as? String == "PRODUCT")
        #expect(page?["location"] as? String == Fixtures.productPage.location)
        #expect(machine.context?.prepared.pageContext == Fixtures.productPage)
    }

    // covers: D11
    @Test func aReplyIsRatedOnceAndOnlyByItsID() throws {
        var (machine, tag) = Self.sending()
        _ = machine.replyReceived(tag, .success(Self.reply()))
        let rated = machine.rate(assistantMessageId: "am-17", .like)
        let actions = try #require(rated)
        let context = try #require(machine.context)
        let request = ShoppingFeedbackRequest(
            threadId: "t-1", messageId: "am-17", resourceId: "u-8f3c", rating: "like",
            runtimeContext: context.runtimeContext)
        #expect(
            actions == [
                .sendFeedback(dialog: tag.dialog, request),
                .track(.feedback(threadId: "t-1", assistantMessageId: "am-17", rating: .like)), .publish,
            ])
        #expect(machine.rate(assistantMessageId: "am-17", .dislike) == nil)
        #expect(machine.rate(assistantMessageId: "am-unknown", .like) == nil)
    }

    // covers: D11
    @Test func aReplyWithoutAnIDCannotBeRated() {
        var (machine, tag) = Self.sending()
        _ = machine.replyReceived(tag, .success(Self.reply(id: nil)))
        #expect(machine.rate(assistantMessageId: "", .like) == nil)
        #expect(machine.rate(assistantMessageId: "am-17", .like) == nil)
        var emptyID = DialogMachine()
        _ = emptyID.send(text: "Q", messageId: "m-1", newThreadId: "t-1", start: Self.start())
        _ = emptyID.replyReceived(tag, .success(Self.reply(id: "")))
        #expect(emptyID.rate(assistantMessageId: "", .like) == nil)
    }

    // covers: D11
    @Test func undeliveredRatingIsOfferedAgainButAStaleFailureIsIgnored() {
        var (machine, tag) = Self.sending()
        _ = machine.replyReceived(tag, .success(Self.reply()))
        #expect(machine.rate(assistantMessageId: "am-17", .like) != nil)
        #expect(machine.feedbackFailed(dialog: tag.dialog + 1, assistantMessageId: "am-17").isEmpty)
        #expect(machine.rate(assistantMessageId: "am-17", .like) == nil)
        #expect(machine.feedbackFailed(dialog: tag.dialog, assistantMessageId: "am-17") == [.publish])
        #expect(machine.rate(assistantMessageId: "am-17", .dislike) != nil)
    }
}
