import Foundation

/// An event of the app's own type (B10): `{"type", "name", "customProps"}` on the wire, as the
/// base SDK's `CustomEvent`, with the shopper's id (`cuid`, `cuidType`) and a cart when the
/// app has them, as the vendor's newest SDK sends them.
public struct CustomEvent: TriggerEvent {
    /// When the shopper did it, if not now: an event the app reports late keeps its moment
    /// (`eventTime`, DL6); `nil` stamps the moment of the call.
    public var eventTime: Date?
    /// The event type the campaigns trigger on (`survey-completed-v1`, a name of the app's own).
    public var type: String
    /// A human-readable name for Gravity's reports; campaigns trigger on `type`, not on it.
    public var name: String
    /// The app's customer id, for an event that identifies the shopper; left out when `nil`.
    public var cuid: String?
    /// What kind of id `cuid` is (`email`, `phone_hash`); left out when `nil`.
    public var cuidType: String?
    /// The cart the event concerns, if any; left out when `nil`.
    public var cart: [CartItem]?
    /// String properties; left out of the request when empty.
    public var customProps: [String: String]

    /// An event of `type` with a display `name` and what else the app knows of it.
    public init(
        type: String, name: String, cuid: String? = nil, cuidType: String? = nil, cart: [CartItem]? = nil,
        customProps: [String: String] = [:], eventTime: Date? = nil
    ) {
        self.eventTime = eventTime
        self.type = type
        self.name = name
        self.cuid = cuid
        self.cuidType = cuidType
        self.cart = cart
        self.customProps = customProps
    }
}

extension CustomEvent: GravityTriggerEvent {
    var refusal: String? {
        TriggerEventCheck.first(
            TriggerEventCheck.required(type, "type"), TriggerEventCheck.required(name, "name"),
            TriggerEventCheck.cart(cart))
    }
}
