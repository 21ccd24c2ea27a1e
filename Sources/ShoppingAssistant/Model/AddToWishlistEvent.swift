import Foundation

/// The shopper put a product on the wishlist (`add-to-wishlist-v1`, B10).
public struct AddToWishlistEvent: TriggerEvent {
    /// When the shopper did it, if not now: an event the app reports late keeps its moment
    /// (`eventTime`, DL6); `nil` stamps the moment of the call.
    public var eventTime: Date?
    /// String properties of the app's own, for Gravity's reports and segments; left out of the
    /// request when empty (B10).
    public var customProps: [String: String]
    /// The product's price.
    public var value: EventAmount
    /// The product's SKU exactly as in the product feed, case included; sent byte for byte.
    public var productId: String

    /// Always `add-to-wishlist-v1`.
    public var type: String { "add-to-wishlist-v1" }
    /// Always `Add to Wishlist`.
    public var name: String { "Add to Wishlist" }

    /// `productId`, worth `value`, wished for.
    public init(value: EventAmount, productId: String, customProps: [String: String] = [:], eventTime: Date? = nil) {
        self.eventTime = eventTime
        self.customProps = customProps
        self.value = value
        self.productId = productId
    }
}

extension AddToWishlistEvent: GravityTriggerEvent {
    var refusal: String? {
        TriggerEventCheck.first(
            TriggerEventCheck.required(productId, "productId"), TriggerEventCheck.amount(value, "value"))
    }
}
