import ShoppingAssistant

/// The demo's recommendation widget (`Configuration.recommendationSelector`): a server-driven
/// content whose `products.slots` a host renders itself and reports with the engine's
/// engagement calls (B12), shaped as seed 000's "server-driven recommendation widget" and the
/// SDKs' `Products`/`Slot` read it.
///
/// On a product page it recommends the product's department (the product itself left out),
/// elsewhere the popular products; only products with a SKU and a numeric price, so that every
/// card can go into a cart at its catalogue price. Every URL is on `DemoStore.trackingHost`,
/// under `/w/`, naming the decision and the slot's SKU:
///
/// | engagement | content `events` type (named by `variables`) | URL |
/// |---|---|---|
/// | load (B7) | `load` | `/w/l?d=<decision>` |
/// | impression | `impression` | `/w/i?d=<decision>` |
/// | visible impression | `visible_impression` | `/w/v?d=<decision>` |
/// | close | `close` | `/w/x?d=<decision>` |
/// | product visible impression | slot `visible_impression` | `/w/vi?d=<decision>&s=<sku>` |
/// | product click | slot `click` | `/w/c?d=<decision>&s=<sku>` |
package enum DemoRecommendations {
    /// How many slots the widget holds.
    package static let slotLimit = 4

    /// What the widget recommends on the page whose first `ctx.data` value is `sku`: the
    /// product's department, or else the popular products.
    package static func recommendation(forPageSKU sku: String?) -> (products: [DemoProduct], similar: Bool) {
        let sellable = DemoCatalog.products.filter { $0.sku != nil && $0.price != nil && !$0.pricesAsText }
        if let sku, let product = DemoCatalog.product(sku: sku) {
            let similar = sellable.filter { $0.category == product.category && $0 != product }
            if !similar.isEmpty { return (Array(similar.prefix(slotLimit)), true) }
        }
        return (Array(sellable.filter { $0.tags.contains(.popular) }.prefix(slotLimit)), false)
    }

    /// The widget's variation for `decision`, recommending for the page `ctx`.
    static func variation(decision: String, ctx: JSONValue?) -> DemoJSON {
        let pageSKU =
            ctx?["type"]?.stringValue == PageContext.PageType.product.rawValue
            ? ctx?["data"]?.arrayValue?.first?.stringValue : nil
        let (products, similar) = recommendation(forPageSKU: pageSKU)
        let base = "https://\(DemoStore.trackingHost)/w"
        let slots = products.enumerated().map { index, product in
            slot(product, index: index, decision: decision, base: base)
        }
        let content = DemoJSON.object([
            "contentId": "demo-ct-recommendations",
            "templateSystemName": "recommendations",
            "deliveryMethod": "inline",
            "contentType": "native",
            "variables": .object([
                "onLoad": .object(["action": "load"]),
                "onImpression": .object(["action": "impression"]),
                "onVisibleImpression": .object(["action": "visible_impression"]),
                "onClose": .object(["action": "close"]),
                "elements": .array([
                    .object(["type": "text", "text": .string(similar ? "Похожие товары" : "Вам может понравиться")]),
                    .object(["type": "products-container", "style": .object(["productContainerType": "row"])]),
                ]),
            ]),
            "products": .object([
                "strategyId": .string(similar ? "demo-similar" : "demo-popular"),
                "fallback": false,
                "name": .string(similar ? "Похожие товары" : "Популярное"),
                "slots": .array(slots),
            ]),
            "events": .array([
                .object(["type": "load", "urls": .strings(["\(base)/l?d=\(decision)"])]),
                .object(["type": "impression", "urls": .strings(["\(base)/i?d=\(decision)"])]),
                .object(["type": "visible_impression", "urls": .strings(["\(base)/v?d=\(decision)"])]),
                .object(["type": "close", "urls": .strings(["\(base)/x?d=\(decision)"])]),
            ]),
        ])
        return .object([
            "campaignId": "demo-c-recommendations",
            "experienceId": "demo-e-recommendations",
            "variationId": "demo-v-recommendations",
            "decisionId": .string(decision),
            "contents": .array([content]),
        ])
    }

    private static func slot(_ product: DemoProduct, index: Int, decision: String, base: String) -> DemoJSON {
        let sku = product.sku ?? product.itemId
        let item = DemoJSON.compactObject([
            ("sku", .string(sku)),
            ("name", .string(product.name)),
            ("price", product.price.map(DemoJSON.int)),
            ("oldPrice", product.oldPrice.map(DemoJSON.int)),
            ("currency", "RUB"),
            ("url", product.url.map(DemoJSON.string)),
            ("imageUrl", product.imageUrl.map(DemoJSON.string)),
            ("category", product.category.map { .string($0.rawValue) }),
            ("brand", product.brand.map(DemoJSON.string)),
        ])
        return .object([
            "item": item,
            "fallback": false,
            "strId": .int(index + 1),
            "slotId": .string("demo-slot-\(product.itemId)"),
            "events": .array([
                .object(["type": "visible_impression", "urls": .strings(["\(base)/vi?d=\(decision)&s=\(sku)"])]),
                .object(["type": "click", "urls": .strings(["\(base)/c?d=\(decision)&s=\(sku)"])]),
            ]),
        ])
    }
}
