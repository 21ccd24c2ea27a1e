/// What `getContentBySelector` returns (B5): the answer of Gravity's `/choose`, shaped as the
/// base SDK's `ContentResponse` so that the seed's code (`response.data.first?.payload.first?
/// .contents.first?.custom?.json`) reads it unchanged.
///
/// It holds only the entries of the selector that was asked for: the service may add entries
/// for selectors nobody requested, and those never reach the host (wire.md § POST /choose).
public struct ContentResponse: Sendable, Hashable {
    /// One entry per selector answered, in the service's order; empty when nothing matched.
    public let data: [Campaign]

    /// Wraps already decoded entries, for hosts that build responses in their own tests.
    public init(data: [Campaign]) { self.data = data }

    /// Every selected variation of every entry, in order.
    public var variations: [CampaignVariation] { data.flatMap(\.payload) }

    /// True when nothing matched: no entry, no variation, or no content in any (C5).
    public var isEmpty: Bool { variations.allSatisfy { $0.contents.isEmpty } }

    /// The URLs content load tracking requests for this answer (B7): each content's load URLs,
    /// valid http(s) ones only.
    var loadTrackingURLs: [String] {
        variations.flatMap(\.contents).flatMap(\.loadTrackingURLs).filter(HTTPURLValidator.isValid)
    }
}

/// One entry of `/choose`'s `data`: the campaigns selected for one selector.
public struct Campaign: Sendable, Hashable {
    /// The selector this entry answers; the engine keeps only entries of the selector it asked for.
    public let selector: String?
    /// The selected variations (decisions), in the service's order.
    public let payload: [CampaignVariation]

    /// For hosts' own tests, which build answers without the service; the engine decodes its own.
    public init(selector: String?, payload: [CampaignVariation]) {
        self.selector = selector
        self.payload = payload
    }
}

/// One selected campaign variation: the identifiers analytics need and its contents.
public struct CampaignVariation: Sendable, Hashable {
    /// The campaign the variation belongs to; lifecycle events carry it (AN2).
    public let campaignId: String?
    /// The experience (A/B test) the variation belongs to.
    public let experienceId: String?
    /// The variation within the experience.
    public let variationId: String?
    /// The decision that selected it; tracking URLs usually name it.
    public let decisionId: String?
    /// The A/B test the decision belongs to, when the service runs one (the service sends it;
    /// the SDKs do not read it yet).
    public let testId: String?
    /// The blocks to render, in order.
    public let contents: [CampaignContent]

    /// For hosts' own tests, which build answers without the service; the engine decodes its own.
    public init(
        campaignId: String?, experienceId: String?, variationId: String?, decisionId: String?, testId: String? = nil,
        contents: [CampaignContent]
    ) {
        self.campaignId = campaignId
        self.experienceId = experienceId
        self.variationId = variationId
        self.decisionId = decisionId
        self.testId = testId
        self.contents = contents
    }
}

/// One content of a variation: a block the host renders itself, with its tracking data.
public struct CampaignContent: Sendable, Hashable {
    /// Identifies the content in Gravity's reports; a host may key its rendering on it.
    public let contentId: String?
    /// `custom` for Custom JSON contents, a template name otherwise.
    public let contentType: String?
    /// `inline`, `modal`, … as the campaign editor set it.
    public let deliveryMethod: String?
    /// The Custom JSON string; the engine never decodes it into an app model (E1, C1).
    public let custom: CustomModel?
    /// Tracking URLs by event type (`load`, `impression`, …), as the service sent them.
    public let events: [ContentEvent]
    /// The content's `variables` object as received (server-driven UI and the `on…` actions
    /// that name which of `events` to fire when); `nil` when absent.
    public let variables: [String: JSONValue]?
    /// The ranked products of a recommendation content (`products.slots`), for a widget the
    /// host renders itself (B12); `nil` when the content has none.
    public let products: Products?
    /// The answer the content came in: the identity it was selected for, and the user its
    /// engagement is logged for (B12, AN3); `nil` for a content the host built itself. Not part
    /// of the content's identity: two answers' equal contents are equal.
    var origin: ContentOrigin?

