import Foundation
import Testing

@testable import ShoppingAssistant

/// Product extras (PR1) and button payloads (AC2) stay JSON text until read, and read as
/// exactly what decoding them at once gives.
@Suite(.timeLimit(.minutes(2))) struct LazyExtrasTests {
    static let known: Set<String> = [
        "itemId", "name", "sku", "url", "imageUrl", "price", "oldPrice", "currency", "category", "brand", "events",
    ]
    static let ref = AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: 0)

    static let item = #"""
        {"itemId": "p-1", "name": "Mug", "color": "red", "sizes": ["S", {"M": null}], "rating": {"stars": 4.5},
         "price": 10, "color": "blue", "flag": true, "note": "\u0416\n", "events": [], "nothing": null, "n": -1e-3}
        """#

    static func reply(items: [String]) throws -> ReplyContent {
        let body = #"{"products":{"items":[\#(items.joined(separator: ","))]}}"#
        return try #require(ReplyDecoder.decode(Array(body.utf8), idKey: .assistantMessageId))
    }

    /// The extras as an eager decoder sees them: the whole item as a tree, known fields removed.
    static func eagerExtras(_ item: String) throws -> [String: JSONValue] {
        try #require(try JSONValue(parsing: Array(item.utf8)).objectValue).filter { !known.contains($0.key) }
    }

    // covers: PR1
    @Test func extrasReadAsTheEagerlyDecodedUnknownFields() throws {
        let product = try #require(try Self.reply(items: [Self.item]).products?.first)
        let expected = try Self.eagerExtras(Self.item)
        #expect(product.extra == expected)
        #expect(product.extra["color"] == "blue", "the last duplicate wins, as in the eager tree")
        #expect(product.product(ref: Self.ref).extra == expected)
        // A product handed to the host equals one built from the eager value, and hashes alike.
        let eager = AssistantProduct(
            itemId: "p-1", ref: Self.ref, name: "Mug", price: .amount(10), extra: expected)
        #expect(product.product(ref: Self.ref) == eager)
        #expect(product.product(ref: Self.ref).hashValue == eager.hashValue)
        #expect(String(describing: product.product(ref: Self.ref)).contains("blue"))
    }

    @Test func nothingIsDecodedUntilRead() throws {
        let reply = try Self.reply(items: [Self.item, Self.item])
        let products = try #require(reply.products)
        let storage = try #require(Mirror(reflecting: reply).descendant("storage") as? ReplyStorage)
        // Building the host's products, comparing and hashing them decodes nothing.
        let hostProducts = products.map { $0.product(ref: Self.ref) }
        #expect(hostProducts[0] == hostProducts[1], "the same text is the same object")
        #expect(products[0] == products[1])
        _ = Set(hostProducts)
        _ = reply.hashValue
        #expect(storage.decodedObjectCount == 0)
        // The first read decodes, the next ones reuse it.
        let first = hostProducts[0].extra
        #expect(storage.decodedObjectCount == 1)
        #expect(products[0].extra == first)
        #expect(storage.decodedObjectCount == 1)
        #expect(hostProducts[1].extra == first)
        #expect(storage.decodedObjectCount == 2)
    }

    @Test func productsOfDifferentRepliesCompareByValue() throws {
        let reordered =
            #"{"n": -0.001, "note": "Ж\n", "flag": true, "nothing": null, "rating": {"stars": 4.5}, "#
            + #""itemId": "p-1", "price": 10, "sizes": ["S", {"M": null}], "color": "blue", "name": "Mug"}"#
        let a = try #require(try Self.reply(items: [Self.item]).products?.first)
        let b = try #require(try Self.reply(items: [reordered]).products?.first)
        let c = try #require(
            try Self.reply(items: [#"{"itemId": "p-1", "name": "Mug", "price": 10, "color": "red"}"#])
                .products?.first)
        #expect(a == b)
        #expect(a.product(ref: Self.ref) == b.product(ref: Self.ref))
        #expect(a.product(ref: Self.ref).hashValue == b.product(ref: Self.ref).hashValue)
        #expect(a != c)
        #expect(a.product(ref: Self.ref) != c.product(ref: Self.ref))
    }

    @Test func anItemWithoutExtrasHasNone() throws {
        let product = try #require(try Self.reply(items: [#"{"itemId":"p","name":"n","events":[]}"#]).products?.first)
        #expect(product.extra.isEmpty)
        #expect(product.product(ref: Self.ref) == AssistantProduct(itemId: "p", ref: Self.ref, name: "n"))
    }

    // covers: AC2
    @Test func buttonPayloadsReadAsTheEagerlyDecodedObject() throws {
        let button = #"{"action": "add_to_cart", "sku": "KIT-1", "qty": 2, "meta": {"a": [true, null]}, "qty": 3}"#
        let reply = try #require(ReplyDecoder.decode(Array(#"{"ui":{"buttons":[\#(button)]}}"#.utf8), idKey: .id))
        let payload = try #require(try JSONValue(parsing: Array(button.utf8)).objectValue)
        #expect(reply.buttons.first?.payload == payload)
        #expect(reply.buttons.first?.action == .custom(type: "add_to_cart", payload: payload))
        #expect(payload["qty"] == 3)
    }

    @Test func extrasReadFromManyTasksAtOnceAgree() async throws {
        let product = try #require(try Self.reply(items: [Self.item]).products?.first).product(ref: Self.ref)
        let expected = try Self.eagerExtras(Self.item)
        let results = await withTaskGroup(of: [String: JSONValue].self) { group in
            for _ in 0..<8 { group.addTask { product.extra } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8)
        #expect(results.allSatisfy { $0 == expected })
    }
}
