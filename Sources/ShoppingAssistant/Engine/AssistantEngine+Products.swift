import Foundation

// MARK: - Products and reply actions (PR1–PR10, AC1–AC6, AN5–AN8)

extension AssistantEngine {
    /// Reports a visible impression or a tap of a product card (PR4).
    ///
    /// An accepted tap queues click tracking, closes the chat, and only after the close
    /// completed calls the handler with `.openProduct` exactly once (PR10). This call returns
    /// when that is done.
    public func performAssistantProductAction(
        product ref: AssistantProductRef, action: AssistantProductAction
    ) async -> AssistantInteractionResult {
        let scope = ProductActionLedger.Scope(
            opening: presentation.currentOpening?.value, dialog: dialog.epoch, identity: identity.epoch)
        let decision = ledger.perform(
            ref, action, scope: scope, product: dialog.product(reply: ref.reply, item: ref.item))
        logger.log(.info, "product \(action.rawValue) \(ref): \(decision.result.rawValue)")
        guard case .accepted(let product) = decision else { return decision.result }
        switch action {
        case .visibleImpression:
            enqueueURLs(product.tracking.visibleImpressionURLs)
        case .tap:
            enqueueURLs(product.tracking.clickURLs)  // queued before the close (AN8)
            afterClose.append(.openProduct(product.product(ref: ref)))
            await closeChat(reason: "product tap")
        }
        return .accepted
    }

    /// Presses reply button `index` of the reply `assistantMessageId` (AC1–AC6): closes the
    /// chat, then hands the action to the handler once. No product tracking is sent (AC6).
    public func performReplyButton(assistantMessageId: String, index: Int) async -> AssistantInteractionResult {
        guard case .open = presentation.state, ledger.transition == nil,
            let message = makeSnapshot().messages.first(where: { $0.role == .assistant && $0.id == assistantMessageId }
            ),
            message.buttons.indices.contains(index)
        else { return .staleReference }
        let button = message.buttons[index]
        guard button.isEnabled else { return .notActionable }
        track(
            type: "chat_action",
            props: [
                "threadId": dialog.context?.threadId, "assistantMessageId": assistantMessageId,
                "action": button.action.name,
            ])
        afterClose.append(button.action)
        await closeChat(reason: "reply action")
        return .accepted
    }

    /// Renders a block with the registered builder, refusing a zero or unbounded height (PR3).
    public func renderProductBlock(_ block: AssistantProductBlock, layout: AssistantProductLayout) -> (
        any AssistantProductBlockRendering
    )? {
        guard let builder else { return nil }
        let rendering = builder.build(block: block, layout: layout)
        guard rendering.height > 0, rendering.height < 10_000 else {
            logger.log(.error, "product block builder returned an invalid height \(rendering.height)")
            return nil
        }
        return rendering
    }

    // MARK: - Snapshot

    func makeSnapshot() -> AssistantChatSnapshot {
        let start = dialog.context?.prepared.configuration ?? latestReady?.configuration
        let opening = presentation.currentOpening?.value ?? 0
        // Messages are derived from entries once and reused until their entry changes: a long
        // dialog must not re-route every button and re-issue every product on each publish.
        let scope = SnapshotCacheScope(
            opening: opening, dialog: dialog.epoch, identity: identity.epoch, handler: handlerRevision)
        if scope != snapshotCacheScope {
            snapshotCacheScope = scope
            snapshotCache = []
        }
        var messages: [AssistantChatMessage] = []
        messages.reserveCapacity(dialog.entries.count)
        var lastReply: ReplyContent?
        for (index, entry) in dialog.entries.enumerated() {
            let revision = dialog.revisions[index]
            if case .reply(let reply) = entry { lastReply = reply.content }
            if index < snapshotCache.count, snapshotCache[index].revision == revision {
                messages.append(snapshotCache[index].message)
                continue
            }
            let message = makeMessage(entry, index: index, opening: opening)
            if index < snapshotCache.count {
                snapshotCache[index] = (revision, message)
            } else {
                snapshotCache.append((revision, message))
            }
            messages.append(message)
        }
        if snapshotCache.count > messages.count { snapshotCache.removeLast(snapshotCache.count - messages.count) }
        let sending: Bool
        if case .sending = dialog.state { sending = true } else { sending = false }
        let suggests = dialog.entries.isEmpty ? (start?.suggests ?? []) : (sending ? [] : lastReply?.suggests ?? [])
        return AssistantChatSnapshot(
            title: start?.title ?? "", subtitle: start?.subtitle, messages: messages, suggests: suggests,
            isSending: sending, canSend: !sending && (dialog.context != nil || latestReady != nil))
    }

    private func makeMessage(_ entry: DialogMachine.Entry, index: Int, opening: UInt64) -> AssistantChatMessage {
        switch entry {
        case .user(let user):
            let status: AssistantChatMessage.Status
            var canRetry = false
            switch user.status {
            case .sending: status = .sending
            case .sent: status = .sent
            case .failed(let error, let retryable):
                status = .failed(error)
                canRetry = retryable
            }
            return AssistantChatMessage(
                id: user.messageId, role: .user, text: user.text, status: status, canRetry: canRetry)
        case .reply(let reply):
            let content = reply.content
            let block = content.products.map { products in
                AssistantProductBlock(
                    title: content.productsTitle,
                    products: products.enumerated().map { item, product in
                        product.product(
                            ref: AssistantProductRef(
                                opening: opening, dialog: dialog.epoch, identity: identity.epoch,
                                reply: reply.key, item: item))
                    })
            }
            let buttons = content.buttons.compactMap { button -> AssistantReplyButton? in
                guard let action = button.action else { return nil }  // AC3, routed when decoded
                return AssistantReplyButton(
                    title: button.title, action: action, isEnabled: handler?.canHandle(action) ?? false)  // AC4
            }
            return AssistantChatMessage(
                id: content.assistantMessageId ?? "reply-\(reply.key)", role: .assistant, text: content.text,
                productBlock: block, buttons: buttons,
                canRate: content.assistantMessageId != nil && reply.rating == nil, rating: reply.rating)
        }
    }
}

/// What every cached message depends on besides its own entry.
struct SnapshotCacheScope: Hashable, Sendable {
    let opening: UInt64
    let dialog: UInt64
    let identity: UInt64
    let handler: UInt64
}
