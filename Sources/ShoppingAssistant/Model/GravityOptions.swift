/// The `options` every Gravity request carries (wire.md § Gravity API V2), as the base SDK's
/// `Options`. The defaults are the vendor iOS SDK's `Options()`, so an engine that sets nothing
/// asks the service for exactly what the vendor's own apps ask for.
///
/// `Decodable`, so a host can read its options from its own configuration; the engine alone
/// writes them to the wire.
public struct GravityOptions: Sendable, Hashable, Decodable {
    /// Add counters to the answer, when the app needs them.
    public var isReturnCounter: Bool
    /// Ask for the user's profile information in the answer. The canonical `user.uid` and `ses`
    /// come back either way (the SDKs rely on that with this option off).
    public var isReturnUserInfo: Bool
    /// Add analytics metadata to the answer.
    public var isReturnAnalyticsMetadata: Bool
    /// Let the service count a page view implicitly with the request.
    public var isImplicitPageview: Bool
    /// Let the service count impressions implicitly for the scenarios it supports.
    public var isImplicitImpression: Bool
    /// Let the service build the engagement (tracking) URLs of contents and products.
    public var isBuildEngagementUrl: Bool

    /// The vendor SDK's defaults: implicit impressions and engagement URLs on, the rest off.
    public init(
        isReturnCounter: Bool = false, isReturnUserInfo: Bool = false, isReturnAnalyticsMetadata: Bool = false,
        isImplicitPageview: Bool = false, isImplicitImpression: Bool = true, isBuildEngagementUrl: Bool = true
    ) {
        self.isReturnCounter = isReturnCounter
        self.isReturnUserInfo = isReturnUserInfo
        self.isReturnAnalyticsMetadata = isReturnAnalyticsMetadata
        self.isImplicitPageview = isImplicitPageview
        self.isImplicitImpression = isImplicitImpression
        self.isBuildEngagementUrl = isBuildEngagementUrl
    }
}

/// How `/choose` returns product data (`data[].options` on the wire), as the base SDK's
/// `ContentSettings`.
///
/// `Decodable`, so a host can read them from its own configuration; the engine alone writes
/// them to the wire.
public struct GravityContentSettings: Sendable, Hashable, Decodable {
    /// Return only SKUs instead of whole product objects where the scenario supports it.
    public var skusOnly: Bool
    /// Limit the product fields returned; `nil` returns them all (and is not sent).
    public var fields: [String]?

    /// The SDK's defaults: whole products, every field.
    public init(skusOnly: Bool = false, fields: [String]? = nil) {
        self.skusOnly = skusOnly
        self.fields = fields
    }
}
