/// Decides product actions (PR4–PR9) from the refs alone: a ref names the opening, dialog and
/// identity it was issued under, so staleness needs no lookup beyond the product itself.
struct ProductActionLedger: Sendable {
    /// Where refs are current right now.
    struct Scope: Sendable, Hashable {
        /// The open chat's opening, or `nil` when the chat is not open.
        let opening: UInt64?
        let dialog: UInt64
        let identity: UInt64
    }

    enum Decision: Sendable, Hashable {
        case accepted(ReplyProduct)
        case duplicate
        case staleReference
        case notActionable

        var result: AssistantInteractionResult {
            switch self {
            case .accepted: return .accepted
            case .duplicate: return .duplicate
            case .staleReference: return .staleReference
            case .notActionable: return .notActionable
            }
        }
    }

    /// The visible impressions reported in this opening (PR6), where a ref is current only if
    /// it is of this opening, dialog and identity: so by its reply (the turn's index in the
    /// dialog) and item alone — a bit each, no hashing (impressions come many a second).
    private var impressed = ImpressionBits()
    /// The opening in which a tap was accepted and whose close-then-navigate is under way (PR9, PR10).
    private(set) var transition: UInt64?

    /// A new opening: older refs are stale by construction, so their bookkeeping can go (PR6).
    mutating func openingBegan() {
        impressed.removeAll()
        transition = nil
    }

    /// The navigation of an accepted tap has been handed to the host.
    mutating func transitionEnded() { transition = nil }

    /// The decision for `ref` when it needs no product to be made — a duplicate or a stale ref
    /// — so that the many repeated impressions of a redraw cost no product lookup; `nil` when the
    /// product decides (`actionReported`).
    func decisionWithoutProduct(_ ref: AssistantProductRef, _ action: AssistantProductAction, scope: Scope)
        -> Decision?
    {
        if action == .tap, let transition, ref.opening == transition { return .duplicate }  // PR9
        guard ref.opening == scope.opening, ref.dialog == scope.dialog, ref.identity == scope.identity else {
            return .staleReference  // PR8
        }
        if action == .visibleImpression, impressed.contains(reply: ref.reply, item: ref.item) {
            return .duplicate  // PR6
        }
        return nil
    }

    mutating func actionReported(
        _ ref: AssistantProductRef, _ action: AssistantProductAction, scope: Scope, product: ReplyProduct?
    ) -> Decision {
        if action == .tap, let transition, ref.opening == transition { return .duplicate }  // PR9
        guard ref.opening == scope.opening, ref.dialog == scope.dialog, ref.identity == scope.identity,
            let product
        else { return .staleReference }  // PR8
        switch action {
        case .visibleImpression:
            guard impressed.insert(reply: ref.reply, item: ref.item) else { return .duplicate }  // PR6
            return .accepted(product)
        case .tap:
            guard product.canOpen else { return .notActionable }  // PR1, PR7
            if transition != nil { return .duplicate }  // one transition per opening
            transition = ref.opening
            return .accepted(product)
        }
    }
}
