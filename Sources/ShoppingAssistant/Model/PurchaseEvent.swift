import Foundation

/// A completed order (`purchase-v1`, B10). Send it once the order has gone through; for
/// e-commerce campaigns it is required.
public struct PurchaseEvent: TriggerEvent {
    /// When the shopper did it, if not now: an event the app reports late keeps its moment
    /// (`eventTime`, DL6); `nil` stamps the moment of the call.
    public var eventTime: Date?
    /// String properties of the app's own, for Gravity's reports and segments; left out of the
    /// request when empty (B10).
    public var customProps: [String: String]
    /// The order's id, unique for every purchase.
    public var uniqueTransactionId: String
    /// The order's full sum.
    public var value: EventAmount
    /// What was ordered; at least one line, each SKU exactly as in the product feed.
    public var cart: [CartItem]
    /// The currency of `value`, required in multi-currency projects; left out when `nil`.
    public var currency: String?

    /// Always `purchase-v1`.
    public var type: String { "purchase-v1" }
    /// Always `Purchase`.
    public var name: String { "Purchase" }

    /// The order `uniqueTransactionId` of `cart`, worth `value`.
    public init(
        uniqueTransactionId: String, value: EventAmount, cart: [CartItem], currency: String? = nil,
        customProps: [String: String] = [:], eventTime: Date? = nil
    ) {
        self.eventTime = eventTime
        self.customProps = customProps
        self.uniqueTransactionId = uniqueTransactionId
        self.value = value
        self.cart = cart
        self.currency = currency
    }
}

extension PurchaseEvent: GravityTriggerEvent {
    var refusal: String? {
        TriggerEventCheck.first(
            TriggerEventCheck.required(uniqueTransactionId, "uniqueTransactionId"),
            TriggerEventCheck.amount(value, "value"), cart.isEmpty ? "cart is empty" : nil,
            TriggerEventCheck.cart(cart))
    }
}
