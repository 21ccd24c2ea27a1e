import Foundation

// MARK: - Dialog (D1–D17, S1–S6)

extension AssistantEngine {
    /// Sends a message in the current dialog, or starts a dialog from the latest ready
    /// preparation (D14). Returns the message ID, or why it was refused; refused text is the
    /// caller's to keep. The reply arrives in later snapshots; `waitForReply()` awaits it.
    @discardableResult
    public func sendMessage(_ text: String) async -> Result<String, AssistantSendRefusal> {
        let messageId = makeUUID().uuidString.lowercased()
        var start: DialogStart?
        if dialog.context == nil {
            guard let prepared = latestReady else { return .failure(.notReady) }
            guard let uid = identity.canonicalUID else { return .failure(.noIdentity) }
            start = DialogStart(
                prepared: prepared, uid: uid, tenant: configuration.section, identityEpoch: identity.epoch,
                page: sdkContext(prepared.pageContext))
        }
        let threadId = makeUUID().uuidString.lowercased()  // D15: fresh per dialog, never `ses`
        switch dialog.send(text: text, messageId: messageId, newThreadId: threadId, start: start) {
        case .failure(let refusal):
            logger.log(.info, "send refused: \(refusal)")
            return .failure(refusal)
        case .success(let actions):
            await runDialog(actions, identity: nil)
            return .success(messageId)
        }
    }

    /// Sends a start-screen or reply suggest as the user's message (C7).
    @discardableResult
    public func sendSuggest(at index: Int) async -> Result<String, AssistantSendRefusal> {
        let suggests = makeSnapshot().suggests
        guard suggests.indices.contains(index) else { return .failure(.noSuchSuggest) }
        return await sendMessage(suggests[index])
    }

