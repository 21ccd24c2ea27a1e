/// The screen a request is made from (B4). Values travel byte for byte: the engine never
/// changes case, trims or normalises them, because campaigns target exact SKUs and paths.
///
/// `Decodable`, so a host can read a screen's context from its own JSON (a web view's, a
/// route table's); the engine alone writes it to the wire, as `ctx` and `runtimeContext.page`.
public struct PageContext: Sendable, Hashable, Decodable {
    /// The kind of screen. The raw values are Gravity's upper-case spelling (`PRODUCT`), the
    /// one the service and the vendor's SDKs use on the wire (B4); `description` is the lower-case
    /// name for people.
    public enum PageType: String, Sendable, Hashable, Decodable, CaseIterable, CustomStringConvertible {
        /// The shop's start screen.
        case homepage = "HOMEPAGE"
        /// A product page; `data` holds its SKU.
        case product = "PRODUCT"
        /// The cart; `data` holds the SKUs in it.
        case cart = "CART"
        /// A category listing; `data` holds the category path.
        case category = "CATEGORY"
        /// Search results; `data` holds the query.
        case search = "SEARCH"
        /// Any other screen.
        case other = "OTHER"

        /// The lower-case case name (`product`), for prompts and logs.
        public var description: String { rawValue.lowercased() }
    }

    /// Which kind of screen; campaigns target by it (B4).
    public var type: PageType
    /// The screen's items (SKUs, category path, query), sent byte for byte (B4).
    public var data: [String]
    /// The screen's address or route, as the host names it; campaigns may target it.
    public var location: String
    /// The shop's language for this screen, sent unchanged (no case folding, B4).
    public var lng: String?
    /// The page of a paged listing, when there is one.
    public var pageNumber: Int?
    /// The screen the shopper came from, when known.
    public var referrer: String?
    /// UTM parameters the shopper arrived with, for attribution.
    public var utm: [String: String]?
    /// The host's own attributes; the engine adds `app_version`, `sdk_version` and `app_platform`
    /// on the wire (B4), so those keys need not be set here.
    public var attributes: [String: String]?

    /// Only `type` is required; build one per screen and pass it to `trackView`,
    /// `getContentBySelector` and `prepareAssistant`.
    public init(
        type: PageType,
        data: [String] = [],
        location: String = "",
        lng: String? = nil,
        pageNumber: Int? = nil,
        referrer: String? = nil,
        utm: [String: String]? = nil,
        attributes: [String: String]? = nil
    ) {
        self.type = type
        self.data = data
        self.location = location
        self.lng = lng
        self.pageNumber = pageNumber
        self.referrer = referrer
        self.utm = utm
        self.attributes = attributes
    }

    /// This context with the SDK's own attributes added, as it is sent to Gravity (B4).
    /// Host attributes with the same names win, so a host can pin its app version.
    func withSDKAttributes(appVersion: String, sdkVersion: String, platform: String) -> PageContext {
        var copy = self
        var merged = ["app_version": appVersion, "sdk_version": sdkVersion, "app_platform": platform]
        merged.merge(attributes ?? [:]) { _, host in host }
        copy.attributes = merged
        return copy
    }
}
