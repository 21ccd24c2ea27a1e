/// One line of a cart or order (`cart` of the cart and purchase events, B10):
/// `{"productId", "quantity", "itemPrice"}` on the wire, as the base SDK's `CartItem`.
public struct CartItem: Sendable, Hashable {
    /// The product's SKU exactly as in the product feed, case included; sent byte for byte.
    public var productId: String
    /// How many units of the product the line holds; at least one.
    public var quantity: Int
    /// The price of one unit.
    public var itemPrice: EventAmount

    /// A line of `quantity` units of `productId` at `itemPrice` each.
    public init(productId: String, quantity: Int, itemPrice: EventAmount) {
        self.productId = productId
        self.quantity = quantity
        self.itemPrice = itemPrice
    }

    /// Why the line cannot be sent (B10): no SKU, no units, or a price that is not one.
    var refusal: String? {
        TriggerEventCheck.first(
            TriggerEventCheck.required(productId, "productId"), TriggerEventCheck.quantity(quantity, "quantity"),
            TriggerEventCheck.amount(itemPrice, "itemPrice"))
    }
}
