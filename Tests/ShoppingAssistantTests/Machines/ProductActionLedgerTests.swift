import Testing

@testable import ShoppingAssistant

@Suite(.timeLimit(.minutes(2))) struct ProductActionLedgerTests {
    private static func product(sku: String? = "SKU-1", url: String? = nil) -> ReplyProduct {
        var object: [String: JSONValue] = ["itemId": "p-1", "name": "Mug"]
        if let sku { object["sku"] = .string(sku) }
        if let url { object["url"] = .string(url) }
        guard let product = ReplyProduct(json: .object(object)) else {
            preconditionFailure("fixture product must decode")
        }
        return product
    }

    private static func ref(opening: UInt64 = 1, dialog: UInt64 = 1, identity: UInt64 = 1, item: Int = 0)
        -> AssistantProductRef
    {
        AssistantProductRef(opening: opening, dialog: dialog, identity: identity, reply: 1, item: item)
    }

    private static func scope(opening: UInt64? = 1, dialog: UInt64 = 1, identity: UInt64 = 1)
        -> ProductActionLedger.Scope
    {
        ProductActionLedger.Scope(opening: opening, dialog: dialog, identity: identity)
    }

    // covers: PR6
    @Test func visibleImpressionIsAcceptedOncePerRefAndRedrawsAreDuplicates() {
        var ledger = ProductActionLedger()
        ledger.beginOpening()
        let product = Self.product()
        let first = Self.ref(item: 0)
        let second = Self.ref(item: 1)
        #expect(ledger.perform(first, .visibleImpression, scope: Self.scope(), product: product) == .accepted(product))
        #expect(ledger.perform(first, .visibleImpression, scope: Self.scope(), product: product) == .duplicate)
        #expect(ledger.perform(first, .visibleImpression, scope: Self.scope(), product: product) == .duplicate)
        // Another appearance in the same opening is its own impression.
        #expect(ledger.perform(second, .visibleImpression, scope: Self.scope(), product: product) == .accepted(product))
    }

    // covers: PR6, PR8
    @Test func newOpeningHandsOutNewRefsThatAreAcceptedAgainWhileOldRefsAreStale() {
        var ledger = ProductActionLedger()
        let product = Self.product()
        ledger.beginOpening()
        let old = Self.ref(opening: 1)
        #expect(
            ledger.perform(old, .visibleImpression, scope: Self.scope(opening: 1), product: product)
                == .accepted(product))
        ledger.beginOpening()
        let fresh = Self.ref(opening: 2)
        #expect(fresh != old)
        #expect(
            ledger.perform(fresh, .visibleImpression, scope: Self.scope(opening: 2), product: product)
                == .accepted(product))
        #expect(
            ledger.perform(old, .visibleImpression, scope: Self.scope(opening: 2), product: product) == .staleReference)
        #expect(ledger.perform(old, .tap, scope: Self.scope(opening: 2), product: product) == .staleReference)
    }

    // covers: PR8
    @Test func refFromAnotherOpeningDialogOrIdentityIsStale() {
        var ledger = ProductActionLedger()
        ledger.beginOpening()
        let product = Self.product()
        let ref = Self.ref()
        for action in [AssistantProductAction.visibleImpression, .tap] {
            // The chat is closed: no opening is current.
            #expect(ledger.perform(ref, action, scope: Self.scope(opening: nil), product: product) == .staleReference)
            // New chat.
            #expect(ledger.perform(ref, action, scope: Self.scope(dialog: 2), product: product) == .staleReference)
            // Identity change.
            #expect(ledger.perform(ref, action, scope: Self.scope(identity: 2), product: product) == .staleReference)
            // The ref names no product in the dialog.
            #expect(ledger.perform(ref, action, scope: Self.scope(), product: nil) == .staleReference)
        }
        #expect(ledger.transition == nil)
    }

    // covers: PR1, PR7
    @Test func tapOnProductWithoutSkuOrUrlIsNotActionableAndWithEitherIsAccepted() {
        let neither = Self.product(sku: nil, url: nil)
        let skuOnly = Self.product(sku: "SKU-1", url: nil)
        let urlOnly = Self.product(sku: nil, url: "https://shop.example/p/1")
        #expect(!neither.canOpen)
        var ledger = ProductActionLedger()
        ledger.beginOpening()
        #expect(ledger.perform(Self.ref(), .tap, scope: Self.scope(), product: neither) == .notActionable)
        #expect(ledger.transition == nil)
        // It is still shown: its impression counts.
        #expect(
            ledger.perform(Self.ref(), .visibleImpression, scope: Self.scope(), product: neither) == .accepted(neither))

        var skuLedger = ProductActionLedger()
        skuLedger.beginOpening()
        #expect(skuLedger.perform(Self.ref(), .tap, scope: Self.scope(), product: skuOnly) == .accepted(skuOnly))
        var urlLedger = ProductActionLedger()
        urlLedger.beginOpening()
        #expect(urlLedger.perform(Self.ref(), .tap, scope: Self.scope(), product: urlOnly) == .accepted(urlOnly))
    }

    // covers: PR9
    @Test func secondTapWhileTransitionIsUnderWayIsDuplicate() {
        var ledger = ProductActionLedger()
        ledger.beginOpening()
        let product = Self.product()
        #expect(ledger.perform(Self.ref(item: 0), .tap, scope: Self.scope(), product: product) == .accepted(product))
        #expect(ledger.transition == 1)
        // Same card, still open.
        #expect(ledger.perform(Self.ref(item: 0), .tap, scope: Self.scope(), product: product) == .duplicate)
        // Another card of the same opening while the chat is closing (no current opening).
        #expect(
            ledger.perform(Self.ref(item: 1), .tap, scope: Self.scope(opening: nil), product: product) == .duplicate)
        ledger.endTransition()
        // Once closed, the opening's refs are simply stale.
        #expect(
            ledger.perform(Self.ref(item: 0), .tap, scope: Self.scope(opening: nil), product: product)
                == .staleReference)
    }

    // covers: PR4
    @Test func decisionsMapToThePublicInteractionResults() {
        let product = Self.product()
        #expect(ProductActionLedger.Decision.accepted(product).result == .accepted)
        #expect(ProductActionLedger.Decision.duplicate.result == .duplicate)
        #expect(ProductActionLedger.Decision.staleReference.result == .staleReference)
        #expect(ProductActionLedger.Decision.notActionable.result == .notActionable)
    }
}
