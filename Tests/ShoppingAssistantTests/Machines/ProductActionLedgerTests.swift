import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct ProductActionLedgerTests {
    private typealias F = MachineFixtures
    private static let scope = ProductActionLedger.Scope(opening: 1, dialog: 1, identity: 1)

    private static func ref(opening: UInt64 = 1, dialog: UInt64 = 1, identity: UInt64 = 1, item: Int = 0)
        -> AssistantProductRef
    {
        AssistantProductRef(opening: opening, dialog: dialog, identity: identity, reply: 0, item: item)
    }

    private static func product(sku: String? = "SKU-1") throws -> ReplyProduct {
        try #require(ReplyProduct(json: F.product(sku: sku)))
    }

    // covers: PR6
    @Test func oneImpressionPerAppearancePerOpeningAndNewRefsInTheNext() throws {
        var ledger = ProductActionLedger()
        let product = try Self.product()
        #expect(
            ledger.actionReported(Self.ref(), .visibleImpression, scope: Self.scope, product: product)
                == .accepted(product))
        #expect(
            ledger.actionReported(Self.ref(), .visibleImpression, scope: Self.scope, product: product) == .duplicate)
        ledger.openingBegan()
        let next = ProductActionLedger.Scope(opening: 2, dialog: 1, identity: 1)
        #expect(
            ledger.actionReported(Self.ref(opening: 2), .visibleImpression, scope: next, product: product)
                == .accepted(product))
    }

    // covers: PR8
    @Test func aRefFromAnotherOpeningDialogOrIdentityIsStale() throws {
        var ledger = ProductActionLedger()
        let product = try Self.product()
        for ref in [Self.ref(opening: 0), Self.ref(dialog: 2), Self.ref(identity: 2)] {
            #expect(ledger.actionReported(ref, .tap, scope: Self.scope, product: product) == .staleReference)
        }
        let closed = ProductActionLedger.Scope(opening: nil, dialog: 1, identity: 1)
        #expect(
            ledger.actionReported(Self.ref(), .visibleImpression, scope: closed, product: product) == .staleReference)
        #expect(ledger.actionReported(Self.ref(), .tap, scope: Self.scope, product: nil) == .staleReference)
    }

    // covers: PR7, PR1
    @Test func aProductThatCannotOpenIsNotActionable() throws {
        var ledger = ProductActionLedger()
        let product = try #require(ReplyProduct(json: ["itemId": "p-9", "name": "Plain"]))
        #expect(!product.canOpen)
        #expect(ledger.actionReported(Self.ref(), .tap, scope: Self.scope, product: product) == .notActionable)
        #expect(
            ledger.actionReported(Self.ref(), .visibleImpression, scope: Self.scope, product: product)
                == .accepted(product))
    }

    // covers: PR9
    @Test func aSecondTapDuringTheTransitionIsADuplicate() throws {
        var ledger = ProductActionLedger()
        let product = try Self.product()
        #expect(ledger.actionReported(Self.ref(), .tap, scope: Self.scope, product: product) == .accepted(product))
        #expect(ledger.actionReported(Self.ref(), .tap, scope: Self.scope, product: product) == .duplicate)
        #expect(ledger.actionReported(Self.ref(item: 1), .tap, scope: Self.scope, product: product) == .duplicate)
        let closed = ProductActionLedger.Scope(opening: nil, dialog: 1, identity: 1)
        #expect(ledger.actionReported(Self.ref(), .tap, scope: closed, product: product) == .duplicate)
        ledger.transitionEnded()
        #expect(ledger.actionReported(Self.ref(), .tap, scope: closed, product: product) == .staleReference)
    }
}