    /// Sends a failed message again with the same ID and the same bytes (D6). After an
    /// uncertain outcome the server may process it twice: there is no exactly-once promise (D7).
    @discardableResult
    public func retryMessage(id messageId: String) async -> Result<String, AssistantSendRefusal> {
        switch dialog.retry(messageId: messageId) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let actions):
            await runDialog(actions, identity: nil)
            return .success(messageId)
        }
    }

    /// "New chat": a fresh dialog on the latest ready start screen (D13, D16).
    public func startNewChat() async {
        await endDialog(.newChat, identity: nil)
    }

    /// Rates a reply once, by its assistant message ID (D11). False when rating is unavailable.
    @discardableResult
    public func rateReply(assistantMessageId: String, rating: AssistantRating) async -> Bool {
        guard let actions = dialog.rate(assistantMessageId: assistantMessageId, rating) else { return false }
        await runDialog(actions, identity: nil)
        return true
    }

    /// Suspends until no message is in flight (the reply, or its failure, has landed).
    /// Cancelling the waiting task does not cancel the message (O8, D12).
    public func waitForReply() async {
        guard case .sending = dialog.state else { return }
        nextWaiterID += 1
        let id = nextWaiterID
        await withTaskCancellationHandler {
            await withCheckedContinuation {
                dialogIdleWaiters[id] = $0
                activity?.end()  // the caller parks until the reply lands
                if Task.isCancelled { stopWaitingForReply(id) }
            }
        } onCancel: {
            self.spawn { await self.stopWaitingForReply(id) }
        }
    }

    /// A cancelled `waitForReply` caller returns at once; the message keeps going (O8).
    private func stopWaitingForReply(_ id: UInt64) {
        guard let waiter = dialogIdleWaiters.removeValue(forKey: id) else { return }
        activity?.begin()
        waiter.resume()
    }

    // MARK: - Executing dialog actions

    /// Ends the current dialog (D13). Its `chat_dialog_end` keeps the ended dialog's page
    /// (wire.md) and `identity`, the old one for an identity change (AN3).
    func endDialog(_ reason: DialogEndReason, identity override: GravityUser?) async {
        let page = dialog.context?.prepared.pageContext
        await runDialog(dialog.end(reason), identity: override, page: page)
    }

    /// Runs the dialog machine's actions. `identity` and `page` override the identity and page
    /// lifecycle events are bound to, for a dialog that has already ended.
    func runDialog(
        _ actions: [DialogMachine.Action], identity override: GravityUser?, page: PageContext? = nil
    ) async {
        for action in actions {
            switch action {
            case .sendMessage(let tag, let body):
                let shopping = self.shopping
                dialogRequests[tag] = spawn {
                    let result = await shopping.sendMessage(body: body)
                    await self.replyArrived(tag, result)
                }
            case .startReplyTimeout(let tag, let duration):
                let clock = self.clock
                replyTimers[tag] = spawn {
                    do { try await clock.sleep(for: duration) } catch { return }
                    await self.replyTimedOut(tag)
                }
            case .stopReplyTimeout(let tag):
                replyTimers.removeValue(forKey: tag)?.cancel()
            case .abandonRequest(let tag):
                dialogRequests.removeValue(forKey: tag)?.cancel()
            case .abandonHistory(let tag):
                historyReads.removeValue(forKey: tag)?.cancel()
            case .fetchHistory(let tag, let threadId, let resourceId, let tenant):
                let shopping = self.shopping
                historyReads[tag] = spawn {
                    let result = await shopping.history(threadId: threadId, resourceId: resourceId, tenantId: tenant)
                    await self.historyArrived(tag, result)
                }
            case .sendFeedback(let epoch, let request):
                let shopping = self.shopping
                spawn {
                    if case .failure(let failure) = await shopping.feedback(request) {
                        self.logger.log(
                            .info,
                            "shopping POST /v1/feedback failed, the rating is offered again: \(failure.error?.description ?? "cancelled")"
                        )
                        await self.feedbackFailed(epoch, request.messageId)
                    }
                }
            case .track(let lifecycle):
                track(lifecycle, identity: override, page: page)
            case .publish:
                // Waiters for the reply wake once the presenter has been given the outcome, and
                // only if no other message went out meanwhile (they wait for "nothing in flight").
                await publish()
                if case .sending = dialog.state {
                } else {
                    let waiters = dialogIdleWaiters.values
                    dialogIdleWaiters = [:]
                    for waiter in waiters {
                        activity?.begin()
                        waiter.resume()
                    }
                }
            case .diagnostics(let lines):
                for line in lines { logger.log(.info, "dialog: \(line)") }
            }
        }
    }

    private func replyArrived(_ tag: DialogTag, _ result: Result<ReplyContent, WireFailure>) async {
        dialogRequests.removeValue(forKey: tag)
        await runDialog(dialog.replyReceived(tag, result), identity: nil)
    }

    private func replyTimedOut(_ tag: DialogTag) async {
        replyTimers.removeValue(forKey: tag)
        await runDialog(dialog.replyTimedOut(tag), identity: nil)
    }

    private func historyArrived(_ tag: DialogTag, _ result: Result<[HistoryMessage], WireFailure>) async {
        historyReads.removeValue(forKey: tag)
        await runDialog(dialog.historyReceived(tag, result), identity: nil)
    }

    private func feedbackFailed(_ epoch: UInt64, _ assistantMessageId: String) async {
        await runDialog(dialog.feedbackFailed(dialog: epoch, assistantMessageId: assistantMessageId), identity: nil)
    }

    private func track(_ lifecycle: DialogMachine.Lifecycle, identity override: GravityUser?, page: PageContext?) {
        switch lifecycle {
        case .messageSend(let threadId, let messageId, let attempt):
            track(
                type: "chat_message_send",
                props: ["threadId": threadId, "messageId": messageId, "attempt": "\(attempt)"],
                identity: override)
        case .messageReply(let threadId, let messageId, let assistantMessageId, let products):
            track(
                type: "chat_message_reply",
                props: [
                    "threadId": threadId, "messageId": messageId, "assistantMessageId": assistantMessageId,
                    "products": "\(products)",
                ], identity: override)
            if let assistantMessageId, let reply = dialog.reply(assistantMessageId: assistantMessageId) {
                logUnhandledButtons(reply)
            }
        case .messageError(let threadId, let messageId, let code):
            track(
                type: "chat_message_error",
                props: ["threadId": threadId, "messageId": messageId, "code": code.rawValue],
                identity: override)
        case .feedback(let threadId, let assistantMessageId, let rating):
            track(
                type: "chat_feedback",
                props: ["threadId": threadId, "assistantMessageId": assistantMessageId, "rating": rating.rawValue],
                identity: override)
        case .dialogEnd(let threadId, let reason):
            track(
                type: "chat_dialog_end", props: ["threadId": threadId, "reason": reason.rawValue], identity: override,
                page: page)
        }
    }

    /// AC4: an action the handler cannot handle is not offered, and that is worth a diagnostic.
    private func logUnhandledButtons(_ reply: ReplyContent) {
        for button in reply.buttons {
            guard let action = button.action else {
                logger.log(.info, "reply button not offered: \(button.actionName) without a valid http(s) URL")
                continue
            }
            if handler?.canHandle(action) != true {
                logger.log(.info, "reply button not offered: the action handler cannot handle \(action.name)")
            }
        }
    }

    /// Queues a lifecycle event bound to the current identity (or `override`) and the dialog's
    /// page (or `page`) (AN1–AN3). Properties are IDs only, never chat text.
    func track(
        type: String, props: [String: String?], identity override: GravityUser? = nil, page: PageContext? = nil
    ) {
        let context =
            page ?? dialog.context?.prepared.pageContext ?? latestReady?.pageContext ?? PageContext(type: .other)
        let event = GravityCustomEvent(
            type: type, name: type.replacingOccurrences(of: "_", with: " "), customProps: props.compactMapValues { $0 })
        tracker.enqueue([.event(event, envelope: envelope(context, user: override))])
    }

    /// Queues tracking URL requests under the current identity; identical URLs once (AN5).
    func enqueueURLs(_ urls: [String]) {
        var seen: Set<String> = []
        let unique = urls.filter { seen.insert($0).inserted }
        let user = identity.wire
        tracker.enqueue(unique.map { .url($0, user: user) })
    }
}
