import Foundation
import Testing

@testable import ShoppingAssistant

/// The reply decoder's leniency, rule by rule of wire.md: unknown fields ignored, optional
/// fields absent, `null` or of another type read as absent, a malformed item or button
/// dropped with a diagnostic, and only an envelope that is not a JSON object failing.
@Suite(.timeLimit(.minutes(2))) struct ReplyDecoderTests {
    static func decode(_ text: String, idKey: ReplyDecoder.IdentifierKey = .assistantMessageId) -> ReplyContent? {
        ReplyDecoder.decode(Array(text.utf8), idKey: idKey)
    }

    static func reply(
        _ text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ReplyContent {
        try #require(decode(text), sourceLocation: sourceLocation)
    }

    // MARK: - The envelope

    @Test(arguments: [
        "", "not json", "[1, 2]", "\"text\"", "null", "42", "{\"text\":\"a\"", "{\"text\":\"a\",}",
        "{\"text\":\"a\"} x", "{\"text\":\"a\",\"futureField\":[1,]}", "{\"products\":{\"items\":[{\"itemId\":01}]}}",
        "{\"ui\":{\"buttons\":[{\"action\":\"\\ud800\"}]}}", "{\"text\":\"\u{1}\"}",
    ])
    func onlyBytesThatAreNotAJSONObjectFailTheReply(_ body: String) {
        #expect(Self.decode(body) == nil, "\(body.debugDescription)")
    }

    @Test func aReplyOverTheSizeBoundIsRejectedUnread() {
        var body = [UInt8](repeating: 0x20, count: ReplyDecoder.maximumSize + 1)
        body.replaceSubrange(0..<2, with: Array("{}".utf8))
        #expect(ReplyDecoder.decode(body, idKey: .assistantMessageId) == nil)
        #expect(ReplyDecoder.decode(Array(body.dropLast()), idKey: .assistantMessageId) != nil)
    }

    @Test func numericIdsPrintAsPricesDoEvenWhenLong() throws {
        let reply = try Self.reply(#"{"products":{"items":[{"itemId":1e308,"name":"n","itemId":2,"sku":1e20}]}}"#)
        #expect(reply.products?.first?.itemId == "2")
        #expect(reply.products?.first?.sku == AssistantPrice.amount(1e20).description)
    }

    @Test func unknownFieldsAreIgnoredEverywhere() throws {
        let reply = try Self.reply(
            #"""
            {"futureField": {"x": [1, {"y": null}]}, "text": "t", "assistantMessageId": "am-1",
             "products": {"layout": "grid", "items": [{"itemId": "p", "name": "n"}]},
             "ui": {"theme": "dark", "suggests": ["s"], "buttons": []},
             "events": [{"type": "impression", "urls": ["https://t.example/i"], "weight": 2}]}
            """#)
        #expect(reply.text == "t")
        #expect(reply.assistantMessageId == "am-1")
        #expect(reply.products?.map(\.itemId) == ["p"])
        #expect(reply.suggests == ["s"])
        #expect(reply.impressionURLs == ["https://t.example/i"])
        #expect(reply.diagnostics.isEmpty)
    }

    @Test func optionalPartsMayBeAbsent() throws {
        let reply = try Self.reply("{}")
        #expect(reply.assistantMessageId == nil)
        #expect(reply.replyTo == nil)
        #expect(reply.text == "")
        #expect(reply.productsTitle == nil)
        #expect(reply.products == nil)
        #expect(reply.suggests.isEmpty)
        #expect(reply.buttons.isEmpty)
        #expect(reply.impressionURLs.isEmpty)
        #expect(reply.diagnostics.isEmpty)
    }

    @Test func optionalPartsThatAreNullOrOfAnotherTypeCountAsAbsent() throws {
        for value in ["null", "5", "true", "\"x\"", "[]", "{}"] {
            let reply = try Self.reply(
                #"{"assistantMessageId":\#(value),"text":\#(value),"replyTo":\#(value),"messageId":\#(value),"#
                    + #""ui":{"suggests":\#(value),"buttons":\#(value)},"events":\#(value)}"#)
            #expect(reply.assistantMessageId == (value == "\"x\"" ? "x" : nil), "\(value)")
            #expect(reply.text == (value == "\"x\"" ? "x" : ""), "\(value)")
            #expect(reply.replyTo == (value == "\"x\"" ? "x" : nil), "\(value)")
            #expect(reply.suggests.isEmpty, "\(value)")
            #expect(reply.buttons.isEmpty, "\(value)")
            #expect(reply.impressionURLs.isEmpty, "\(value)")
            #expect(reply.diagnostics.isEmpty, "\(value)")
        }
        for value in ["null", "5", "\"x\"", "[]"] {
            #expect(try Self.reply(#"{"products":\#(value)}"#).products == nil, "\(value)")
            #expect(try Self.reply(#"{"ui":\#(value)}"#).suggests.isEmpty, "\(value)")
        }
        // An empty assistant message ID is no ID (the reply cannot be rated, D11).
        #expect(try Self.reply(#"{"assistantMessageId":""}"#).assistantMessageId == nil)
    }

    @Test func replyToFallsBackToMessageId() throws {
        #expect(try Self.reply(#"{"messageId":"m-1"}"#).replyTo == "m-1")
        #expect(try Self.reply(#"{"messageId":"m-1","replyTo":"m-2"}"#).replyTo == "m-2")
        #expect(try Self.reply(#"{"replyTo":"m-2","messageId":"m-1"}"#).replyTo == "m-2")
        #expect(try Self.reply(#"{"replyTo":7,"messageId":"m-1"}"#).replyTo == "m-1")
    }

    @Test func duplicateNamesLastOneWins() throws {
        let reply = try Self.reply(
            #"""
            {"text": "first", "text": "second", "assistantMessageId": "am-1", "assistantMessageId": null,
             "products": {"items": [{"itemId": "a", "name": "A"}]},
             "products": {"title": "T", "items": [{"itemId": "b", "name": "B"}, 3], "items": [{"itemId": "c", "name": "C", "name": "D"}]},
             "ui": {"suggests": ["x"], "suggests": ["y", "z"]}}
            """#)
        #expect(reply.text == "second")
        #expect(reply.assistantMessageId == nil)
        #expect(reply.productsTitle == "T")
        #expect(reply.products?.map(\.itemId) == ["c"])
        #expect(reply.products?.first?.name == "D")
        #expect(reply.diagnostics.isEmpty, "the dropped item was in the overwritten list")
        #expect(reply.suggests == ["y", "z"])
    }

    @Test func escapesAndUnicodeAreDecodedInEveryField() throws {
        let reply = try Self.reply(
            #"""
            {"text": "\u0412\u043e\u0442 \"\u2116 1\"\n😀", "products": {"title": "\u041f\/", "items": [
              {"itemId": "p\u002d1", "name": "\u0416", "url": "https:\/\/shop.example\/p\/1",
               "events": [{"type": "cl\u0069ck", "urls": ["https:\/\/t.example\/c?a=1&b=\u0032"]}]}]},
             "ui": {"suggests": ["\ud83d\ude00"]}}
            """#)
        #expect(reply.text == "Вот \"№ 1\"\n😀")
        #expect(reply.productsTitle == "П/")
        let product = try #require(reply.products?.first)
        #expect(product.itemId == "p-1")
        #expect(product.name == "Ж")
        #expect(product.url == "https://shop.example/p/1")
        #expect(product.tracking.clickURLs == ["https://t.example/c?a=1&b=2"])
        #expect(reply.suggests == ["😀"])
    }

    // MARK: - Products (PR1, PR2)

    // covers: PR1
    @Test func malformedItemsAreDroppedWithADiagnosticNamingTheirPosition() throws {
        let reply = try Self.reply(
            #"""
            {"products": {"items": [
              {"itemId": "p-0", "name": "ok"}, "text", 7, null, [], {"name": "no id"}, {"itemId": "", "name": "empty id"},
              {"itemId": true, "name": "bool id"}, {"itemId": "p-8"}, {"itemId": "p-9", "name": 9},
              {"itemId": "p-10", "name": null}, {"itemId": 11, "name": "numeric id"}]}}
            """#)
        #expect(reply.products?.map(\.itemId) == ["p-0", "11"])
        #expect(
            reply.diagnostics == (1...10).map { "dropped product #\($0): itemId and name are required" })
    }

    // covers: PR1
    @Test func itemFieldsOtherThanItemIdAndNameMayBeMissingNullOrOfAnotherType() throws {
        let fields = ["sku", "url", "imageUrl", "price", "oldPrice", "currency", "category", "brand", "events"]
        for value in ["null", "true", "[1]", "{\"a\":1}"] {
            let members = fields.map { #""\#($0)":\#(value)"# }.joined(separator: ",")
            let reply = try Self.reply(#"{"products":{"items":[{"itemId":"p","name":"n",\#(members)}]}}"#)
            let product = try #require(reply.products?.first, "\(value)")
            #expect(product.sku == nil && product.url == nil && product.imageUrl == nil, "\(value)")
            #expect(product.price == nil && product.oldPrice == nil, "\(value)")
            #expect(product.currency == nil && product.category == nil && product.brand == nil, "\(value)")
            #expect(product.tracking == ReplyProduct.Tracking(clickURLs: [], visibleImpressionURLs: []))
            // Known fields never become extras, whatever their type.
            #expect(product.extra.isEmpty, "\(value)")
            #expect(!product.canOpen)
        }
    }

    // covers: PR1
    @Test func pricesAreNumbersOrNonEmptyStringsAndIdsMayBeNumbers() throws {
        let reply = try Self.reply(
            #"""
            {"products": {"items": [
              {"itemId": 1.5, "name": "a", "sku": 1e3, "price": 1990, "oldPrice": "2 490 ₽"},
              {"itemId": "b", "name": "b", "sku": "", "price": "", "oldPrice": -0.5}]}}
            """#)
        let products = try #require(reply.products)
        #expect(products[0].itemId == "1.50")
        #expect(products[0].sku == "1000")
        #expect(products[0].price == .amount(1990))
        #expect(products[0].oldPrice == .text("2 490 ₽"))
        #expect(products[0].canOpen)
        #expect(products[1].sku == "")
        #expect(products[1].price == nil)
        #expect(products[1].oldPrice == .amount(-0.5))
        #expect(!products[1].canOpen)
    }

    // covers: PR2
    @Test func anEmptyOrMissingItemListIsAnEmptyBlock() throws {
        #expect(try Self.reply(#"{"products":{}}"#).products == [])
        #expect(try Self.reply(#"{"products":{"items":[]}}"#).products == [])
        #expect(try Self.reply(#"{"products":{"items":null,"title":"T"}}"#).products == [])
        #expect(try Self.reply(#"{"products":{"items":null,"title":"T"}}"#).productsTitle == "T")
        #expect(try Self.reply(#"{"products":{"title":5}}"#).productsTitle == nil)
    }

    // MARK: - Tracking (AN5, AN7)

    // covers: AN5
    @Test func productTrackingKeepsValidHttpURLsOfClickAndVisibleImpressionInOrder() throws {
        let reply = try Self.reply(
            #"""
            {"products": {"items": [{"itemId": "p", "name": "n", "events": [
              {"type": "click", "urls": ["https://t.example/c1", "ftp://t.example/x", 7, null, "http://t2.example/c2"]},
              {"urls": ["https://t.example/untyped"]}, {"type": "visible_impression", "urls": "https://t.example/str"},
              {"urls": ["https://t.example/v1"], "type": "visible_impression"},
              {"type": "impression", "urls": ["https://t.example/reply-level"]}, "event", null,
              {"type": "click", "urls": ["https://t.example/c3"], "urls": ["https://t.example/c4"]},
              {"type": "click", "type": "other", "urls": ["https://t.example/other"]}]}]}}
            """#)
        let tracking = try #require(reply.products?.first?.tracking)
        #expect(tracking.clickURLs == ["https://t.example/c1", "http://t2.example/c2", "https://t.example/c4"])
        #expect(tracking.visibleImpressionURLs == ["https://t.example/v1"])
    }

    @Test func replyImpressionsAreTheValidURLsOfImpressionEvents() throws {
        let reply = try Self.reply(
            #"""
            {"events": [{"type": "impression", "urls": ["https://t.example/a", "javascript:x"]},
              {"type": "click", "urls": ["https://t.example/click"]}, {"type": "impression", "urls": ["http://t.example/b"]}]}
            """#)
        #expect(reply.impressionURLs == ["https://t.example/a", "http://t.example/b"])
    }

    // MARK: - Buttons (AC1–AC4)

    // covers: AC2, AC3
    @Test func buttonsAreRoutedWhenDecodedAndKeepTheirObjectAsThePayload() throws {
        let reply = try Self.reply(
            #"""
            {"ui": {"buttons": [
              {"type": "button", "value": "Поддержка", "action": "open_support_chat", "topic": "gifts", "nested": {"a": [1, null]}},
              {"value": "Доставка", "action": "follow_url", "url": "https:\/\/shop.example\/delivery"},
              {"action": "compare_products", "items": ["p-1", "p-2"]},
              {"action": "follow_url", "url": "ftp://shop.example/file", "value": "Файл"},
              {"action": "follow_url"}, {"action": ""}]}}
            """#)
        let buttons = reply.buttons
        #expect(buttons.count == 6)
        #expect(reply.diagnostics.isEmpty)
        let support: [String: JSONValue] = [
            "type": "button", "value": "Поддержка", "action": "open_support_chat", "topic": "gifts",
            "nested": ["a": [1, nil]],
        ]
        #expect(buttons[0].action == .openSupportChat(payload: support))
        #expect(buttons[0].title == "Поддержка")
        #expect(buttons[1].action == .followUrl(try #require(URL(string: "https://shop.example/delivery"))))
        #expect(buttons[1].title == "Доставка")
        #expect(
            buttons[2].action
                == .custom(type: "compare_products", payload: ["action": "compare_products", "items": ["p-1", "p-2"]]))
        #expect(buttons[2].title == "compare_products", "no value: the action's name")
        for button in buttons[3...] {
            #expect(button.route == .notOffered)
            #expect(button.action == nil)
        }
        #expect(buttons[3].actionName == "follow_url")
        #expect(buttons[5].actionName == "")
        // Routing at decode time agrees with routing the payload.
        for button in buttons {
            #expect(button.action == AssistantAction(button: button.payload), "\(button.payload)")
        }
    }

    @Test func malformedButtonsAreDroppedWithADiagnostic() throws {
        let reply = try Self.reply(
            #"""
            {"ui": {"buttons": [{"action": "open_support_chat"}, 42, "b", null, {"value": "no action"},
              {"action": 3}, {"action": null}, {"action": "x", "action": 5}, {"action": 5, "action": "custom_after"}]}}
            """#)
        #expect(reply.buttons.map(\.actionName) == ["open_support_chat", "custom_after"])
        #expect(reply.diagnostics == (1...7).map { "dropped button #\($0): not an object with an action" })
    }

    @Test func productDiagnosticsComeBeforeButtonDiagnostics() throws {
        let reply = try Self.reply(#"{"ui":{"buttons":[1]},"products":{"items":[2]}}"#)
        #expect(
            reply.diagnostics == [
                "dropped product #0: itemId and name are required", "dropped button #0: not an object with an action",
            ])
    }

    // MARK: - History (D5)

    @Test func historyKeepsMessagesWithARoleAndReadsTheAdoptedOneAsAReply() throws {
        let body = #"""
            {"threadId": "t", "messages": [
              {"id": "m-1", "role": "user", "text": "Q"}, {"id": "x", "text": "no role"}, "junk", {"role": 5},
              {"id": "am-1", "role": "assistant", "replyTo": "m-1", "text": "A", "assistantMessageId": "ignored",
               "products": {"items": [{"itemId": "p", "name": "n", "color": "red"}]}}]}
            """#
        let messages = try #require(HistoryDecoder.decode(Array(body.utf8)))
        #expect(messages.map(\.id) == ["m-1", "am-1"])
        #expect(messages.map(\.role) == ["user", "assistant"])
        #expect(messages.map(\.replyTo) == [nil, "m-1"])
        let reply = try #require(messages.last?.reply)
        #expect(reply.assistantMessageId == "am-1", "a history message's ID is `id`")
        #expect(reply.replyTo == "m-1")
        #expect(reply.text == "A")
        #expect(reply.products?.first?.extra == ["color": "red"])
    }

    @Test(arguments: [
        "", "[]", "{}", "{\"messages\":null}", "{\"messages\":{}}", "{\"messages\":[],\"messages\":5}",
        "{\"messages\":[1,]}", "{\"messages\":[]} 1",
    ])
    func historyWithoutAMessagesArrayIsRejected(_ body: String) {
        #expect(HistoryDecoder.decode(Array(body.utf8)) == nil, "\(body)")
    }
}
