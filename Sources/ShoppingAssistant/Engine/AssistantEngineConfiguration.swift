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
    /// The host app's name, for `device.ua` as the vendor SDKs describe the app
    /// (`App/version (platform)`); this SDK's name when `nil`.
    public var appName: String?
    /// The host app's version: `attributes.app_version` (B4) and `device.ua`; this SDK's version
    /// when `nil`.
    public var appVersion: String?
    /// The `User-Agent` header of every request: names this SDK, not the HTTP library.
    public var userAgent: String
    /// The deadline of each Gravity call (`/choose`, `/visit`, `/event`) on the engine's clock,
    /// whatever the transport's own (B13); the iOS SDK uses 5 s.
    public var gravityTimeout: Duration
    /// The deadline of each tracking URL request on the engine's clock (B13): a tracking host
    /// that never answers holds nothing up longer than this.
    public var trackingTimeout: Duration
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
    /// What is kept of what could not be delivered yet, and for how long (DL4).
    public var offlineQueue = OfflineQueueSettings()
    /// How long after its last change a stored dialog is still brought back on the next
    /// opening (D20): older ones are forgotten, never shown. 24 hours unless set.
    public var dialogRetention: Duration = .seconds(24 * 60 * 60)

    /// Gravity API V2 in production; used when `gravityBaseURL` is not given.
    public static let defaultGravityBaseURL = URL(string: "https://evs-01.gravityfield.ai/v2")!
    /// The Shopping API in production (S1); used when `shoppingBaseURL` is not given.
    public static let defaultShoppingBaseURL = URL(string: "https://shopping-assistant-api.gravityfield.ai")!
    /// `attributes.app_platform` (B4): the platform the engine was built for, in lower case —
    /// `"linux"`, `"macos"`, `"ios"`, `"tvos"`, `"watchos"`, `"visionos"`, `"windows"` or
    /// `"android"` (`"unknown"` elsewhere) — so an iOS app's analytics never say Linux.
    public static let platform = platformName.lowercased()

    /// The platform's name as `device.ua` and the default `userAgent` spell it (`Linux`,
    /// `macOS`, `iOS`, …): decided when the package is compiled.
    public static let platformName: String = {
        #if os(Linux)
            return "Linux"
        #elseif os(macOS)
            return "macOS"
        #elseif os(iOS)
            return "iOS"
        #elseif os(tvOS)
            return "tvOS"
        #elseif os(watchOS)
            return "watchOS"
        #elseif os(visionOS)
            return "visionOS"
        #elseif os(Windows)
            return "Windows"
        #elseif os(Android)
            return "Android"
        #else
            return "unknown"
        #endif
    }()
    /// This package's version, the one place it is defined: printed by `assistant --version`,
    /// in the default `userAgent`, and the base of `attributes.sdk_version` (B4). Its release
    /// notes are in CHANGELOG.md.
    public static let sdkVersion = "0.1.0"
    /// This SDK's name, in the `User-Agent` header and in `device.ua` when the host names no app.
    public static let sdkName = "ShoppingAssistant-Swift"
    /// `attributes.sdk_version` as sent (B4): the version with semantic-versioning build
    /// metadata naming this SDK, so that it can never be read as one of the vendor's own SDK
    /// releases (iOS 1.0.x, Android 1.0.x, flutter 0.x), which share the attribute.
    public static let wireSDKVersion = "\(sdkVersion)+shopping-assistant"

    /// `device.ua`, describing the host app as the vendor SDKs do (`App/version (platform)`,
    /// iOS: `App/1.2 (iOS 17.4; iPhone; arm64)`), from `appName` and `appVersion`, with the
    /// platform's name alone (`App/1.2 (Linux)`, `App/1.2 (iOS)`): no device model, OS version
    /// or architecture, so a string that stays the same across machines of one platform lets
    /// a recorded session replay on any of them.
    public var deviceUserAgent: String {
        "\(appName ?? Self.sdkName)/\(appVersion ?? Self.sdkVersion) (\(Self.platformName))"
    }

    /// Only `apiKey` and `section` are required (B1); `nil` base URLs mean production.
    /// Nothing is checked here: a key the server rejects surfaces as `.failure(unauthorized)`
    /// on the first `prepareAssistant`.
    public init(
        apiKey: String, section: String, gravityBaseURL: URL? = nil, shoppingBaseURL: URL? = nil,
        logLevel: AssistantLogLevel = .error, appName: String? = nil, appVersion: String? = nil,
        userAgent: String =
            "\(AssistantEngineConfiguration.sdkName)/\(AssistantEngineConfiguration.sdkVersion) (\(AssistantEngineConfiguration.platformName))",
        options: GravityOptions = GravityOptions(), contentSettings: GravityContentSettings = GravityContentSettings(),
        deviceId: String? = nil, trackingLogCapacity: Int = 1_000, gravityTimeout: Duration = .seconds(10),
        trackingTimeout: Duration = .seconds(10)
    ) {
        self.apiKey = apiKey
        self.section = section
        self.gravityBaseURL = gravityBaseURL ?? Self.defaultGravityBaseURL
        self.shoppingBaseURL = shoppingBaseURL ?? Self.defaultShoppingBaseURL
        self.logLevel = logLevel
        self.appName = appName
        self.appVersion = appVersion
        self.userAgent = userAgent
        self.gravityTimeout = gravityTimeout
        self.trackingTimeout = trackingTimeout
        self.options = options
        self.contentSettings = contentSettings
        self.deviceId = deviceId
        self.trackingLogCapacity = trackingLogCapacity
    }
}
