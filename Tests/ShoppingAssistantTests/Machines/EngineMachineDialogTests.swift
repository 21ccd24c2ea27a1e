import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct EngineMachineDialogTests {
    private typealias F = MachineFixtures

    private static func request(_ messageId: String, text: String = "Gift ideas") -> ShoppingMessageRequest {
        ShoppingMessageRequest(
            threadId: "thread-1", messageId: messageId, resourceId: "uid-1", text: text,
            runtimeContext: ShoppingRuntimeContext(
                tenantId: F.section, uid: "uid-1", selector: F.selector, campaignId: "c-1",
                page: F.envelope().context))
    }

    // covers: P5, D14
    @Test func sendingBeforeAnyReadyPreparationIsRefusedNotReady() {
        var machine = F.machine()
        #expect(
            F.completions(machine.sendCalled(F.call(1), text: "Hi", messageId: "m-1", newThreadId: "t"))
                == [.complete(F.call(1), .send(.failure(.notReady)))])
        #expect(machine.dialogState == .empty)
    }

    // covers: S3
    @Test func sendingWithoutACanonicalUidIsRefusedNoIdentity() {
        var machine = F.readyMachine()
        machine.identity = IdentityState(storedUID: nil)
        #expect(
            F.completions(machine.sendCalled(F.call(1), text: "Hi", messageId: "m-1", newThreadId: "t"))
                == [.complete(F.call(1), .send(.failure(.noIdentity)))])
    }

    /// The request leaves first; its `chat_message_send` waits for the outcome, so that nothing
    /// the reply does not need competes with it, and leaves just before `chat_message_reply`.
    // covers: D14, S2, S3, D15, AN1, AN2
    @Test func theFirstMessageIsSentWithTheStartScreensContextAndTheCanonicalUid() throws {
        var machine = F.readyMachine()
        let tag = DialogTag(dialog: 1, messageId: "m-1", attempt: 1)
        #expect(
            machine.sendCalled(F.call(1), text: "Gift ideas", messageId: "m-1", newThreadId: "thread-1")
                == [
                    .sendShopping(.message(tag), .message(Self.request("m-1"))),
                    .startTimer(.reply(tag), after: .seconds(120)),
                    .complete(F.call(1), .send(.success("m-1"))),
                ])
        let landed = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1", assistantMessageId: "am-1"))),
            canHandle: { _ in true })
        let events = F.trackedJobs(landed).compactMap { job -> GravityCustomEvent? in
            if case .event(let event, _, _) = job { return event } else { return nil }
        }
        #expect(events.map(\.type) == ["chat_message_send", "chat_message_reply"])
        #expect(events.first?.customProps == ["threadId": "thread-1", "messageId": "m-1", "attempt": "1"])
    }

    // covers: D14
    @Test func aLaterPreparationOnAnotherPageDoesNotRewriteTheDialogsContext() throws {
        var machine = F.readyMachine()
        try F.sendAndReply(&machine)
        F.prepareReady(&machine, call: F.call(2), page: F.otherPage)
        let actions = machine.sendCalled(F.call(3), text: "More", messageId: "m-2", newThreadId: "thread-2")
        let tag = DialogTag(dialog: 1, messageId: "m-2", attempt: 1)
        #expect(actions.first == .sendShopping(.message(tag), .message(Self.request("m-2", text: "More"))))
    }

    // covers: D2
    @Test func canSendIsFalseWhileAMessageIsInFlightAndBeforeAnyStartScreen() throws {
        var machine = F.machine()
        #expect(!machine.snapshot().canSend)
        F.prepareReady(&machine)
        #expect(machine.snapshot().canSend)
        let tag = try F.send(&machine)
        #expect(!machine.snapshot().canSend)
        #expect(machine.snapshot().isSending)
        #expect(
            F.completions(machine.sendCalled(F.call(9), text: "More", messageId: "m-2", newThreadId: "t"))
                == [.complete(F.call(9), .send(.failure(.busy)))])
        _ = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
        #expect(machine.snapshot().canSend)
    }

    // covers: C7, O9
    @Test func theStartScreensSuggestsComeFirstThenTheLastReplysAndNoneWhileSending() throws {
        var machine = F.readyMachine()
        #expect(machine.snapshot().suggests == ["Gift ideas", "Cheaper"])
        #expect(machine.snapshot().title == "Helper")
        #expect(machine.snapshot().subtitle == "Ask me")
        let tag = try F.send(&machine)
        #expect(machine.snapshot().suggests == [])
        _ = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
        #expect(machine.snapshot().suggests == ["Cheaper", "For him"])
    }

    // covers: C7
    @Test func aSuggestIsSentAsTheUsersMessageAndOneNotOnScreenIsRefused() {
        var machine = F.readyMachine()
        #expect(
            F.completions(machine.suggestCalled(F.call(1), index: 2, messageId: "m-1", newThreadId: "thread-1"))
                == [.complete(F.call(1), .send(.failure(.noSuchSuggest)))])
        let actions = machine.suggestCalled(F.call(2), index: 1, messageId: "m-1", newThreadId: "thread-1")
        let tag = DialogTag(dialog: 1, messageId: "m-1", attempt: 1)
        #expect(actions.first == .sendShopping(.message(tag), .message(Self.request("m-1", text: "Cheaper"))))
    }

    // covers: D13, D17
    @Test func aLateReplyOfAnEndedDialogIsDroppedByTagAndLogged() throws {
        var machine = F.readyMachine()
        let tag = try F.send(&machine)
        _ = machine.newChatCalled(F.call(2))
        // The new dialog's first message in flight, under the same message ID: only the tag's
        // dialog tells the answers apart.
        _ = machine.sendCalled(F.call(3), text: "Hi", messageId: "m-1", newThreadId: "thread-2")
        #expect(
            machine.shoppingAnswered(.message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
                == [.log(.debug, "stale reply of dialog#1/m-1#1 dropped")])
        #expect(machine.timerFired(.reply(tag)) == [])
        #expect(machine.snapshot().messages.count == 1)
        #expect(machine.dialogState == .sending)
    }

    @Test func aLateHistoryOfAnEndedDialogIsDroppedByTagAndLogged() throws {
        var machine = F.readyMachine()
        let tag = try F.send(&machine)
        _ = machine.shoppingAnswered(
            .message(tag), .reply(.failure(F.failure(.server, uncertain: true))), canHandle: { _ in true })
        _ = machine.newChatCalled(F.call(2))
        #expect(
            machine.shoppingAnswered(
                .history(tag), .history(.success(F.history(messageId: "m-1", replyId: "am-h"))),
                canHandle: { _ in true })
                == [.log(.debug, "stale history of dialog#1/m-1#1 dropped")])
    }

    // covers: D5
    @Test func anUncertainOutcomeReadsTheDialogsHistoryBeforeFailing() throws {
        var machine = F.readyMachine()
        let tag = try F.send(&machine)
        #expect(
            machine.shoppingAnswered(
                .message(tag), .reply(.failure(F.failure(.server, uncertain: true))), canHandle: { _ in true })
                == [
                    .cancelTimer(.reply(tag)),
                    .sendShopping(
                        .history(tag), .history(threadId: "thread-1", resourceId: "uid-1", tenantId: F.section)),
                    .startTimer(.reply(tag), after: .seconds(30)),
                ])
        let adopted = machine.shoppingAnswered(
            .history(tag), .history(.success(F.history(messageId: "m-1", replyId: "am-h"))), canHandle: { _ in true })
        #expect(
            F.withoutLogs(adopted) == [
                .cancelTimer(.reply(tag)),
                F.track(
                    F.jobs(F.event("chat_message_send", ["threadId": "thread-1", "messageId": "m-1", "attempt": "1"]))
                        + F.jobs(
                            F.event(
                                "chat_message_reply",
                                [
                                    "threadId": "thread-1", "messageId": "m-1", "assistantMessageId": "am-h",
                                    "products": "0",
                                ]
                            ))),
            ])
        #expect(machine.dialogState == .active)
    }

    // covers: D3, D5
    @Test func theReplyDeadlineAbandonsTheRequestAndReadsTheHistory() throws {
        var machine = F.readyMachine()
        let tag = try F.send(&machine)
        #expect(
            machine.timerFired(.reply(tag)) == [
                .cancelRequest(.message(tag)),
                .sendShopping(.history(tag), .history(threadId: "thread-1", resourceId: "uid-1", tenantId: F.section)),
                .startTimer(.reply(tag), after: .seconds(30)),
            ])
    }

    // covers: D6
    @Test func aRetrySendsTheOriginalRequestAgainUnderTheSameId() throws {
        var machine = F.readyMachine()
        let tag = try F.send(&machine)
        _ = machine.shoppingAnswered(.message(tag), .reply(.failure(F.failure(.server))), canHandle: { _ in true })
        F.prepareReady(&machine, call: F.call(5), page: F.otherPage)  // another page: the retry keeps its context
        let retry = DialogTag(dialog: 1, messageId: "m-1", attempt: 2)
        #expect(
            machine.retryCalled(F.call(6), messageId: "m-1") == [
                .sendShopping(.message(retry), .message(Self.request("m-1"))),
                .startTimer(.reply(retry), after: .seconds(120)),
                .complete(F.call(6), .send(.success("m-1"))),
            ])
    }

    // covers: D13
    @Test func newChatEndsTheDialogAndShowsTheLatestStartScreen() throws {
        var machine = F.readyMachine()
        try F.sendAndReply(&machine)
        #expect(
            machine.newChatCalled(F.call(2)) == [
                F.event("chat_dialog_end", ["threadId": "thread-1", "reason": "new_chat"]), .complete(F.call(2), .done),
            ])
        #expect(machine.snapshot().messages.isEmpty)
        #expect(machine.snapshot().suggests == ["Gift ideas", "Cheaper"])
        _ = machine.sendCalled(F.call(3), text: "Hi", messageId: "m-2", newThreadId: "thread-2")
        #expect(machine.currentThreadId == "thread-2")
    }

    // covers: D11
    @Test func aRatingFailureOffersTheRatingAgain() throws {
        var machine = F.readyMachine()
        try F.sendAndReply(&machine)
        #expect(
            F.completions(machine.rateCalled(F.call(2), assistantMessageId: "am-1", rating: .like))
                == [.complete(F.call(2), .rating(.sent))])
        #expect(
            machine.rateCalled(F.call(3), assistantMessageId: "am-1", rating: .like)
                == [.complete(F.call(3), .rating(.alreadyRated))])
        _ = machine.shoppingAnswered(
            .feedback(dialog: 1, turn: 0), .feedback(.failure(F.failure(.server))), canHandle: { _ in true })
        #expect(
            F.completions(machine.rateCalled(F.call(4), assistantMessageId: "am-1", rating: .like))
                == [.complete(F.call(4), .rating(.sent))])
    }

    // covers: O8, D12
    @Test func closingTheChatDoesNotCancelTheMessageAndItsReplyLands() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        let tag = try F.send(&machine)
        let close = machine.closeCalled(F.call(7))
        #expect(!close.contains { if case .cancelRequest = $0 { return true } else { return false } })
        F.finishHostCalls(&machine)
        _ = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
        #expect(machine.snapshot().messages.count == 2)
        #expect(machine.dialogState == .active)
    }

    @Test func waitForReplyReturnsWhenTheReplyLandsWithNoPresenter() throws {
        var machine = F.readyMachine()
        #expect(machine.waitForReplyCalled(F.call(1)) == [.complete(F.call(1), .done)])
        let tag = try F.send(&machine)
        #expect(machine.waitForReplyCalled(F.call(2)) == [])
        let actions = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
        #expect(F.completions(actions) == [.complete(F.call(2), .done)])
    }

    /// A reply that landed while its update is still on the way is not "given" to the
    /// presenter yet: a `waitForReply` called then waits for that update, and one called once
    /// the presenter has it returns at once.
    // covers: D2
    @Test func waitForReplyAfterTheReplyLandedWaitsForItsUpdate() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        let (tag, sending) = try F.sendWithItsUpdate(&machine, call: F.call(1))  // "sending" under way
        let landed = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
        #expect(F.completions(landed).isEmpty)
        #expect(machine.waitForReplyCalled(F.call(2)) == [])  // the reply's update is not delivered
        let afterSending = machine.hostCallFinished(sending)
        // The "sending" snapshot is what the send waited for, not what the wait waits for.
        #expect(F.completions(afterSending) == [.complete(F.call(1), .send(.success("m-1")))])
        let replyUpdate = try #require(F.hostCalls(afterSending).first?.id)
        #expect(F.completions(machine.hostCallFinished(replyUpdate)) == [.complete(F.call(2), .done)])
        #expect(machine.waitForReplyCalled(F.call(3)) == [.complete(F.call(3), .done)])
    }

    /// The note on a failed send is written once the presenter has the failure, not while an
    /// earlier snapshot is still on its way: a log read beside the screen never runs ahead of it.
    @Test func aFailureNoteWaitsForTheFailuresUpdate() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        let (tag, sending) = try F.sendWithItsUpdate(&machine, call: F.call(1))  // "sending" under way
        let failed = machine.shoppingAnswered(
            .message(tag), .reply(.failure(F.failure(.server))), canHandle: { _ in true })
        let isNote: (EngineAction) -> Bool = {
            if case .log(_, let message) = $0 { return message.contains("not delivered") }
            return false
        }
        #expect(!failed.contains(where: isNote))
        let afterSending = machine.hostCallFinished(sending)
        #expect(!afterSending.contains(where: isNote))  // the "sending" snapshot does not count
        let failureUpdate = try #require(F.hostCalls(afterSending).first?.id)
        #expect(machine.hostCallFinished(failureUpdate).filter(isNote).count == 1)
    }

    /// A send returns once the presenter shows the message as sending — or at once with the
    /// chat closed, or from inside a host callback (H1).
    // covers: D2, H1
    @Test func aSendReturnsOnceThePresenterShowsItUnlessMadeFromInsideACallback() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        let (_, sending) = try F.sendWithItsUpdate(&machine, call: F.call(1))
        #expect(machine.held.entries.map(\.action) == [.complete(F.call(1), .send(.success("m-1")))])
        #expect(F.completions(machine.hostCallFinished(sending)) == [.complete(F.call(1), .send(.success("m-1")))])

        var inside = F.readyMachine()
        try F.open(&inside)
        let call = F.callFromInsideAHostCallback(2)
        let actions = inside.sendCalled(call, text: "Gift ideas", messageId: "m-2", newThreadId: "thread-2")
        #expect(F.completions(actions) == [.complete(call, .send(.success("m-2")))])
    }

    /// `waitForReply` made from inside the update it would wait for returns once the message is
    /// settled, without waiting for the presenter (H1); a cancelled one returns at once.
    // covers: H1, O8
    @Test func aWaitForReplyFromInsideACallbackOrCancelledReturnsWithoutThePresenter() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        let (tag, _) = try F.sendWithItsUpdate(&machine, call: F.call(1))
        let inside = F.callFromInsideAHostCallback(2)
        #expect(machine.waitForReplyCalled(inside) == [])
        #expect(machine.waitForReplyCalled(F.call(3)) == [])
        #expect(machine.callCancelled(F.call(3)) == [.complete(F.call(3), .done)])
        let landed = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: { _ in true })
        #expect(F.completions(landed) == [.complete(inside, .done)])
    }
}
