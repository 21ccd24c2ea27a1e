import Foundation

/// Wire payloads shaped as wire.md shows them, built once per run.
enum BenchFixtures {
    static let apiKey = "bench-key"
    static let section = "bench"
    static let uid = "bench-u-1"
    static let assistantSelector = "shopping-assistant"
    static let page = "app://product/SKU-1001"

    static let configurationJSON =
        #"{"enabled":true,"title":"Помощник магазина","subtitle":"Помогу выбрать подходящий товар.","suggests":["Помогите выбрать подарок","Что взять в поход?"]}"#

    /// A `/choose` answer carrying the assistant configuration and the user.
    static let chooseBody: Data = json([
        "data": [
            [
                "selector": assistantSelector,
                "payload": [
                    [
                        "campaignId": "c-1", "experienceId": "e-1", "variationId": "v-1", "decisionId": "d-1",
                        "contents": [
                            [
                                "contentId": "ct-1", "deliveryMethod": "inline", "contentType": "custom",
                                "custom": ["json": configurationJSON],
                                "events": [["type": "load", "urls": ["https://t.bench.example/l?d=d-1"]]],
                            ]
                        ],
                    ]
                ],
            ]
        ],
        "user": ["uid": uid, "ses": "s-1"],
    ])

    /// A `/visit` or `/event` answer.
    static let eventBody: Data = json(["user": ["uid": uid, "ses": "s-1"], "campaigns": [Any]()])

    /// A `/v1/messages` reply with `products` products, text, suggests, two buttons and a
    /// reply impression, each product as complete as a shop sends it (two tracking events,
    /// three URLs, prices, and two fields the engine keeps as extras).
    static func reply(products count: Int, assistantMessageId: String = "am-1") -> Data {
        let items: [[String: Any]] = (0..<count).map { index in
            let id = "p-\(1000 + index)"
            return [
                "itemId": id, "name": "Термокружка Hot&Cold \(index + 1), 450 мл",
                "sku": "SKU-\(1000 + index)", "url": "https://shop.example/p/SKU-\(1000 + index)",
                "imageUrl": "https://cdn.shop.example/i/\(1000 + index).jpg",
                "price": 1990 + index * 10, "oldPrice": 2490 + index * 10, "currency": "RUB",
                "category": "Посуда", "brand": "Hot&Cold", "rating": 4.7, "badges": ["new", "gift"],
                "events": [
                    ["type": "visible_impression", "urls": ["https://t.shop.example/vi?i=\(id)"]],
                    [
                        "type": "click",
                        "urls": ["https://t.shop.example/c?i=\(id)", "https://t2.shop.example/c?i=\(id)"],
                    ],
                ],
            ]
        }
        return json([
            "threadId": "t-1", "messageId": "m-1", "assistantMessageId": assistantMessageId,
            "text": "Вот несколько идей до 3000 ₽: термокружки держат тепло до восьми часов.",
            "products": ["title": "Подарки до 3000 ₽", "items": items],
            "ui": [
                "suggests": ["Покажи дешевле", "А для мужчины?"],
                "buttons": [
                    [
                        "type": "button", "value": "Написать в поддержку", "action": "open_support_chat",
                        "topic": "gifts",
                    ],
                    [
                        "type": "button", "value": "Условия доставки", "action": "follow_url",
                        "url": "https://shop.example/delivery",
                    ],
                ],
            ],
            "events": [["type": "impression", "urls": ["https://t.shop.example/ri?m=\(assistantMessageId)"]]],
        ])
    }

    /// Replies numbered `am-1`, `am-2`, … as a server numbers them, spliced from one template
    /// so that making one costs next to nothing.
    static func numberedReplies(products count: Int) -> @Sendable (Int) -> Data {
        let marker = Data("@@assistant-message-id@@".utf8)
        var template = reply(products: count, assistantMessageId: "@@assistant-message-id@@")[...]
        var pieces: [Data] = []
        while let range = template.range(of: marker) {
            pieces.append(Data(template[..<range.lowerBound]))
            template = template[range.upperBound...]
        }
        pieces.append(Data(template))
        let parts = pieces
        return { number in
            let id = Data("am-\(number)".utf8)
            return parts.dropFirst().reduce(parts[0]) { $0 + id + $1 }
        }
    }

    private static func json(_ object: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    }
}

// MARK: - The plain wire model

/// The reply as a plain `Codable` model: what an app that only decodes the wire format would
/// write. It is the baseline the engine's reply processing is compared with.
struct WireReply: Codable, Sendable {
    struct Products: Codable, Sendable {
        var title: String?
        var items: [WireProduct]
    }

    struct UI: Codable, Sendable {
        var suggests: [String]?
        var buttons: [Button]?
    }

    struct Button: Codable, Sendable {
        var type: String?
        var value: String?
        var action: String
        var url: String?
        var topic: String?
    }

    var threadId: String?
    var messageId: String?
    var assistantMessageId: String?
    var text: String
    var products: Products?
    var ui: UI?
    var events: [WireEvent]?
}

struct WireProduct: Codable, Sendable {
    var itemId: String
    var name: String
    var sku: String?
    var url: String?
    var imageUrl: String?
    var price: Double?
    var oldPrice: Double?
    var currency: String?
    var category: String?
    var brand: String?
    var rating: Double?
    var badges: [String]?
    var events: [WireEvent]?
}

struct WireEvent: Codable, Sendable {
    var type: String
    var urls: [String]
}
