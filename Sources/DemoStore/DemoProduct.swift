import Foundation
import ShoppingAssistant

/// One product of the demo catalogue, with everything the store needs to put it on the wire.
///
/// The catalogue deliberately contains the awkward cases the engine must survive (PR1, AN5):
/// prices as strings, missing prices and pictures, SKU-only products, one product with neither
/// SKU nor URL, products without tracking events and products with repeated click URLs.
package struct DemoProduct: Sendable, Hashable {
    /// The store's departments; the raw value is the Russian name sent as `category`.
    package enum Category: String, Sendable, Hashable, CaseIterable {
        case kitchen = "Посуда"
        case electronics = "Электроника"
        case clothing = "Одежда"
        case home = "Дом"
        case sport = "Спорт"
        case books = "Книги"
        case toys = "Игрушки"
        case cosmetics = "Косметика"

        /// The path segment of the category's page on the demo shop site.
        package var slug: String {
            switch self {
            case .kitchen: "kitchen"
            case .electronics: "electronics"
            case .clothing: "clothing"
            case .home: "home"
            case .sport: "sport"
            case .books: "books"
            case .toys: "toys"
            case .cosmetics: "cosmetics"
            }
        }
    }

    /// Labels the reply composer matches questions against.
    package enum Tag: String, Sendable, Hashable, CaseIterable {
        /// A good present.
        case gift
        /// Suits a man.
        case men
        /// Suits a woman.
        case women
        /// Suits a child.
        case kids
        /// Shown when nothing specific matches.
        case popular
    }

    /// Which tracking URLs the product carries in `events`.
    package enum Tracking: Sendable, Hashable {
        /// One `visible_impression` URL and one `click` URL.
        case standard
        /// Two different `click` URLs on two tracking hosts.
        case twoClickHosts
        /// The same `click` URL listed twice, to show de-duplication within one action (AN5).
        case duplicatedClick
        /// No `events` at all: shown and openable, but without tracking (AN5).
        case none
    }

    /// The item identifier on the wire (`itemId`), unique in the catalogue.
    package let itemId: String
    /// The shop's SKU, if the product has one.
    package let sku: String?
    /// The display name.
    package let name: String
    /// The product page on the demo shop site, if the product has one.
    package let url: String?
    /// The picture, if the product has one.
    package let imageUrl: String?
    /// The price in roubles, if known.
    package let price: Int?
    /// The price before a discount, if any.
    package let oldPrice: Int?
    /// Whether prices go on the wire as formatted strings (`"1 990 ₽"`) instead of numbers.
    package let pricesAsText: Bool
    /// The department, if the product is in one.
    package let category: Category?
    /// The brand, if known.
    package let brand: String?
    /// Labels for matching questions.
    package let tags: Set<Tag>
    /// The tracking URLs the product carries.
    package let tracking: Tracking
    /// A customer rating, an extra item field the engine must keep (PR1).
    package let rating: Double?

    /// Creates a product. `url`/`imageUrl` are whole URLs; pass `nil` for "absent".
    package init(
        itemId: String,
        sku: String?,
        name: String,
        url: String?,
        imageUrl: String?,
        price: Int?,
        oldPrice: Int? = nil,
        pricesAsText: Bool = false,
        category: Category?,
        brand: String?,
        tags: Set<Tag> = [],
        tracking: Tracking = .standard,
        rating: Double? = nil
    ) {
        self.itemId = itemId
        self.sku = sku
        self.name = name
        self.url = url
        self.imageUrl = imageUrl
        self.price = price
        self.oldPrice = oldPrice
        self.pricesAsText = pricesAsText
        self.category = category
        self.brand = brand
        self.tags = tags
        self.tracking = tracking
        self.rating = rating
    }

    /// The price as an event amount (B10), exact: what a cart line or a purchase of this
    /// product carries; `nil` without a price.
    package var eventPrice: EventAmount? { price.map { EventAmount($0) } }

    /// A cart line of `quantity` units at the catalogue price (`CartItem`, B10); `nil` for a
    /// product without a SKU or a price, which cannot go into a cart.
    package func cartItem(quantity: Int) -> CartItem? {
        guard let sku, let eventPrice else { return nil }
        return CartItem(productId: sku, quantity: quantity, itemPrice: eventPrice)
    }

    /// The `visible_impression` URLs this product carries.
    package var visibleImpressionURLs: [String] {
        tracking == .none ? [] : ["https://\(DemoStore.trackingHost)/vi?i=\(itemId)"]
    }

    /// The `click` URLs this product carries, duplicates included.
    package var clickURLs: [String] {
        let primary = "https://\(DemoStore.trackingHost)/c?i=\(itemId)"
        switch tracking {
        case .standard: return [primary]
        case .twoClickHosts: return [primary, "https://\(DemoStore.secondaryTrackingHost)/c?i=\(itemId)"]
        case .duplicatedClick: return [primary, primary]
        case .none: return []
        }
    }

    /// The product as a wire item (wire.md, `products.items[*]`).
    var wireJSON: DemoJSON {
        var members: [(String, DemoJSON?)] = [
            ("itemId", .string(itemId)),
            ("sku", sku.map(DemoJSON.string)),
            ("name", .string(name)),
            ("url", url.map(DemoJSON.string)),
            ("imageUrl", imageUrl.map(DemoJSON.string)),
            ("price", price.map(priceJSON)),
            ("oldPrice", oldPrice.map(priceJSON)),
            ("currency", price == nil ? nil : .string("RUB")),
            ("category", category.map { .string($0.rawValue) }),
            ("brand", brand.map(DemoJSON.string)),
            ("rating", rating.map(DemoJSON.double)),
        ]
        if tracking != .none {
            members.append(
                (
                    "events",
                    .array([
                        .object(["type": "visible_impression", "urls": .strings(visibleImpressionURLs)]),
                        .object(["type": "click", "urls": .strings(clickURLs)]),
                    ])
                ))
        }
        return .compactObject(members)
    }

    private func priceJSON(_ amount: Int) -> DemoJSON {
        pricesAsText ? .string(Self.formatPrice(amount)) : .int(amount)
    }

    /// A price as the shop writes it: thousands separated by a space, then the rouble sign.
    package static func formatPrice(_ amount: Int) -> String {
        let digits = String(amount)
        var groups: [String] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.insert(String(digits[start..<end]), at: 0)
            end = start
        }
        return groups.joined(separator: " ") + " ₽"
    }
}
