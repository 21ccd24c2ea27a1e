import Foundation
import Testing

@testable import ShoppingAssistant

/// Tracking URLs as a reply holds them: the text is made where the URL is requested, and two
/// URLs are equal when their texts are, however each is held.
@Suite struct TrackingURLTests {
    private static let reply = ReplyContent(
        json: [
            "assistantMessageId": "a-1", "text": "",
            "products": [
                "items": [
                    [
                        "itemId": "1", "name": "Kit",
                        "events": [
                            [
                                "type": "visible_impression",
                                "urls": ["https://t.example/i?x=1", "https://t.example/i?x=2"],
                            ],
                            ["type": "click", "urls": ["https://t.example/i?x=1"]],
                        ],
                    ]
                ]
            ],
        ], idKey: .assistantMessageId)

    @Test func aStoredURLReadsAsItsTextAndEqualsTheSameTextGiven() throws {
        let product = try #require(Self.reply?.products?.first)
        let impressions = product.visibleImpressionTrackingURLs
        #expect(impressions.map(\.string) == product.visibleImpressionURLs)
        #expect(impressions.map(\.string) == ["https://t.example/i?x=1", "https://t.example/i?x=2"])
        let click = try #require(product.clickTrackingURLs.first)
        #expect(click == impressions[0], "stored twice, one text: equal")
        #expect(click != impressions[1])
        #expect(click == TrackingURL("https://t.example/i?x=1"), "stored and given, one text: equal")
        #expect(click.hashValue == TrackingURL("https://t.example/i?x=1").hashValue)
        #expect(Set([click, impressions[0], TrackingURL("https://t.example/i?x=1")]).count == 1)
    }

    // A request sends bytes: two spellings Swift's `String` calls equal are two URLs, so
    // equality stays transitive and AN5's set agrees with its list. (A reply stores only valid
    // http(s) URLs, ASCII by then; Gravity's content and tests give strings.)
    @Test func urlsAreEqualByTheirBytesNotByCanonicalEquivalence() {
        let precomposed = "https://t.example/caf\u{E9}"
        let decomposed = "https://t.example/cafe\u{301}"
        #expect(precomposed == decomposed, "as Strings, one text")
        #expect(TrackingURL(precomposed) != TrackingURL(decomposed))
        #expect(TrackingURL(precomposed) == TrackingURL(precomposed))
        #expect(Set([TrackingURL(precomposed), TrackingURL(decomposed), TrackingURL(precomposed)]).count == 2)
    }
}
