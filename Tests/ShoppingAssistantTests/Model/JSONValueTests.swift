import Foundation
import ShoppingAssistant
import Testing

@Suite(.timeLimit(.minutes(2))) struct JSONValueTests {
    // covers: AC1
    @Test func representsEveryJSONKindAndRoundTripsIt() throws {
        let text = #"{"a":null,"b":true,"c":1.5,"d":"текст","e":[1,"x",false],"f":{"g":{}}}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(value["a"] == .null)
        #expect(value["b"] == .bool(true))
        #expect(value["c"] == .number(1.5))
        #expect(value["d"] == .string("текст"))
        #expect(value["e"] == .array([.number(1), .string("x"), .bool(false)]))
        #expect(value["f"] == .object(["g": .object([:])]))
        let again = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
        #expect(again == value)
    }

    // covers: AC1
    @Test func everyActionKindCarriesItsData() throws {
        let support: [String: JSONValue] = ["action": "open_support_chat", "value": "Поддержка", "topic": "gifts"]
        let custom: [String: JSONValue] = ["action": "add_to_cart", "sku": "KIT-1001"]
        let follow: [String: JSONValue] = ["action": "follow_url", "url": "https://shop.example/delivery"]
        #expect(AssistantAction(button: support) == .openSupportChat(payload: support))
        #expect(AssistantAction(button: custom) == .custom(type: "add_to_cart", payload: custom))
        #expect(
            AssistantAction(button: follow) == .followUrl(try #require(URL(string: "https://shop.example/delivery"))))
        #expect(AssistantAction.openSupportChat(payload: support).name == "open_support_chat")
        #expect(AssistantAction.custom(type: "add_to_cart", payload: custom).name == "add_to_cart")
    }
}
