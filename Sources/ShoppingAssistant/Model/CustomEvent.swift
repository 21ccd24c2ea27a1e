import Foundation

/// An event of the app's own type (B10): `{"type", "name", "customProps"}` on the wire, as the
/// base SDK's `CustomEvent`.
public struct CustomEvent: TriggerEvent {
    /// When the shopper did it, if not now: an event the app reports late keeps its moment
    /// (`eventTime`, DL6); `nil` stamps the moment of the call.
    public var eventTime: Date?
    /// The event type the campaigns trigger on (`survey-completed-v1`, a name of the app's own).
    public var type: String
    /// A human-readable name for Gravity's reports; campaigns trigger on `type`, not on it.
    public var name: String
    /// String properties; left out of the request when empty.
    public var customProps: [String: String]

    /// An event of `type` with a display `name` and optional properties.
    public init(type: String, name: String, customProps: [String: String] = [:], eventTime: Date? = nil) {
        self.eventTime = eventTime
        self.type = type
        self.name = name
        self.customProps = customProps
    }
}

extension CustomEvent: GravityTriggerEvent {
    var refusal: String? {
        TriggerEventCheck.first(TriggerEventCheck.required(type, "type"), TriggerEventCheck.required(name, "name"))
    }
}
