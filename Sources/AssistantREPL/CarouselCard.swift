import ShoppingAssistant

/// What one card of a carousel shows: the fields `CarouselBuilder` draws, whatever the card
/// stands for — a product of the chat's reply (PR1), or a slot of a recommendation widget the
/// host renders itself (B12, `REPLWidget`). Every text is drawn sanitised; a missing field gets
/// its placeholder and never hides the card.
package struct CarouselCard: Sendable, Hashable {
    package var name: String
    package var imageUrl: String?
    package var price: AssistantPrice?
    package var oldPrice: AssistantPrice?
    package var currency: String?
    package var brand: String?
    package var category: String?
    /// Why the card cannot be tapped (`view only`, `not available`), shown in its footer; nil
    /// when it can, and then it carries its number.
    package var unavailable: String?

    package init(
        name: String, imageUrl: String? = nil, price: AssistantPrice? = nil, oldPrice: AssistantPrice? = nil,
        currency: String? = nil, brand: String? = nil, category: String? = nil, unavailable: String? = nil
    ) {
        self.name = name
        self.imageUrl = imageUrl
        self.price = price
        self.oldPrice = oldPrice
        self.currency = currency
        self.brand = brand
        self.category = category
        self.unavailable = unavailable
    }

    /// The card of a reply's product in `layout`: tappable as PR7 says, else why not.
    package init(_ product: AssistantProduct, layout: AssistantProductLayout) {
        self.init(
            name: product.name, imageUrl: product.imageUrl, price: product.price, oldPrice: product.oldPrice,
            currency: product.currency, brand: product.brand, category: product.category,
            unavailable: CarouselBuilder.isTappable(product, layout: layout)
                ? nil : product.canOpen ? "view only" : "not available")
    }

    /// Whether the card takes a tap, and so shows its number.
    package var isTappable: Bool { unavailable == nil }
}
