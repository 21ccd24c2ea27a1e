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

    /// What a visible impression does (PR4–PR6, PR8, AN5): it is decided at once and waits for
    /// nothing, neither the host nor the network. `tracking` is the product's impression
    /// tracking, once accepted; `nil` when refused or when the product has no impression URL.
    /// A pair rather than a type of its own: it is returned many a second (figure 3 of the
    /// bench), and a pair moves where a struct holding the jobs was copied, retaining what
    /// the tracking thread releases.
    typealias Impression = (result: AssistantInteractionResult, tracking: TrackingJobs?)

    /// The log line of an impression of `ref` decided `result`.
    static func note(impressionOf ref: AssistantProductRef, _ result: AssistantInteractionResult) -> LogLine {
        .productAction(.visibleImpression, ref, result)
    }

    /// A visible impression reported through `performAssistantProductAction`, decided without
    /// a call: the actor logs its note, queues its tracking and returns its result itself, so
    /// an impression takes no `CallID`, parks no caller and makes no list of actions.
    /// Impressions come many a second while a carousel scrolls (figure 3 of the bench).
    ///
    /// `nil` when the impression must take the way of every call instead (`receive`): the
    /// engine is shut down and refuses it (H2), or tracking held behind a presenter call must
    /// leave before this impression's (AN5, in the order it happened).
    mutating func visibleImpressionReported(_ ref: AssistantProductRef) -> Impression? {
        guard !isShutDown, trackingAfterPresenter.isEmpty else { return nil }
        return impression(ref)
    }

    /// A visible impression as the actions of call `call`: the note, the tracking, then the
    /// completion.
    private mutating func impressionCalled(_ call: CallID, ref: AssistantProductRef) -> [EngineAction] {
        let (result, tracking) = impression(ref)
        return [.log(.info, Self.note(impressionOf: ref, result))] + (tracking.map { [.track($0)] } ?? [])
            + [.complete(call, .interaction(result))]
    }

    /// The one decision of a visible impression, whichever way it came. The product is looked
    /// up only when the ref alone cannot decide, and then in place: an impression copies no
    /// product (figure 3 of the bench).
    @inline(__always)
    private mutating func impression(_ ref: AssistantProductRef) -> Impression {
        let scope = productScope
        if let result = products.impressionDecidedWithoutProduct(ref, scope: scope) { return (result, nil) }
        let urls = dialog.visibleImpressionURLs(turn: ref.reply, item: ref.item)
        let result = products.impressionReported(ref, scope: scope, productExists: urls != nil)
        guard result == .accepted, let urls else { return (result, nil) }
        return (.accepted, jobs(urls))  // AN5
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
            let message = dialog.turns[turn].replyMessage(turn: turn, scope: snapshotScope),
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