    /// For hosts' own tests, which build answers without the service; the engine decodes its own.
    public init(
        contentId: String?, contentType: String?, deliveryMethod: String?, custom: CustomModel?,
        events: [ContentEvent] = [], variables: [String: JSONValue]? = nil, products: Products? = nil
    ) {
        self.contentId = contentId
        self.contentType = contentType
        self.deliveryMethod = deliveryMethod
        self.custom = custom
        self.events = events
        self.variables = variables
        self.products = products
    }

    /// Contents compare by what the service sent; where they came from is not compared.
    public static func == (lhs: CampaignContent, rhs: CampaignContent) -> Bool {
        lhs.contentId == rhs.contentId && lhs.contentType == rhs.contentType
            && lhs.deliveryMethod == rhs.deliveryMethod && lhs.custom == rhs.custom && lhs.events == rhs.events
            && lhs.variables == rhs.variables && lhs.products == rhs.products
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(contentId)
        hasher.combine(contentType)
        hasher.combine(deliveryMethod)
        hasher.combine(custom)
        hasher.combine(events)
        hasher.combine(variables)
        hasher.combine(products)
    }

    /// The event type `variables.onLoad.action` names, if any: what content load tracking
    /// requests when the content arrives (B7).
    public var onLoadAction: String? { variables?["onLoad"]?["action"]?.stringValue }

    /// The URLs content load tracking requests for this content (B7): every URL of the first
    /// `events` entry whose type is `variables.onLoad.action`, as the base SDK does. Empty when
    /// the content names no load action.
    public var loadTrackingURLs: [String] {
        guard let action = onLoadAction else { return [] }
        return events.first { $0.type == action }?.urls ?? []
    }

    /// The event type an engagement requests (B12): for a click, `click`, the type the events
    /// carry; for the others, what the content's `variables` name (`variables.onImpression
    /// .action`, …), as the base SDKs' `ContentEventService` reads it — only an action the SDK
    /// knows, so that `onImpression.action: "click"` is no click.
    func engagementAction(_ kind: ContentEngagementKind) -> String? {
        guard let variable = kind.variable else { return "click" }
        guard let action = variables?[variable]?["action"]?.stringValue, Self.knownActions.contains(action) else {
            return nil
        }
        return action
    }

    /// The content actions the vendor's SDKs know; any other parses as unknown there and fires
    /// nothing (flutter's `Action`).
    static let knownActions: Set<String> = [
        "load", "impression", "visible_impression", "close", "copy", "cancel", "follow_url", "follow_deeplink",
        "request_push", "request_tracking", "open_step",
    ]

    /// Every URL the content's `events` carry for `type`, in order, duplicates included (B12).
    func trackingURLs(_ type: String) -> [String] {
        events.filter { $0.type == type }.flatMap(\.urls)
    }
}

/// Where a content came from (B12, AN3): the identity of the answer it was selected in, so
/// that an engagement reported after an identity change is not sent as the new user, and the
/// user its tracking is logged for.
struct ContentOrigin: Sendable, Hashable {
    let identityEpoch: UInt64
    let user: GravityUser
}

extension ContentResponse {
    /// The same answer, each content stamped with where it came from (B12, AN3).
    func bound(to origin: ContentOrigin) -> ContentResponse {
        ContentResponse(
            data: data.map { campaign in
                Campaign(
                    selector: campaign.selector,
                    payload: campaign.payload.map { variation in
                        CampaignVariation(
                            campaignId: variation.campaignId, experienceId: variation.experienceId,
                            variationId: variation.variationId, decisionId: variation.decisionId,
                            testId: variation.testId,
                            contents: variation.contents.map { content in
                                var bound = content
                                bound.origin = origin
                                return bound
                            })
                    })
            })
    }
}

/// `content.custom`: the Custom JSON, which travels as a string the app parses (seed 002).
public struct CustomModel: Sendable, Hashable {
    /// The JSON text exactly as the campaign editor holds it.
    public let json: String?

    /// For hosts' own tests, which build answers without the service; the engine decodes its own.
    public init(json: String?) { self.json = json }
}

/// One `events[]` entry of a content: the URLs to request for one kind of engagement.
public struct ContentEvent: Sendable, Hashable {
    /// `load`, `impression`, `visible_impression`, `close`, … as the service spells it.
    public let type: String
    /// The tracking URLs, as received.
    public let urls: [String]

    /// For hosts' own tests, which build answers without the service; the engine decodes its own.
    public init(type: String, urls: [String]) {
        self.type = type
        self.urls = urls
    }
}
