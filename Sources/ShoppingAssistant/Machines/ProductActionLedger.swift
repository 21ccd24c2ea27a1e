/// Decides product actions (PR4–PR9) from the refs alone: a ref names the opening, dialog and
/// identity it was issued under, so staleness needs no lookup beyond the product itself. Its
/// decisions are the results the host gets.
struct ProductActionLedger: Sendable, Hashable {
    /// Where refs are current right now.
    struct Scope: Sendable, Hashable {
        /// The open chat's opening, or `nil` when the chat is not open.
        let opening: UInt64?
        let dialog: UInt64
        let identity: UInt64
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

    /// The decision on a visible impression of `ref` when it needs no product to be looked up
    /// — a stale ref or a duplicate — so that the many repeated impressions of a redraw cost
    /// no lookup; `nil` when the product decides (`impressionReported`).
    func impressionDecidedWithoutProduct(_ ref: AssistantProductRef, scope: Scope) -> AssistantInteractionResult? {
        guard isCurrent(ref, scope) else { return .staleReference }  // PR8
        return impressed.contains(reply: ref.reply, item: ref.item) ? .duplicate : nil  // PR6
    }

    /// A visible impression of `ref`; `productExists` says whether the dialog holds its
    /// product. Accepted once per appearance per opening (PR6); a ref of another opening,
    /// dialog or identity, or of no product, is stale (PR8).
    mutating func impressionReported(_ ref: AssistantProductRef, scope: Scope, productExists: Bool)
        -> AssistantInteractionResult
    {
        guard isCurrent(ref, scope), productExists else { return .staleReference }  // PR8
        guard impressed.insert(reply: ref.reply, item: ref.item) else { return .duplicate }  // PR6
        return .accepted
    }

    /// A tap of `ref`; `productCanOpen` is `nil` when the dialog holds no such product. One
    /// transition per opening (PR9); a product that cannot open is not actionable (PR1, PR7).
    mutating func tapReported(_ ref: AssistantProductRef, scope: Scope, productCanOpen: Bool?)
        -> AssistantInteractionResult
    {
        if let transition, ref.opening == transition { return .duplicate }  // PR9
        guard isCurrent(ref, scope), let productCanOpen else { return .staleReference }  // PR8
        guard productCanOpen else { return .notActionable }  // PR1, PR7
        if transition != nil { return .duplicate }  // one transition per opening
        transition = ref.opening
        return .accepted
    }

    /// Whether `ref` was issued in the opening, dialog and identity of `scope` (PR8).
    private func isCurrent(_ ref: AssistantProductRef, _ scope: Scope) -> Bool {
        ref.opening == scope.opening && ref.dialog == scope.dialog && ref.identity == scope.identity
    }
}
