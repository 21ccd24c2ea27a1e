// MARK: - Dialog (D1–D17, S2–S4, C7)

extension EngineMachine {
    /// `sendMessage`: in the current dialog, or a new one bound to the latest ready start
    /// screen and the canonical uid (D14, S3). Refused text stays the caller's.
    mutating func sendCalled(_ call: CallID, text: String, messageId: String, newThreadId: String) -> [EngineAction] {
        var start: DialogStart?
        if dialog.context == nil {
            guard let prepared = preparation.lastReady else { return refuse(call, .notReady) }  // P5, D14
            guard let uid = identity.canonicalUID else { return refuse(call, .noIdentity) }  // S3, S4
            start = DialogStart(
                prepared: prepared, uid: uid, tenant: settings.section,
                page: sdkContext(prepared.pageContext))
        }
        switch dialog.sendRequested(text: text, messageId: messageId, newThreadId: newThreadId, start: start) {
        case .failure(let refusal): return refuse(call, refusal)
        case .success(let actions): return run(actions) + returnOnceShown(call, .send(.success(messageId)))
        }
    }

    /// `sendSuggest(at:)`: the suggest on screen, sent as the user's message (C7).
    mutating func suggestCalled(_ call: CallID, index: Int, messageId: String, newThreadId: String) -> [EngineAction] {
        let suggests = snapshot().suggests
        guard suggests.indices.contains(index) else { return refuse(call, .noSuchSuggest) }  // C7: on screen only
        return sendCalled(call, text: suggests[index], messageId: messageId, newThreadId: newThreadId)
    }

    /// `retryMessage(id:)`: the same ID and the same request (D6).
    mutating func retryCalled(_ call: CallID, messageId: String) -> [EngineAction] {
        switch dialog.retryRequested(messageId: messageId) {
        case .failure(let refusal): return refuse(call, refusal)
        case .success(let actions): return run(actions) + returnOnceShown(call, .send(.success(messageId)))
        }
    }

    /// `call` returns with `result` once the presenter of the chat on screen has what the call
    /// changed (the message sending, the rating, the new chat), or at once when no chat is shown.
    private mutating func returnOnceShown(_ call: CallID, _ result: CallResult) -> [EngineAction] {
        hold([.complete(call, result)], until: .delivered(revision: dialog.revision))
    }

    private func refuse(_ call: CallID, _ refusal: AssistantSendRefusal) -> [EngineAction] {
        [.log(.info, "send refused: \(refusal)"), .complete(call, .send(.failure(refusal)))]
    }

    /// "New chat": a fresh dialog on the latest ready start screen (D13, D16).
    mutating func newChatCalled(_ call: CallID) -> [EngineAction] {
        endDialog(.newChat) + returnOnceShown(call, .done)
    }

    /// `rateReply`: once per reply, by its assistant message ID (D11).
    mutating func rateCalled(_ call: CallID, assistantMessageId: String, rating: AssistantRating) -> [EngineAction] {
        switch dialog.rateRequested(assistantMessageId: assistantMessageId, rating) {
        case .refused(let reason): return [.complete(call, .rating(reason))]
        case .rated(let actions): return run(actions) + returnOnceShown(call, .rating(.sent))
        }
    }

    /// `waitForReply`: returns when nothing is in flight and the presenter, if any, has the
    /// outcome.
    mutating func waitForReplyCalled(_ call: CallID) -> [EngineAction] {
        hold([.complete(call, .done)], until: .settled)
    }

    // MARK: Answers and deadlines

    /// `/v1/messages` answered for attempt `tag` (D2–D8). `buttonsEnabled`: which of the
    /// reply's buttons the handler can handle (AC4).
    mutating func replyAnswered(_ tag: DialogTag, _ result: Result<ReplyContent, WireFailure>, buttonsEnabled: [Bool])
        -> [EngineAction]
    {
        let actions = dialog.replyReceived(tag, result, buttonsEnabled: buttonsEnabled)
        guard !actions.isEmpty else { return [.log(.debug, "stale reply of \(tag) dropped")] }  // D13, D17
        return run(actions)
    }

    /// The history read after an uncertain outcome of `tag` answered (D5, D9, D10).
    mutating func historyAnswered(
        _ tag: DialogTag, _ result: Result<[HistoryMessage], WireFailure>, buttonsEnabled: (ReplyContent) -> [Bool]
    ) -> [EngineAction] {
        let actions = dialog.historyReceived(tag, result, buttonsEnabled: buttonsEnabled)
        guard !actions.isEmpty else { return [.log(.debug, "stale history of \(tag) dropped")] }  // D13, D17
        return run(actions)
    }

    /// The reply deadline (or the history bound) of `tag` passed (D3, D5).
    mutating func replyDeadlinePassed(_ tag: DialogTag) -> [EngineAction] {
        run(dialog.replyTimerFired(tag))
    }

    /// A rating's `/v1/feedback` answered; a failure offers the rating again (D11).
    mutating func feedbackAnswered(dialog epoch: UInt64, turn: Int, _ result: Result<Void, WireFailure>)
        -> [EngineAction]
    {
        guard case .failure(let failure) = result else { return [] }
        let note = EngineAction.log(
            .info,
            "shopping POST /v1/feedback failed, the rating is offered again: \(failure.error?.description ?? "cancelled")"
        )
        return [note] + run(dialog.feedbackFailed(dialog: epoch, turn: turn))
    }

