import Foundation

/// The shopper signed in (`login-v1`, B10), to link the anonymous profile with the
/// signed-in one. Every field is optional; those left `nil` are left out.
public struct LoginEvent: TriggerEvent {
    /// When the shopper did it, if not now: an event the app reports late keeps its moment
    /// (`eventTime`, DL6); `nil` stamps the moment of the call.
    public var eventTime: Date?
    /// String properties of the app's own, for Gravity's reports and segments; left out of the
    /// request when empty (B10).
    public var customProps: [String: String]
    /// A hash of the shopper's e-mail address.
    public var hashedEmail: String?
    /// The app's customer id, for example a `phone_hash` (seed: SHA-256 of the normalised phone).
    public var cuid: String?
    /// What kind of id `cuid` is (`phone_hash`).
    public var cuidType: String?

    /// Always `login-v1`.
    public var type: String { "login-v1" }
    /// Always `Login`.
    public var name: String { "Login" }

    /// A sign-in, with the ids the app has.
    public init(
        hashedEmail: String? = nil, cuid: String? = nil, cuidType: String? = nil, customProps: [String: String] = [:],
        eventTime: Date? = nil
    ) {
        self.eventTime = eventTime
        self.customProps = customProps
        self.hashedEmail = hashedEmail
        self.cuid = cuid
        self.cuidType = cuidType
    }
}

extension LoginEvent: GravityTriggerEvent {
    var refusal: String? { nil }
}
