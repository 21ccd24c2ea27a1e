import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct ProductActionLedgerTests {
    private static let scope = ProductActionLedger.Scope(opening: 1, dialog: 1, identity: 1)

    private static func ref(opening: UInt64 = 1, dialog: UInt64 = 1, identity: UInt64 = 1, item: Int = 0)
        -> AssistantProductRef
    {
        AssistantProductRef(opening: opening, dialog: dialog, identity: identity, reply: 0, item: item)
    }

    // covers: PR6
    @Test func oneImpressionPerAppearancePerOpeningAndNewRefsInTheNext() throws {
        var ledger = ProductActionLedger()
        #expect(ledger.impressionDecidedWithoutProduct(Self.ref(), scope: Self.scope) == nil)
        #expect(ledger.impressionReported(Self.ref(), scope: Self.scope, productExists: true) == .accepted)
        #expect(ledger.impressionDecidedWithoutProduct(Self.ref(), scope: Self.scope) == .duplicate)
        #expect(ledger.impressionReported(Self.ref(), scope: Self.scope, productExists: true) == .duplicate)
        #expect(ledger.impressionDecidedWithoutProduct(Self.ref(item: 1), scope: Self.scope) == nil)
        ledger.openingBegan()
        let next = ProductActionLedger.Scope(opening: 2, dialog: 1, identity: 1)
        #expect(ledger.impressionDecidedWithoutProduct(Self.ref(opening: 2), scope: next) == nil)
        #expect(ledger.impressionReported(Self.ref(opening: 2), scope: next, productExists: true) == .accepted)
    }

    // covers: PR8
    @Test func aRefFromAnotherOpeningDialogOrIdentityIsStale() throws {
        var ledger = ProductActionLedger()
        for ref in [Self.ref(opening: 0), Self.ref(dialog: 2), Self.ref(identity: 2)] {
            #expect(ledger.tapReported(ref, scope: Self.scope, productCanOpen: true) == .staleReference)
            #expect(ledger.impressionDecidedWithoutProduct(ref, scope: Self.scope) == .staleReference)
            #expect(ledger.impressionReported(ref, scope: Self.scope, productExists: true) == .staleReference)
        }
        let closed = ProductActionLedger.Scope(opening: nil, dialog: 1, identity: 1)
        #expect(ledger.impressionDecidedWithoutProduct(Self.ref(), scope: closed) == .staleReference)
        #expect(ledger.impressionReported(Self.ref(), scope: closed, productExists: true) == .staleReference)
        // A current ref that names no product of the dialog is stale too.
        #expect(ledger.impressionReported(Self.ref(), scope: Self.scope, productExists: false) == .staleReference)
        #expect(ledger.tapReported(Self.ref(), scope: Self.scope, productCanOpen: nil) == .staleReference)
        // Nothing stale was counted: the same ref's impression is still the first.
        #expect(ledger.impressionReported(Self.ref(), scope: Self.scope, productExists: true) == .accepted)
    }

    // covers: PR7, PR1
    @Test func aProductThatCannotOpenIsNotActionable() throws {
        var ledger = ProductActionLedger()
        let product = try #require(ReplyProduct(json: ["itemId": "p-9", "name": "Plain"]))
        #expect(!product.canOpen)
        #expect(ledger.tapReported(Self.ref(), scope: Self.scope, productCanOpen: product.canOpen) == .notActionable)
        #expect(ledger.impressionReported(Self.ref(), scope: Self.scope, productExists: true) == .accepted)
    }

    // covers: PR9
    @Test func aSecondTapDuringTheTransitionIsADuplicate() throws {
        var ledger = ProductActionLedger()
        #expect(ledger.tapReported(Self.ref(), scope: Self.scope, productCanOpen: true) == .accepted)
        #expect(ledger.tapReported(Self.ref(), scope: Self.scope, productCanOpen: true) == .duplicate)
        #expect(ledger.tapReported(Self.ref(item: 1), scope: Self.scope, productCanOpen: true) == .duplicate)
        let closed = ProductActionLedger.Scope(opening: nil, dialog: 1, identity: 1)
        #expect(ledger.tapReported(Self.ref(), scope: closed, productCanOpen: true) == .duplicate)
        // Any ref of the transitioning opening: one naming no product, or of another dialog.
        #expect(ledger.tapReported(Self.ref(), scope: closed, productCanOpen: nil) == .duplicate)
        #expect(ledger.tapReported(Self.ref(dialog: 2), scope: closed, productCanOpen: false) == .duplicate)
        ledger.transitionEnded()
        #expect(ledger.tapReported(Self.ref(), scope: closed, productCanOpen: true) == .staleReference)
    }
}
