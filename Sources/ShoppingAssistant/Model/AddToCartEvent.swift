import Foundation

/// The shopper put a product in the cart (`add-to-cart-v1`, B10). Send it when the product is
/// actually added; for e-commerce campaigns it is required.
public struct AddToCartEvent: TriggerEvent {
    /// When the shopper did it, if not now: an event the app reports late keeps its moment
    /// (`eventTime`, DL6); `nil` stamps the moment of the call.
    public var eventTime: Date?
    /// String properties of the app's own, for Gravity's reports and segments; left out of the
    /// request when empty (B10).
    public var customProps: [String: String]
    /// The sum this action adds to the cart.
    public var value: EventAmount
    /// The product's SKU exactly as in the product feed, case included; sent byte for byte.
    public var productId: String
    /// How many units this action added; at least one.
    public var quantity: Int
    /// The currency of `value`, required in multi-currency projects; left out when `nil`.
    public var currency: String?
    /// The cart after the action, if the app sends it; left out when `nil`.
    public var cart: [CartItem]?

    /// Always `add-to-cart-v1`.
    public var type: String { "add-to-cart-v1" }
    /// Always `Add to Cart`.
    public var name: String { "Add to Cart" }

    /// `quantity` units of `productId` added, worth `value`.
    public init(
        value: EventAmount, productId: String, quantity: Int, currency: String? = nil, cart: [CartItem]? = nil,
        customProps: [String: String] = [:], eventTime: Date? = nil
    ) {
        self.eventTime = eventTime
        self.customProps = customProps
        self.value = value
        self.productId = productId
        self.quantity = quantity
        self.currency = currency
        self.cart = cart
    }
}

extension AddToCartEvent: GravityTriggerEvent {
    var refusal: String? {
        TriggerEventCheck.cartChange(productId: productId, quantity: quantity, value: value, cart: cart)
    }
}
