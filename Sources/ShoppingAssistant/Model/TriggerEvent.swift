import Foundation

/// An event for ``AssistantEngine/triggerEvent(events:pageContext:)`` (B10): what the shopper
/// did, for Gravity's analytics, segments and the campaigns that react to events.
///
/// The engine's types are the base SDK's, initialised as the SDK's are: ``AddToCartEvent``,
/// ``PurchaseEvent``, ``RemoveFromCartEvent``, ``SyncCartEvent``, ``AddToWishlistEvent``,
/// ``SignUpEvent``, ``LoginEvent`` and ``CustomEvent``. Pass any mix of them in one array;
/// each travels with the `type`/`name` pair and the field names the vendor SDKs send. For
/// e-commerce apps ``PurchaseEvent`` and ``AddToCartEvent`` are the ones the campaigns need.
///
/// The engine sends only its own types: an event of another type that conforms is refused
/// with a log line (send it as a ``CustomEvent``), because the engine cannot know its fields.
public protocol TriggerEvent: Sendable, Hashable {
    /// Gravity's event type, the one campaigns trigger on (`add-to-cart-v1`).
    var type: String { get }
    /// Gravity's name for the type, for its reports (`Add to Cart`).
    var name: String { get }
}

/// The engine's own event types: what the seed requires of each (B10) and its `/event` shape.
protocol GravityTriggerEvent: TriggerEvent {
    /// Why the event cannot be sent as it is — a field the seed requires is empty, a quantity
    /// is not positive, an amount is negative or not a number — or `nil` when it can (B10).
    var refusal: String? { get }
    /// The event as `/event` `data` carries it (GravityWire.swift).
    var wire: GravityEvent { get }
    /// The moment the app gave, if any (DL6).
    var eventTime: Date? { get }
    /// The app's own properties, sent beside the typed fields (B10).
    var customProps: [String: String] { get }
}

/// What the events of one `triggerEvent` call check in common (B10).
enum TriggerEventCheck {
    /// Why an id the seed requires cannot be sent: it is empty.
    static func required(_ value: String, _ field: String) -> String? {
        value.isEmpty ? "\(field) is empty" : nil
    }

    /// Why a quantity cannot be sent: a cart action moves at least one unit.
    static func quantity(_ value: Int, _ field: String) -> String? {
        value < 1 ? "\(field) is \(value), not a positive number of units" : nil
    }

    /// Why an amount cannot be sent: not a number, or negative.
    static func amount(_ value: EventAmount, _ field: String) -> String? {
        if value.decimal.isNaN { return "\(field) is not a finite number" }
        return value.decimal < 0 ? "\(field) is negative (\(value))" : nil
    }

    /// Why a cart cannot be sent: the first of its items that cannot.
    static func cart(_ items: [CartItem]?, _ field: String = "cart") -> String? {
        for (index, item) in (items ?? []).enumerated() {
            if let refusal = item.refusal { return "\(field)[\(index)].\(refusal)" }
        }
        return nil
    }

    /// What a cart change (`add-to-cart-v1`, `remove-from-cart-v1`) requires: a SKU, at least
    /// one unit, an amount, and complete cart lines if it has a cart.
    static func cartChange(productId: String, quantity: Int, value: EventAmount, cart: [CartItem]?) -> String? {
        first(
            required(productId, "productId"), self.quantity(quantity, "quantity"), amount(value, "value"),
            self.cart(cart))
    }

    /// The first refusal of several checks.
    static func first(_ checks: String?...) -> String? {
        checks.lazy.compactMap { $0 }.first
    }
}
