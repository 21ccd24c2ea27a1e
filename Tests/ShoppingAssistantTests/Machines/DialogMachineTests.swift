import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct DialogMachineTests {
    private typealias F = MachineFixtures
    private static let prepared = PreparedAssistant(
        id: PreparationID(value: 1), selector: F.selector, pageContext: F.page, configuration: F.configuration,
        campaignId: "c-1")
    private static let start = DialogStart(
        prepared: prepared, uid: "uid-1", tenant: F.section, page: F.page)
    private static let context = ShoppingRuntimeContext(
        tenantId: F.section, uid: "uid-1", selector: F.selector, campaignId: "c-1", page: F.page)
    private static func request(_ messageId: String, _ text: String = "Gift ideas") -> ShoppingMessageRequest {
        ShoppingMessageRequest(
            threadId: "thread-1", messageId: messageId, resourceId: "uid-1", text: text, runtimeContext: context)
    }
    private static func tag(_ messageId: String = "m-1", attempt: Int = 1, dialog: UInt64 = 1) -> DialogTag {
        DialogTag(dialog: dialog, messageId: messageId, attempt: attempt)
    }

    private static func sending() -> DialogMachine {
        var machine = DialogMachine()
        _ = machine.sendRequested(text: "Gift ideas", messageId: "m-1", newThreadId: "thread-1", start: start)
        return machine
    }

    private static func failed(_ error: WireFailure) -> DialogMachine {
        var machine = sending()
        _ = machine.replyReceived(tag(), .failure(error), buttonsEnabled: [])
        return machine
    }

    // covers: D1, D15
    @Test func theFirstMessageStartsADialogBoundToTheStartScreen() throws {
        var machine = DialogMachine()
        #expect(machine.publicState == .empty)
        let sent = machine.sendRequested(
            text: "Gift ideas", messageId: "m-1", newThreadId: "thread-1", start: Self.start)
        #expect(
            try sent.get() == [
                .sendMessage(Self.tag(), Self.request("m-1")), .startReplyTimer(Self.tag(), .seconds(120)),
                .track(.messageSend(threadId: "thread-1", messageId: "m-1", attempt: 1)), .publish,
            ])
        #expect(machine.publicState == .sending)
        #expect(machine.context?.threadId == "thread-1")
        _ = machine.replyReceived(Self.tag(), .success(try F.reply(to: "m-1")), buttonsEnabled: [true, true])
        #expect(machine.publicState == .active)
    }

    // covers: D2
    @Test func aSecondMessageWhileSendingIsRefusedBusy() {
        var machine = Self.sending()
        #expect(
            machine.sendRequested(text: "More", messageId: "m-2", newThreadId: "thread-2", start: Self.start)
                == .failure(.busy))
        #expect(machine.turns.count == 1)
    }

    @Test func blankTextIsRefusedAndNothingIsSent() {
        var machine = DialogMachine()
        #expect(
            machine.sendRequested(text: " \n", messageId: "m-1", newThreadId: "t", start: Self.start)
                == .failure(.emptyText))
        #expect(machine.items.isEmpty)
    }

    @Test func blankMeansWhatAllSatisfyIsWhitespaceMeans() {
        // The White_Space list matches the standard library's property on every scalar.
        let differing = (UInt32(0)...0x10FFFF).compactMap(Unicode.Scalar.init).filter { scalar in  // not surrogates
            DialogMachine.isWhiteSpace(scalar) != scalar.properties.isWhitespace
        }
        #expect(differing.isEmpty, "\(differing.map { "U+" + String($0.value, radix: 16) })")
        let texts = [
            "", " ", " \n\t", "\u{3000}\u{A0}", " \u{301}", "\u{301} ", " x", "x ", "Подарок", "\u{2028}П", "\r\n",
            "\u{1F600}", " \u{200B}",
        ]
        for text in texts {
            #expect(
                DialogMachine.isBlank(text) == text.allSatisfy(\.isWhitespace), "\(text.unicodeScalars.map(\.value))")
        }
    }

    // covers: D3
    @Test func theReplyDeadlineIs120SecondsAndItsExpiryReadsTheHistory() throws {
        var machine = DialogMachine()
        let sent = try machine.sendRequested(
            text: "Gift ideas", messageId: "m-1", newThreadId: "thread-1", start: Self.start
        ).get()
        #expect(sent.contains(.startReplyTimer(Self.tag(), .seconds(120))))
        #expect(
            machine.replyTimerFired(Self.tag())
                == [
                    .abandonRequest(Self.tag()),
                    .fetchHistory(Self.tag(), threadId: "thread-1", resourceId: "uid-1", tenant: F.section),
                    .startReplyTimer(Self.tag(), .seconds(30)),
                ])
    }

    // covers: D5
    @Test func anUncertainFailureReadsTheHistoryAndAdoptsTheReplyFoundThere() throws {
        var machine = Self.sending()
        #expect(
            machine.replyReceived(Self.tag(), .failure(F.failure(.server, uncertain: true)), buttonsEnabled: [])
                == [
                    .cancelReplyTimer(Self.tag()),
                    .fetchHistory(Self.tag(), threadId: "thread-1", resourceId: "uid-1", tenant: F.section),
                    .startReplyTimer(Self.tag(), .seconds(30)),
                ])
        let actions = machine.historyReceived(
            Self.tag(), .success(F.history(messageId: "m-1", replyId: "am-h")), buttonsEnabled: { _ in [] })
        #expect(
            actions == [
                .cancelReplyTimer(Self.tag()),
                .track(.messageReply(threadId: "thread-1", messageId: "m-1", assistantMessageId: "am-h", products: 0)),
                .publish, .settled,
            ])
        let turn = try #require(machine.turns.first)
        #expect(turn.reply?.content.text == "From history")
        #expect(turn.user.attempts == 1)
    }

    // covers: D5, D4
    @Test func anUncertainFailureWithoutTheReplyInHistoryFailsKeepingTheTextForRetry() throws {
        var machine = Self.failed(F.failure(.network, uncertain: true))
        let actions = machine.historyReceived(
            Self.tag(), .success(F.history(messageId: "m-1", replyId: nil)), buttonsEnabled: { _ in [] })
        #expect(actions.first == .cancelReplyTimer(Self.tag()))
        #expect(actions.contains(.track(.messageError(threadId: "thread-1", messageId: "m-1", code: .network))))
        #expect(!actions.contains { if case .sendMessage = $0 { return true } else { return false } })
        let user = try #require(machine.turns.first).user
        #expect(user.text == "Gift ideas")
        #expect(user.status == .failed(AssistantError(code: .network, message: "network"), retryable: true))
    }

    // covers: D9, D10
    @Test func anUnreadableHistoryKeepsEveryLocalMessage() throws {
        var machine = Self.failed(F.failure(.timeout, uncertain: true))
        _ = machine.historyReceived(
            Self.tag(), .failure(F.failure(.historyUnavailable)), buttonsEnabled: { _ in [] })
        #expect(machine.turns.count == 1)
        #expect(machine.items.count == 1)
        #expect(machine.context?.threadId == "thread-1")
        let status = try #require(machine.turns.first).user.status
        guard case .failed(let error, retryable: true) = status else {
            Issue.record("not failed: \(status)")
            return
        }
        #expect(error.code == .timeout)
    }

    // covers: D4, D6
    @Test func aRetrySendsTheSameRequestUnderTheSameMessageId() throws {
        var machine = Self.failed(F.failure(.server))
        let retried = try machine.retryRequested(messageId: "m-1").get()
        #expect(
            retried == [
                .sendMessage(Self.tag(attempt: 2), Self.request("m-1")),
                .startReplyTimer(Self.tag(attempt: 2), .seconds(120)),
                .track(.messageSend(threadId: "thread-1", messageId: "m-1", attempt: 2)), .publish,
            ])
    }

    // covers: D8
    @Test func aMessageIdConflictIsNotRetryable() {
        var machine = Self.failed(F.failure(.messageConflict))
        #expect(machine.retryRequested(messageId: "m-1") == .failure(.notRetryable))
    }

    // covers: D13
    @Test func aResultOfAnEndedDialogIsDroppedByItsTag() throws {
        var machine = Self.sending()
        #expect(
            machine.ended(.newChat)
                == [
                    .cancelReplyTimer(Self.tag()), .settled,
                    .track(.dialogEnd(threadId: "thread-1", reason: .newChat)), .publish,
                ])
        #expect(machine.epoch == 2)
        _ = machine.sendRequested(text: "Hi", messageId: "m-1", newThreadId: "thread-2", start: Self.start)
        #expect(machine.replyReceived(Self.tag(), .success(try F.reply(to: "m-1")), buttonsEnabled: []) == [])
        #expect(machine.replyTimerFired(Self.tag()) == [])
        #expect(machine.items.count == 1)
        #expect(machine.isCurrent(Self.tag(dialog: 2)))
    }

    @Test func aStaleHistoryAnswerIsDropped() throws {
        var machine = Self.failed(F.failure(.server, uncertain: true))
        #expect(
            machine.historyReceived(
                Self.tag(attempt: 9), .success(F.history(messageId: "m-1", replyId: "am-h")),
                buttonsEnabled: { _ in [] })
                == [])
        #expect(machine.isSending)
    }

    // covers: D11
    @Test func aReplyIsRatedOnceByItsAssistantMessageId() throws {
        var machine = Self.sending()
        _ = machine.replyReceived(Self.tag(), .success(try F.reply(to: "m-1")), buttonsEnabled: [true, true])
        #expect(machine.rateRequested(assistantMessageId: "nope", .like) == .refused(.unknownReply))
        let feedback = ShoppingFeedbackRequest(
            threadId: "thread-1", messageId: "am-1", resourceId: "uid-1", rating: AssistantRating.like.rawValue,
            runtimeContext: Self.context)
        #expect(
            machine.rateRequested(assistantMessageId: "am-1", .like)
                == .rated([
                    .sendFeedback(turn: 0, feedback),
                    .track(.feedback(threadId: "thread-1", assistantMessageId: "am-1", rating: .like)), .publish,
                ]))
        #expect(machine.rateRequested(assistantMessageId: "am-1", .dislike) == .refused(.alreadyRated))
        #expect(machine.feedbackFailed(dialog: 1, turn: 0) == [.publish])
        #expect(machine.rateRequested(assistantMessageId: "am-1", .dislike) != .refused(.alreadyRated))
    }

    // covers: D11
    @Test func aReplyWithoutAnAssistantMessageIdCannotBeRated() throws {
        var machine = Self.sending()
        _ = machine.replyReceived(
            Self.tag(), .success(try F.reply(to: "m-1", assistantMessageId: nil)), buttonsEnabled: [true, true])
        let message = try #require(
            machine.turns.first?.replyMessage(
                turn: 0, scope: ChatScope(opening: 1, dialog: 1, identity: 1), restoredOffers: nil))
        #expect(!message.canRate)
    }

    // covers: AN7
    @Test func aRepliesImpressionIsReportedOnceWhenShown() throws {
        var machine = Self.sending()
        _ = machine.replyReceived(Self.tag(), .success(try F.reply(to: "m-1")), buttonsEnabled: [true, true])
        #expect(machine.repliesShown() == ["https://t.example/ri"])
        #expect(machine.repliesShown() == [])
    }

    // covers: AC4
    @Test func aButtonTheHandlerCannotHandleIsShownDisabledAndNoted() throws {
        var machine = Self.sending()
        let actions = machine.replyReceived(
            Self.tag(), .success(try F.reply(to: "m-1")), buttonsEnabled: [false, true])
        #expect(
            actions.last
                == .diagnostics(["reply button not offered: the action handler cannot handle open_support_chat"]))
        let message = try #require(
            machine.turns.first?.replyMessage(
                turn: 0, scope: ChatScope(opening: 1, dialog: 1, identity: 1), restoredOffers: nil))
        #expect(message.buttons.map(\.isEnabled) == [false, true])
        machine.handlerChanged { _ in true }
        let again = try #require(
            machine.turns.first?.replyMessage(
                turn: 0, scope: ChatScope(opening: 1, dialog: 1, identity: 1), restoredOffers: nil))
        #expect(again.buttons.map(\.isEnabled) == [true, true])
    }
}
