import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// Wire fixtures shaped exactly as wire.md shows them.
enum Fixtures {
    static let apiKey = "test-key-SECRET"
    static let section = "shop-1"
    static let assistantSelector = "shopping-assistant"
    static let productPage = PageContext(type: .product, data: ["SKU-123"], location: "app://product/SKU-123")
    static let homePage = PageContext(type: .homepage, location: "app://home")

    static let configurationJSON =
        #"{"enabled":true,"title":"Помощник магазина","subtitle":"Помогу выбрать подходящий товар.","suggests":["Помогите выбрать подарок"]}"#

    /// A `/choose` response with one campaign holding `customJSON`, and the given user.
    static func choose(
        customJSON: String? = configurationJSON, uid: String? = "u-8f3c", ses: String? = "s-1",
        selector: String = assistantSelector, campaignId: String = "c-1"
    ) -> HTTPResponse {
        var content: [String: Any] = [
            "contentId": "ct-1", "deliveryMethod": "inline", "contentType": "custom",
            "events": [["type": "load", "urls": ["https://evs-01.gravityfield.ai/t/l?d=d-1"]]],
        ]
        if let customJSON { content["custom"] = ["json": customJSON] }
        var body: [String: Any] = [
            "data": [
                [
                    "selector": selector,
                    "payload": [
                        [
                            "campaignId": campaignId, "experienceId": "e-1", "variationId": "v-1", "decisionId": "d-1",
                            "contents": [content],
                        ]
                    ],
                ]
            ]
        ]
        if let uid { body["user"] = ["uid": uid, "ses": ses ?? "s-1"] }
        return .json(200, body)
    }

    /// A `/choose` response where nothing matched (C5).
    static func chooseEmpty(uid: String? = "u-8f3c") -> HTTPResponse {
        var body: [String: Any] = ["data": []]
        if let uid { body["user"] = ["uid": uid, "ses": "s-1"] }
        return .json(200, body)
    }

    /// An empty `/visit` or `/event` response.
    static func eventResponse(uid: String = "u-8f3c", campaigns: [[String: Any]] = []) -> HTTPResponse {
        .json(200, ["user": ["uid": uid, "ses": "s-1"], "campaigns": campaigns])
    }

    /// A `/v1/messages` reply to `messageId`, with products and buttons as in wire.md.
    static func reply(
        to messageId: String, threadId: String = "t", assistantMessageId: String? = "am-17",
        items: [[String: Any]] = [product()], buttons: [[String: Any]] = defaultButtons,
        suggests: [String] = ["Покажи дешевле", "А для мужчины?"]
    ) -> HTTPResponse {
        var body: [String: Any] = [
            "threadId": threadId, "messageId": messageId, "text": "Вот несколько идей до 3000 ₽.",
            "products": ["title": "Подарки до 3000 ₽", "items": items],
            "ui": ["suggests": suggests, "buttons": buttons],
            "events": [["type": "impression", "urls": ["https://t.example/ri?m=am-17"]]],
        ]
        if let assistantMessageId { body["assistantMessageId"] = assistantMessageId }
        return .json(200, body)
    }

    static var defaultButtons: [[String: Any]] {
        [
            ["type": "button", "value": "Написать в поддержку", "action": "open_support_chat", "topic": "gifts"],
            [
                "type": "button", "value": "Условия доставки", "action": "follow_url",
                "url": "https://shop.example/delivery",
            ],
        ]
    }

    static func product(
        itemId: String = "p-1", sku: String? = "SKU-123", url: String? = "https://shop.example/p/SKU-123",
        clickURLs: [String] = ["https://t.example/c?i=p-1", "https://t2.example/c?i=p-1"],
        impressionURLs: [String] = ["https://t.example/vi?i=p-1"]
    ) -> [String: Any] {
        var item: [String: Any] = [
            "itemId": itemId, "name": "Термокружка", "imageUrl": "https://shop.example/i/1.jpg", "price": 1990,
            "oldPrice": 2490, "currency": "RUB", "category": "Посуда", "brand": "Hot&Cold",
            "events": [
                ["type": "visible_impression", "urls": impressionURLs], ["type": "click", "urls": clickURLs],
            ],
        ]
        if let sku { item["sku"] = sku }
        if let url { item["url"] = url }
        return item
    }

    /// A history response holding `messageId` and, if given, the assistant's reply to it —
    /// between replies to other messages, before and after it, so only the reply whose
    /// `replyTo` is `messageId` may be adopted (D5).
    static func history(threadId: String, messageId: String, replyId: String?) -> HTTPResponse {
        var messages: [[String: Any]] = [
            ["id": "m-earlier", "role": "user", "text": "Раньше"],
            ["id": "am-earlier", "role": "assistant", "replyTo": "m-earlier", "text": "Ответ на другое"],
            ["id": messageId, "role": "user", "text": "Помогите выбрать подарок"],
        ]
        if let replyId {
            messages.append([
                "id": replyId, "role": "assistant", "replyTo": messageId, "text": "Из истории",
                "products": ["title": "Подарки", "items": [product()]],
            ])
        }
        messages.append(["id": "am-other", "role": "assistant", "replyTo": "m-elsewhere", "text": "Тоже не то"])
        return .json(200, ["threadId": threadId, "messages": messages])
    }

    static func errorBody(_ status: Int, code: String) -> HTTPResponse {
        .json(status, ["error": ["code": code, "message": "server says no"]])
    }

    /// The JSON object of a request body.
    static func body(_ request: HTTPRequest?) -> [String: Any] {
        guard let data = request?.body,
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }
}
