import Foundation

/// The whole cart as it is now (`sync-cart-v1`, B10): for when the app reports the cart's
/// state rather than one change to it. An empty `cart` is an emptied cart.
public struct SyncCartEvent: TriggerEvent {
    /// When the shopper did it, if not now: an event the app reports late keeps its moment
    /// (`eventTime`, DL6); `nil` stamps the moment of the call.
    public var eventTime: Date?
    /// String properties of the app's own, for Gravity's reports and segments; left out of the
    /// request when empty (B10).
    public var customProps: [String: String]
    /// The total of the cart as it is now.
    public var value: EventAmount
    /// The currency of `value`; left out when `nil`.
    public var currency: String?
    /// The cart's lines; left out when `nil`.
    public var cart: [CartItem]?

    /// Always `sync-cart-v1`.
    public var type: String { "sync-cart-v1" }
    /// Always `Sync cart`, as the SDKs spell it.
    public var name: String { "Sync cart" }

    /// The cart `cart`, worth `value` in all.
    public init(
        value: EventAmount, currency: String? = nil, cart: [CartItem]? = nil, customProps: [String: String] = [:],
        eventTime: Date? = nil
    ) {
        self.eventTime = eventTime
        self.customProps = customProps
        self.value = value
        self.currency = currency
        self.cart = cart
    }
}

extension SyncCartEvent: GravityTriggerEvent {
    var refusal: String? {
        TriggerEventCheck.first(TriggerEventCheck.amount(value, "value"), TriggerEventCheck.cart(cart))
    }
}
