// MARK: - Products and reply actions (PR1–PR10, AC1–AC6, AN5–AN8)

extension EngineMachine {
    /// `performAssistantProductAction` (PR4). An accepted tap queues the click tracking, closes
    /// the chat, and once the close completed hands `.openProduct` over exactly once; the
    /// caller returns then (PR10, AN8).
    mutating func productActionCalled(_ call: CallID, ref: AssistantProductRef, action: AssistantProductAction)
        -> [EngineAction]
    {
        if action == .visibleImpression { return impressionCalled(call, ref: ref) }
        let product = dialog.product(turn: ref.reply, item: ref.item)
        let result = products.tapReported(ref, scope: productScope, productCanOpen: product?.canOpen)
        let note = EngineAction.log(.info, .productAction(.tap, ref, result))
        guard result == .accepted, let product else { return [note, .complete(call, .interaction(result))] }
        // The click is queued before the close starts (PR10), and survives it (AN8).
        return [note, .log(.info, "closing the chat: product tap")] + trackURLs(product.clickTrackingURLs)
            + close(call, .interaction(.accepted), thenHandOver: .openProduct(product.product(ref: ref)))
    }

    /// A visible impression (PR4–PR6, PR8, AN5): decided at once, it waits for nothing, neither
    /// the host nor the network. The note, the product's impression tracking once accepted,
    /// then the completion; the product is looked up only when the ref alone cannot decide.
    private mutating func impressionCalled(_ call: CallID, ref: AssistantProductRef) -> [EngineAction] {
        let scope = productScope
        var tracking: TrackingJobs?
        let result: AssistantInteractionResult
        if let decided = products.impressionDecidedWithoutProduct(ref, scope: scope) {
            result = decided
        } else {
            let urls = dialog.visibleImpressionURLs(turn: ref.reply, item: ref.item)
            result = products.impressionReported(ref, scope: scope, productExists: urls != nil)
            if result == .accepted, let urls { tracking = jobs(urls) }  // AN5
        }
        let note = EngineAction.log(.info, .productAction(.visibleImpression, ref, result))
        let completion = EngineAction.complete(call, .interaction(result))
        guard let tracking else { return [note, completion] }
        return [note, .track(tracking), completion]
    }

    /// Where product refs are current now: the open chat's opening, the dialog, the identity.
    private var productScope: ProductActionLedger.Scope {
        ProductActionLedger.Scope(
            opening: presentation.currentOpening?.value, dialog: dialog.epoch, identity: identity.epoch)
    }

    /// `performReplyButton` (AC1–AC6): closes the chat, then hands the action over once. Not
    /// a product click: no product tracking (AC6), only `chat_action`.
    mutating func replyButtonPressed(_ call: CallID, assistantMessageId: String, index: Int) -> [EngineAction] {
        // PR8, PR9: only a button of a reply on the open chat, and not while a transition is under way.
        guard presentation.isOpen, products.transition == nil,
            let (turn, _) = dialog.reply(assistantMessageId: assistantMessageId),
            let message = dialog.turns[turn].replyMessage(
                turn: turn, scope: snapshotScope, restoredOffers: dialog.restoredOffers),
            message.buttons.indices.contains(index)
        else { return [.complete(call, .interaction(.staleReference))] }
        let button = message.buttons[index]
        guard button.isEnabled else { return [.complete(call, .interaction(.notActionable))] }  // AC4
        // AC6: no product tracking, only `chat_action` (AN1).
        return [
            lifecycle(
                .action,
                props: [
                    "threadId": dialog.context?.threadId, "assistantMessageId": assistantMessageId,
                    "action": button.action.name,
                ]),
            .log(.info, "closing the chat: reply action"),
        ] + close(call, .interaction(.accepted), thenHandOver: button.action)  // AC5
    }

    /// Whether a block the builder rendered may be shown: a height that is positive and
    /// finite, so rotation, larger text or an empty block never yield a zero or unbounded
    /// block (PR3).
    static func acceptsBlockHeight(_ height: Int) -> Bool {
        height > 0 && height < maximumBlockHeight  // PR3
    }

    /// Heights from here on count as unbounded (lines, for a terminal).
    static let maximumBlockHeight = 10_000

    /// The scope of the snapshot's refs.
    var snapshotScope: ChatScope {
        ChatScope(opening: presentation.currentOpening?.value ?? 0, dialog: dialog.epoch, identity: identity.epoch)
    }
}
