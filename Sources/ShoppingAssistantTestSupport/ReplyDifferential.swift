import Foundation
import ShoppingAssistant

/// Compares the engine's byte-level reply decoder with a reference that first reads the same
/// bytes into a `JSONValue` tree and then applies wire.md's rules to the tree — the way the
/// engine decoded replies before; shared by the seeded test and the fuzzer.
///
/// The reference is deliberately naive: dictionary lookups, filters and maps, no shared code
/// with the decoder except `JSONValue(parsing:)` (itself checked against Foundation by
/// `JSONDifferential`) and the http(s) URL check.
package enum ReplyDifferential {
    /// `nil` when both agree, else what differs.
    package static func compare(_ bytes: [UInt8], historyMessage: Bool) -> String? {
        let decoded = WireFuzzing.decodeReply(bytes, historyMessage: historyMessage)
        let reference = (try? JSONValue(parsing: bytes)).flatMap {
            summary(json: $0, idKey: historyMessage ? "id" : "assistantMessageId")
        }
        guard let decoded, let reference else {
            if decoded == nil, reference == nil { return nil }
            let outcome = { (accepted: Bool) in accepted ? "accepted" : "rejected" }
            return "decoder \(outcome(decoded != nil)), reference \(outcome(reference != nil))"
        }
        if decoded == reference { return nil }
        var differences: [String] = []
        func note(_ name: String, _ same: Bool) { if !same { differences.append(name) } }
        note("assistantMessageId", decoded.assistantMessageId == reference.assistantMessageId)
        note("replyTo", decoded.replyTo == reference.replyTo)
        note("text", decoded.text == reference.text)
        note("productsTitle", decoded.productsTitle == reference.productsTitle)
        note("suggests", decoded.suggests == reference.suggests)
        note("impressionURLs", decoded.impressionURLs == reference.impressionURLs)
        note("diagnostics", decoded.diagnostics == reference.diagnostics)
        note("products", decoded.products == reference.products)
        note("buttons", decoded.buttons == reference.buttons)
        return "differs in \(differences.joined(separator: ", "))\n  decoder:   \(decoded)\n  reference: \(reference)"
    }

    // MARK: - The reference

    static func summary(json: JSONValue, idKey: String) -> WireFuzzing.ReplySummary? {
        guard let object = json.objectValue else { return nil }
        var diagnostics: [String] = []
        var products: [WireFuzzing.ReplySummary.Product]?
        var productsTitle: String?
        if let block = object["products"]?.objectValue {
            productsTitle = block["title"]?.stringValue
            products = []
            for (index, item) in (block["items"]?.arrayValue ?? []).enumerated() {
                if let product = product(item) {
                    products?.append(product)
                } else {
                    diagnostics.append("dropped product #\(index): itemId and name are required")
                }
            }
        }
        let ui = object["ui"]?.objectValue
        var buttons: [WireFuzzing.ReplySummary.Button] = []
        for (index, button) in (ui?["buttons"]?.arrayValue ?? []).enumerated() {
            guard let members = button.objectValue, let name = members["action"]?.stringValue else {
                diagnostics.append("dropped button #\(index): not an object with an action")
                continue
            }
            let action = AssistantAction(button: members)
            buttons.append(
                WireFuzzing.ReplySummary.Button(
                    payload: members, actionName: name, action: action,
                    title: action.map { members["value"]?.stringValue ?? $0.name }))
        }
        return WireFuzzing.ReplySummary(
            assistantMessageId: object[idKey]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
            replyTo: object["replyTo"]?.stringValue ?? object["messageId"]?.stringValue,
            text: object["text"]?.stringValue ?? "", productsTitle: productsTitle, products: products,
            suggests: (ui?["suggests"]?.arrayValue ?? []).compactMap(\.stringValue), buttons: buttons,
            impressionURLs: urlsByType(object["events"])["impression"] ?? [], diagnostics: diagnostics)
    }

    private static let knownItemFields: Set<String> = [
        "itemId", "name", "sku", "url", "imageUrl", "price", "oldPrice", "currency", "category", "brand", "events",
    ]

    private static func product(_ json: JSONValue) -> WireFuzzing.ReplySummary.Product? {
        guard let object = json.objectValue, let itemId = text(object["itemId"]), !itemId.isEmpty,
            let name = object["name"]?.stringValue
        else { return nil }
        let tracking = urlsByType(object["events"])
        return WireFuzzing.ReplySummary.Product(
            product: AssistantProduct(
                itemId: itemId, ref: WireFuzzing.productRef, name: name, sku: text(object["sku"]),
                url: object["url"]?.stringValue, imageUrl: object["imageUrl"]?.stringValue,
                price: price(object["price"]), oldPrice: price(object["oldPrice"]),
                currency: object["currency"]?.stringValue, category: object["category"]?.stringValue,
                brand: object["brand"]?.stringValue, extra: object.filter { !knownItemFields.contains($0.key) }),
            clickURLs: tracking["click"] ?? [], visibleImpressionURLs: tracking["visible_impression"] ?? [])
    }

    /// IDs may be numbers, printed as `AssistantPrice` prints amounts.
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

    private static func urlsByType(_ value: JSONValue?) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for event in value?.arrayValue ?? [] {
            guard let type = event["type"]?.stringValue else { continue }
            result[type, default: []] += (event["urls"]?.arrayValue ?? []).compactMap(\.stringValue).filter(
                WireFuzzing.isValidHTTPURL)
        }
        return result
    }
}
