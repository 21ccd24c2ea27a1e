/// What `getContentBySelector` returns: the campaigns Gravity selected, in its order (B5).
public struct ContentResponse: Sendable, Hashable {
    public let campaigns: [Campaign]

    public init(campaigns: [Campaign]) { self.campaigns = campaigns }

    /// True when nothing matched: no campaign, or no content in any (C5).
    public var isEmpty: Bool { campaigns.allSatisfy { $0.contents.isEmpty } }
}

/// One selected campaign variation.
public struct Campaign: Sendable, Hashable {
    public let campaignId: String?
    public let experienceId: String?
    public let variationId: String?
    public let decisionId: String?
    public let contents: [CampaignContent]

    public init(
        campaignId: String?, experienceId: String?, variationId: String?, decisionId: String?,
        contents: [CampaignContent]
    ) {
        self.campaignId = campaignId
        self.experienceId = experienceId
        self.variationId = variationId
        self.decisionId = decisionId
        self.contents = contents
    }
}

/// One content of a campaign. `customJSON` is the string the campaign editor holds (E1, C1).
public struct CampaignContent: Sendable, Hashable {
    public let contentId: String?
    public let contentType: String?
    public let deliveryMethod: String?
    public let customJSON: String?

    public init(contentId: String?, contentType: String?, deliveryMethod: String?, customJSON: String?) {
        self.contentId = contentId
        self.contentType = contentType
        self.deliveryMethod = deliveryMethod
        self.customJSON = customJSON
    }
}

extension ContentResponse {
    init(wire: GravityChooseResponse) {
        let payloads = (wire.data ?? []).flatMap { $0.payload ?? [] }
        campaigns = payloads.map { payload in
            Campaign(
                campaignId: payload.campaignId, experienceId: payload.experienceId,
                variationId: payload.variationId, decisionId: payload.decisionId,
                contents: (payload.contents ?? []).map {
                    CampaignContent(
                        contentId: $0.contentId, contentType: $0.contentType,
                        deliveryMethod: $0.deliveryMethod, customJSON: $0.custom?.json)
                })
        }
    }
}
