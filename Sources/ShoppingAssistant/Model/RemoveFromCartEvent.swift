import Foundation

/// The shopper took a product out of the cart or lowered its quantity (`remove-from-cart-v1`,
/// B10).
public struct RemoveFromCartEvent: TriggerEvent {
    /// When the shopper did it, if not now: an event the app reports late keeps its moment
    /// (`eventTime`, DL6); `nil` stamps the moment of the call.
    public var eventTime: Date?
    /// String properties of the app's own, for Gravity's reports and segments; left out of the
    /// request when empty (B10).
    public var customProps: [String: String]
    /// The sum of the units removed.
    public var value: EventAmount
    /// The product's SKU exactly as in the product feed, case included; sent byte for byte.
    public var productId: String
    /// How many units this action removed; at least one.
    public var quantity: Int
    /// The currency of `value`; left out when `nil`.
    public var currency: String?
    /// The cart after the action, if the app sends it; left out when `nil`.
    public var cart: [CartItem]?

    /// Always `remove-from-cart-v1`.
    public var type: String { "remove-from-cart-v1" }
    /// Always `Remove from Cart`.
    public var name: String { "Remove from Cart" }

    /// `quantity` units of `productId` removed, worth `value`.
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

extension RemoveFromCartEvent: GravityTriggerEvent {
    var refusal: String? {
        TriggerEventCheck.cartChange(productId: productId, quantity: quantity, value: value, cart: cart)
    }
}
