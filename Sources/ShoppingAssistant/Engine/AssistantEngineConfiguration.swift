import Foundation

/// What an engine is created with (B1).
public struct AssistantEngineConfiguration: Sendable, Hashable {
    /// The Gravity API key; sent only to Gravity, never logged, never to the Shopping API (B2, S5).
    public var apiKey: String
    /// The shop's section: Gravity `sec` and the Shopping API tenant (S2).
    public var section: String
    /// Gravity API V2 base URL, or a proxy that replaces it.
    public var gravityBaseURL: URL
    /// Shopping API base URL (S1).
    public var shoppingBaseURL: URL
    /// Which messages reach the logger's listener (B2); `.error` unless set. Chat text needs `.debug`.
    public var logLevel: AssistantLogLevel
    /// Reported in `attributes.app_version` (B4).
    public var appVersion: String
    /// Reported as `device.userAgent` and sent as the `User-Agent` header of every request.
    public var userAgent: String
    /// The `options` of every Gravity request (the base SDK's `setOptions`); the vendor SDK's
    /// defaults unless set. `AssistantEngine.setOptions` changes them at runtime.
    public var options: GravityOptions
    /// The `data[].options` of `/choose` requests (the base SDK's `ContentSettings`).
    public var contentSettings: GravityContentSettings
    /// `device.id`. The mobile SDKs persist a per-install id; an engine has no device (one
    /// process may serve many users), so it sends none unless the host gives one.
    public var deviceId: String?
    /// How many of the latest lifecycle events and tracking URLs `trackingLog` keeps.
    public var trackingLogCapacity: Int

    /// Gravity API V2 in production; used when `gravityBaseURL` is not given.
    public static let defaultGravityBaseURL = URL(string: "https://evs-01.gravityfield.ai/v2")!
    /// The Shopping API in production (S1); used when `shoppingBaseURL` is not given.
    public static let defaultShoppingBaseURL = URL(string: "https://shopping-assistant-api.gravityfield.ai")!
    /// `attributes.app_platform` (B4): the platform the engine runs on.
    public static let platform = "linux"
    /// This package's version, the one place it is defined: reported in
    /// `attributes.sdk_version` (B4) and in the default `userAgent`, and printed by
    /// `assistant --version`. Its release notes are in CHANGELOG.md.
    public static let sdkVersion = "0.1.0"

    /// Only `apiKey` and `section` are required (B1); `nil` base URLs mean production.
    /// Nothing is checked here: a key the server rejects surfaces as `.failure(unauthorized)`
    /// on the first `prepareAssistant`.
    public init(
        apiKey: String, section: String, gravityBaseURL: URL? = nil, shoppingBaseURL: URL? = nil,
        logLevel: AssistantLogLevel = .error, appVersion: String = "0.0.0",
        userAgent: String = "ShoppingAssistant-Swift/\(AssistantEngineConfiguration.sdkVersion) (Linux)",
        options: GravityOptions = GravityOptions(), contentSettings: GravityContentSettings = GravityContentSettings(),
        deviceId: String? = nil, trackingLogCapacity: Int = 1_000
    ) {
        self.apiKey = apiKey
        self.section = section
        self.gravityBaseURL = gravityBaseURL ?? Self.defaultGravityBaseURL
        self.shoppingBaseURL = shoppingBaseURL ?? Self.defaultShoppingBaseURL
        self.logLevel = logLevel
        self.appVersion = appVersion
        self.userAgent = userAgent
        self.options = options
        self.contentSettings = contentSettings
        self.deviceId = deviceId
        self.trackingLogCapacity = trackingLogCapacity
    }
}
