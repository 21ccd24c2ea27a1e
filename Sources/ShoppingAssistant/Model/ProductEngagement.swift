/// What the shopper did with a product card of a widget the host renders itself (B12): pass
/// one to ``AssistantEngine/sendProductEngagement(_:)``. The engine's types are the base
/// SDK's: ``ProductClickEngagement`` and ``ProductVisibleImpressionEngagement``, made from a
/// ``Slot`` of `content.products` and the `content` and `campaign` it came in.
///
/// A conforming type of the host's own is refused with a log line.
public protocol ProductEngagement: Sendable, Hashable {
    /// The product engaged with.
    var slot: Slot { get }
    /// The content whose `products` hold the slot.
    var content: CampaignContent { get }
    /// The answer's entry the content belongs to.
    var campaign: Campaign { get }
}

/// The engine's own product engagements: the slot `events` type each requests.
protocol KnownProductEngagement: ProductEngagement {
    var eventType: String { get }
}

/// The shopper tapped the product card: report it before navigating.
public struct ProductClickEngagement: KnownProductEngagement {
    /// The product tapped.
    public let slot: Slot
    /// The content whose products hold it.
    public let content: CampaignContent
    /// Its entry of the answer.
    public let campaign: Campaign
    var eventType: String { "click" }

    /// `slot` of `content` in `campaign` was tapped.
    public init(slot: Slot, content: CampaignContent, campaign: Campaign) {
        self.slot = slot
        self.content = content
        self.campaign = campaign
    }
}

/// At least half of the product card has been in view for a second: report it once per card.
public struct ProductVisibleImpressionEngagement: KnownProductEngagement {
    /// The product seen.
    public let slot: Slot
    /// The content whose products hold it.
    public let content: CampaignContent
    /// Its entry of the answer.
    public let campaign: Campaign
    var eventType: String { "visible_impression" }

    /// `slot` of `content` in `campaign` was seen.
    public init(slot: Slot, content: CampaignContent, campaign: Campaign) {
        self.slot = slot
        self.content = content
        self.campaign = campaign
    }
}