    // MARK: Dialog lifetime

    /// Ends the current dialog (D13): its `chat_dialog_end` keeps the ended dialog's page
    /// (wire.md) and `user`, the old one for an identity change (AN3).
    mutating func endDialog(_ reason: DialogEndReason, user: GravityUser? = nil) -> [EngineAction] {
        let page = dialog.context?.start.page
        return run(dialog.ended(reason), user: user, sentPage: page)
    }

    /// Performs what the dialog machine decided. `user` and `sentPage` (a page as sent to
    /// Gravity) bind lifecycle events to a dialog that has already ended (AN3).
    ///
    /// Tracking does not compete with the round trip: a message's `chat_message_send` is held
    /// while the message is in flight and leaves with its outcome, just before the outcome's
    /// own event (`chat_message_reply`, `chat_message_error`, or `chat_dialog_end` for a
    /// dialog that ended first). It is bound to its identity and page when the message is
    /// sent, so holding it changes only when it leaves (AN3).
    mutating func run(_ actions: [DialogMachine.Action], user: GravityUser? = nil, sentPage: PageContext? = nil)
        -> [EngineAction]
    {
        // D18: every change of the dialog publishes, and is saved as it is; an ended dialog
        // leaves an empty store (D20). Saved first: a message leaves once the dialog that shows
        // it sending is kept (D19).
        var result: [EngineAction] = []
        if settings.keepsDialog, actions.contains(.publish) { result.append(dialogToStore()) }
        for action in actions {
            switch action {
            case .sendMessage(let tag, let request):
                result.append(.sendShopping(.message(tag), .message(request)))
            case .startReplyTimer(let tag, let duration):
                result.append(.startTimer(.reply(tag), after: duration))
            case .cancelReplyTimer(let tag):
                result.append(.cancelTimer(.reply(tag)))
            case .abandonRequest(let tag):
                result.append(.cancelRequest(.message(tag)))
            case .abandonHistory(let tag):
                result.append(.cancelRequest(.history(tag)))
            case .fetchHistory(let tag, let threadId, let resourceId, let tenant):
                result.append(
                    .sendShopping(.history(tag), .history(threadId: threadId, resourceId: resourceId, tenantId: tenant))
                )
            case .sendFeedback(let turn, let request):
                result.append(.sendShopping(.feedback(dialog: dialog.epoch, turn: turn), .feedback(request)))
            case .track(let event):
                guard case .track(let jobs) = track(event, user: user, sentPage: sentPage) else {
                    preconditionFailure("a lifecycle event is a tracking job")
                }
                switch event {
                case .messageSend: trackingAfterOutcome += jobs  // leaves with the message's outcome
                case .feedback: result.append(.track(jobs))  // a rating is not an outcome
                case .messageReply, .messageError, .dialogEnd:
                    result.append(.track(jobs.after(takeTrackingAfterOutcome())))
                }
            case .publish:
                result += publish()
            case .settled:
                if let held = TrackingJobs(takeTrackingAfterOutcome()) { result.append(.track(held)) }
                result += releaseReached()  // `waitForReply` callers wait on for this outcome's delivery
            case .diagnostics(let lines):
                result += notes(lines.map { "dialog: \($0)" })
            }
        }
        return result
    }

    /// The held `chat_message_send`, if any, now leaving.
    private mutating func takeTrackingAfterOutcome() -> [TrackingJob] {
        defer { trackingAfterOutcome = [] }
        return trackingAfterOutcome
    }

    /// Notes on the outcome the dialog has now: written once the presenter has that outcome,
    /// so that a note never comes before what it is about reaches the screen.
    private mutating func notes(_ lines: [String]) -> [EngineAction] {
        hold(lines.map { .log(.info, .text($0)) }, until: .delivered(revision: dialog.revision))
    }

    private func track(_ event: DialogMachine.Lifecycle, user: GravityUser?, sentPage: PageContext?) -> EngineAction {
        switch event {
        case .messageSend(let threadId, let messageId, let attempt):
            return lifecycle(
                .messageSend, props: ["threadId": threadId, "messageId": messageId, "attempt": "\(attempt)"],
                user: user, sentPage: sentPage)
        case .messageReply(let threadId, let messageId, let assistantMessageId, let products):
            return lifecycle(
                .messageReply,
                props: [
                    "threadId": threadId, "messageId": messageId, "assistantMessageId": assistantMessageId,
                    "products": "\(products)",
                ], user: user, sentPage: sentPage)
        case .messageError(let threadId, let messageId, let code):
            return lifecycle(
                .messageError, props: ["threadId": threadId, "messageId": messageId, "code": code.rawValue],
                user: user, sentPage: sentPage)
        case .feedback(let threadId, let assistantMessageId, let rating):
            return lifecycle(
                .feedback,
                props: ["threadId": threadId, "assistantMessageId": assistantMessageId, "rating": rating.rawValue],
                user: user, sentPage: sentPage)
        case .dialogEnd(let threadId, let reason):
            return lifecycle(
                .dialogEnd, props: ["threadId": threadId, "reason": reason.rawValue], user: user, sentPage: sentPage)
        }
    }
}
