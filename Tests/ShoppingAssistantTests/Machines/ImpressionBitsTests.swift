import Testing

@testable import ShoppingAssistant

/// The ledger's record of visible impressions (PR6): one bit per item of a reply.
@Suite struct ImpressionBitsTests {
    // covers: PR6
    @Test func anImpressionIsNewOnceAndADuplicateAfter() {
        var bits = ImpressionBits()
        #expect(!bits.contains(reply: 3, item: 70))
        let first = bits.insert(reply: 3, item: 70)
        #expect(first)
        #expect(bits.contains(reply: 3, item: 70))
        let second = bits.insert(reply: 3, item: 70)
        #expect(!second, "a second impression of the same item is a duplicate")
        #expect(!bits.contains(reply: 3, item: 6), "the same bit of another word is another item")
        #expect(!bits.contains(reply: 2, item: 70), "and the same item of another reply")
        #expect(!bits.contains(reply: 4, item: 70))
    }

    @Test func everyItemOfAReplyHasABitOfItsOwn() {
        var bits = ImpressionBits()
        let inserted = (0..<200).filter { bits.insert(reply: 0, item: $0) }
        #expect(inserted.count == 200)
        #expect((0..<200).allSatisfy { bits.contains(reply: 0, item: $0) })
        #expect(!bits.contains(reply: 0, item: 200))
    }

    @Test func aNewOpeningForgetsEveryImpression() {
        var bits = ImpressionBits()
        _ = bits.insert(reply: 1, item: 1)
        bits.removeAll()
        #expect(!bits.contains(reply: 1, item: 1))
        let again = bits.insert(reply: 1, item: 1)
        #expect(again)
    }

    @Test func aPositionNoItemCanHaveIsNeverMarked() {
        var bits = ImpressionBits()
        let negative = bits.insert(reply: 0, item: -1)
        #expect(!negative)
        #expect(!bits.contains(reply: 0, item: -1))
        let huge = bits.insert(reply: .max, item: 0)
        #expect(!huge, "a reply index past Int is no reply")
        #expect(!bits.contains(reply: .max, item: 0))
    }
}
