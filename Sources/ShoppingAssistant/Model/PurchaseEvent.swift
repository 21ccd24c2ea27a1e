import Foundation

/// A completed order (`purchase-v1`, B10). Send it once the order has gone through; for
/// e-commerce campaigns it is required.
public struct PurchaseEvent: TriggerEvent {
    /// When the shopper did it, if not now: an event the app reports late keeps its moment
    /// (`eventTime`, DL6); `nil` stamps the moment of the call.
    public var eventTime: Date?
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
        eventTime: Date? = nil
    ) {
        self.eventTime = eventTime
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
