import Foundation
import Testing

@testable import ShoppingAssistant

@Suite(.timeLimit(.minutes(2))) struct ProductModelTests {
    private static let ref = AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 1, item: 0)

    // covers: PR1
    @Test func productRequiresItemIdAndNameOnly() throws {
        #expect(ReplyProduct(json: ["name": "Mug"]) == nil)
        #expect(ReplyProduct(json: ["itemId": "p-1"]) == nil)
        #expect(ReplyProduct(json: ["itemId": "", "name": "Mug"]) == nil)
        #expect(ReplyProduct(json: ["itemId": "p-1", "name": 5]) == nil)
        #expect(ReplyProduct(json: "p-1") == nil)
        let bare = try #require(ReplyProduct(json: ["itemId": "p-1", "name": "Mug"]))
        #expect(bare.itemId == "p-1")
        #expect(bare.name == "Mug")
        // Numeric item IDs are kept as printed.
        let numeric = try #require(ReplyProduct(json: ["itemId": 123, "name": "Mug", "sku": 456]))
        #expect(numeric.itemId == "123")
        #expect(numeric.sku == "456")
    }

    // covers: PR1
    @Test func missingPictureOrPriceOrCategoryNeverDropsTheProduct() throws {
        let json: JSONValue = ["itemId": "p-1", "name": "Mug", "sku": "SKU-1", "imageUrl": nil, "price": nil]
        let product = try #require(ReplyProduct(json: json))
        #expect(product.imageUrl == nil)
        #expect(product.price == nil)
        #expect(product.oldPrice == nil)
        #expect(product.category == nil)
        #expect(product.brand == nil)
        #expect(product.currency == nil)

        let reply = try #require(
            ReplyContent(
                json: [
                    "assistantMessageId": "am-1", "text": "t",
                    "products": [
                        "title": "Gifts",
                        "items": [
                            ["itemId": "p-1", "name": "No picture", "sku": "S-1"],
                            ["itemId": "p-2", "name": "No price or category", "url": "https://shop.example/p/2"],
                            ["name": "no item id"],
                        ],
                    ],
                ], idKey: .assistantMessageId))
        #expect(reply.products?.map(\.itemId) == ["p-1", "p-2"])
        #expect(reply.diagnostics.count == 1)
    }

    // covers: PR1
    @Test func canOpenIsTrueWithSkuOrUrlAndFalseWithNeither() throws {
        let both = try #require(
            ReplyProduct(json: ["itemId": "1", "name": "A", "sku": "S", "url": "https://s.example/1"]))
        let skuOnly = try #require(ReplyProduct(json: ["itemId": "2", "name": "B", "sku": "S"]))
        let urlOnly = try #require(ReplyProduct(json: ["itemId": "3", "name": "C", "url": "https://s.example/3"]))
        let neither = try #require(ReplyProduct(json: ["itemId": "4", "name": "D"]))
        let empty = try #require(ReplyProduct(json: ["itemId": "5", "name": "E", "sku": "", "url": ""]))
        #expect(both.canOpen)
        #expect(skuOnly.canOpen)
        #expect(urlOnly.canOpen)
        #expect(!neither.canOpen)
        #expect(!empty.canOpen)
        // The host sees the same answer.
        #expect(skuOnly.product(ref: Self.ref).canOpen)
        #expect(skuOnly.product(ref: Self.ref).url == nil)
        #expect(!neither.product(ref: Self.ref).canOpen)
    }

    // covers: PR1
    @Test func pricesMayBeNumbersOrStrings() throws {
        let numeric = try #require(ReplyProduct(json: ["itemId": "1", "name": "A", "price": 1990, "oldPrice": 2490.5]))
        #expect(numeric.price == .amount(1990))
        #expect(numeric.oldPrice == .amount(2490.5))
        #expect(numeric.price?.description == "1990")
        #expect(numeric.oldPrice?.description == "2490.50")
        let text = try #require(
            ReplyProduct(json: ["itemId": "1", "name": "A", "price": "1 990 ₽", "oldPrice": "2 490 ₽"]))
        #expect(text.price == .text("1 990 ₽"))
        #expect(text.oldPrice == .text("2 490 ₽"))
        // A price of another shape is dropped, not the product.
        let odd = try #require(ReplyProduct(json: ["itemId": "1", "name": "A", "price": ["value": 1]]))
        #expect(odd.price == nil)
    }

    // covers: PR1, PR2
    @Test func extraFieldsAreKeptAndTrackingStaysInsideTheEngine() throws {
        let json: JSONValue = [
            "itemId": "p-1", "name": "Mug", "sku": "SKU-1", "url": "https://shop.example/p/1",
            "imageUrl": "https://shop.example/i/1.jpg", "price": 1990, "currency": "RUB", "category": "Dishes",
            "brand": "Hot&Cold", "color": "red", "sizes": ["S", "M"], "rating": ["stars": 4.5],
            "events": [["type": "click", "urls": ["https://t.example/c"]]],
        ]
        let reply = try #require(ReplyProduct(json: json))
        let product = reply.product(ref: Self.ref)
        #expect(product.extra == ["color": "red", "sizes": ["S", "M"], "rating": ["stars": 4.5]])
        #expect(product.extra["events"] == nil)
        #expect(product.imageUrl == "https://shop.example/i/1.jpg")
        #expect(product.category == "Dishes")
        #expect(product.brand == "Hot&Cold")
        #expect(product.currency == "RUB")
        #expect(product.ref == Self.ref)
        // The engine keeps the tracking URLs for itself.
        #expect(reply.tracking.clickURLs == ["https://t.example/c"])
    }

    // covers: AN5
    @Test func onlyValidHttpTrackingUrlsAreKept() throws {
        let json: JSONValue = [
            "itemId": "p-1", "name": "Mug",
            "events": [
                [
                    "type": "click",
                    "urls": ["https://t.example/c", "ftp://t.example/c", "not a url", 7, "http://t2.example/c"],
                ],
                ["type": "visible_impression", "urls": "https://t.example/vi"],
                ["urls": ["https://t.example/untyped"]],
            ],
        ]
        let product = try #require(ReplyProduct(json: json))
        #expect(product.tracking.clickURLs == ["https://t.example/c", "http://t2.example/c"])
        #expect(product.tracking.visibleImpressionURLs == [])
        #expect(
            !(product.tracking.clickURLs + product.tracking.visibleImpressionURLs).contains("https://t.example/untyped")
        )
    }

    // covers: PR2
    @Test func emptyItemsGiveAnEmptyBlockAndMissingProductsGiveNone() throws {
        let empty = try #require(
            ReplyContent(
                json: ["text": "Nothing found", "products": ["title": "Gifts", "items": []]],
                idKey: .assistantMessageId))
        #expect(empty.products == [])
        #expect(empty.productsTitle == "Gifts")
        let none = try #require(ReplyContent(json: ["text": "Hello"], idKey: .assistantMessageId))
        #expect(none.products == nil)
    }

    // covers: AC3
    @Test func followUrlWithHttpUrlRoutesToFollowUrl() {
        let https: [String: JSONValue] = [
            "type": "button", "action": "follow_url", "url": "https://shop.example/delivery",
        ]
        let http: [String: JSONValue] = ["action": "follow_url", "url": "http://shop.example/delivery"]
        #expect(AssistantAction(button: https) == .followUrl(URL(string: "https://shop.example/delivery")!))
        #expect(AssistantAction(button: http) == .followUrl(URL(string: "http://shop.example/delivery")!))
    }

    // covers: AC3
    @Test func followUrlWithoutValidHttpUrlIsNotOffered() {
        let cases: [[String: JSONValue]] = [
            ["action": "follow_url"],
            ["action": "follow_url", "url": nil],
            ["action": "follow_url", "url": 42],
            ["action": "follow_url", "url": ""],
            ["action": "follow_url", "url": "ftp://shop.example/file"],
            ["action": "follow_url", "url": "javascript:alert(1)"],
            ["action": "follow_url", "url": "shop.example/delivery"],
        ]
        for button in cases {
            #expect(AssistantAction(button: button) == nil, "\(button)")
        }
    }

    // covers: AC2, AC3
    @Test func supportChatCarriesTheRawButtonObjectUnchanged() {
        let button: [String: JSONValue] = [
            "type": "button", "value": "Write to support", "action": "open_support_chat", "topic": "gifts",
            "snake_case_key": true, "nested": ["a": [1, 2]], "empty": nil,
        ]
        #expect(AssistantAction(button: button) == .openSupportChat(payload: button))
        #expect(AssistantAction(button: button)?.name == "open_support_chat")
    }

    // covers: AC2, AC3
    @Test func anyOtherActionIsCustomWithTheRawButtonObject() {
        let button: [String: JSONValue] = [
            "type": "button", "value": "Compare", "action": "compare_products", "items": ["p-1"],
        ]
        #expect(AssistantAction(button: button) == .custom(type: "compare_products", payload: button))
        #expect(AssistantAction(button: button)?.name == "compare_products")
        // Without an action string it is not a button.
        #expect(AssistantAction(button: ["type": "button", "value": "?"]) == nil)
        #expect(AssistantAction(button: ["action": ""]) == nil)
        #expect(AssistantAction(button: ["action": 3]) == nil)
    }
}

@Suite(.timeLimit(.minutes(2))) struct TrackingStaysInsideTheEngineTests {
    // covers: AN6, PR2
    @Test func productsHandedToTheHostCarryNoTrackingURLs() throws {
        let body = Fixtures.body(
            HTTPRequest(method: .post, url: try #require(URL(string: "https://x")), body: ProductFixtures.reply().body))
        let json = try JSONDecoder().decode(JSONValue.self, from: JSONSerialization.data(withJSONObject: body))
        let reply = try #require(ReplyContent(json: json, idKey: .assistantMessageId))
        let product = try #require(reply.products?.first).product(
            ref: AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: 0))
        // The host gets no events and no URL of either tracking kind, so it cannot call or rebuild them.
        #expect(product.extra["events"] == nil)
        let visible = String(describing: product)
        for url in [ProductFixtures.clickA, ProductFixtures.clickB, ProductFixtures.impression] {
            #expect(!visible.contains(url))
        }
        #expect(product.url == "https://shop.example/p/SKU-123")
    }
}
