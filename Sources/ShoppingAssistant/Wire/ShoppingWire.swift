import Foundation

// MARK: - Shopping API wire models (wire.md § Shopping API). Keep every shape here, so that
// adapting to the real service is a local change.

/// `runtimeContext`, sent with every Shopping API call (S2, S3, D14).
struct ShoppingRuntimeContext: Encodable, Hashable, Sendable {
    var tenantId: String
    var uid: String
    var selector: String
    var campaignId: String?
    var page: PageContext

    private enum CodingKeys: String, CodingKey {
        case tenantId = "tenant_id"
        case uid, selector, campaignId, page
    }
}

struct ShoppingMessageRequest: Encodable, Hashable, Sendable {
    var threadId: String
    var messageId: String
    var resourceId: String
    var text: String
    var runtimeContext: ShoppingRuntimeContext
}

struct ShoppingFeedbackRequest: Encodable, Hashable, Sendable {
    var threadId: String
    var messageId: String
    var resourceId: String
    var rating: String
    var runtimeContext: ShoppingRuntimeContext
}

/// A product as the reply carried it, with its tracking URLs, which never leave the engine (PR2).
struct ReplyProduct: Sendable, Hashable {
    let itemId: String
    let name: String
    let sku: String?
    let url: String?
    let imageUrl: String?
    let price: AssistantPrice?
    let oldPrice: AssistantPrice?
    let currency: String?
    let category: String?
    let brand: String?
    let extra: [String: JSONValue]
    /// Tracking URLs by event type (`click`, `visible_impression`), valid http(s) only (AN5).
    let tracking: [String: [String]]

    var canOpen: Bool { !(sku ?? "").isEmpty || !(url ?? "").isEmpty }

    private static let known: Set<String> = [
        "itemId", "name", "sku", "url", "imageUrl", "price", "oldPrice", "currency", "category", "brand", "events",
    ]

    /// Lenient item decoding (PR1): `nil` only when `itemId` or `name` is missing or not a string.
    init?(json: JSONValue) {
        guard let object = json.objectValue, let itemId = Self.text(object["itemId"]), !itemId.isEmpty,
            let name = object["name"]?.stringValue
        else { return nil }
        self.itemId = itemId
        self.name = name
        sku = Self.text(object["sku"])
        url = object["url"]?.stringValue
        imageUrl = object["imageUrl"]?.stringValue
        price = Self.price(object["price"])
        oldPrice = Self.price(object["oldPrice"])
        currency = object["currency"]?.stringValue
        category = object["category"]?.stringValue
        brand = object["brand"]?.stringValue
        extra = object.filter { !Self.known.contains($0.key) }
        tracking = TrackingEvents.urlsByType(object["events"])
    }

    /// The host's view of this product under a given ref.
    func product(ref: AssistantProductRef) -> AssistantProduct {
        AssistantProduct(
            itemId: itemId, ref: ref, name: name, sku: sku, url: url, imageUrl: imageUrl, price: price,
            oldPrice: oldPrice, currency: currency, category: category, brand: brand, extra: extra)
    }

    /// IDs may arrive as numbers; a SKU or item ID of 123 is "123", byte for byte as printed.
    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: return text
        case .number(let number)?: return AssistantPrice.amount(number).description
        default: return nil
        }
    }

    private static func price(_ value: JSONValue?) -> AssistantPrice? {
        switch value {
        case .number(let number)?: return .amount(number)
        case .string(let text)? where !text.isEmpty: return .text(text)
        default: return nil
        }
    }
}

/// `events: [{type, urls}]` of products, replies and contents.
enum TrackingEvents {
    /// Valid http(s) URLs by type; malformed entries are skipped (wire.md leniency).
    static func urlsByType(_ value: JSONValue?) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for event in value?.arrayValue ?? [] {
            guard let type = event["type"]?.stringValue else { continue }
            let urls = (event["urls"]?.arrayValue ?? []).compactMap(\.stringValue).filter(isTrackable)
            result[type, default: []] += urls
        }
        return result
    }

    static func isTrackable(_ string: String) -> Bool {
        guard let url = URL(string: string), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else { return false }
        return true
    }
}

/// A decoded assistant reply, from `/v1/messages` or from history (D5).
struct ReplyContent: Sendable, Hashable {
    let assistantMessageId: String?
    let replyTo: String?
    let text: String
    let productsTitle: String?
    /// `nil` when the reply has no `products`; an empty array for an empty block (PR2).
    let products: [ReplyProduct]?
    let suggests: [String]
    let buttons: [[String: JSONValue]]
    let impressionURLs: [String]
    /// Items and buttons dropped as malformed, for diagnostics.
    let diagnostics: [String]

    /// Decodes leniently: only a non-object envelope fails (`nil`). `idKey` is
    /// `assistantMessageId` for `/v1/messages` and `id` for history messages.
    init?(json: JSONValue, idKey: String) {
        guard let object = json.objectValue else { return nil }
        var diagnostics: [String] = []
        assistantMessageId = object[idKey]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        replyTo = object["replyTo"]?.stringValue ?? object["messageId"]?.stringValue
        text = object["text"]?.stringValue ?? ""
        if let block = object["products"]?.objectValue {
            productsTitle = block["title"]?.stringValue
            let items = block["items"]?.arrayValue ?? []
            var products: [ReplyProduct] = []
            for (index, item) in items.enumerated() {
                if let product = ReplyProduct(json: item) {
                    products.append(product)
                } else {
                    diagnostics.append("dropped product #\(index): itemId and name are required")
                }
            }
            self.products = products
        } else {
            productsTitle = nil
            products = nil
        }
        let ui = object["ui"]?.objectValue
        suggests = (ui?["suggests"]?.arrayValue ?? []).compactMap(\.stringValue)
        var buttons: [[String: JSONValue]] = []
        for (index, button) in (ui?["buttons"]?.arrayValue ?? []).enumerated() {
            if let object = button.objectValue, object["action"]?.stringValue != nil {
                buttons.append(object)
            } else {
                diagnostics.append("dropped button #\(index): not an object with an action")
            }
        }
        self.buttons = buttons
        impressionURLs = TrackingEvents.urlsByType(object["events"])["impression"] ?? []
        self.diagnostics = diagnostics
    }
}

/// One history entry (wire.md § GET history).
struct HistoryMessage: Sendable, Hashable {
    let id: String?
    let role: String
    let replyTo: String?
    let json: JSONValue
}
