/// What the shopper did with a content the host renders itself (B12): pass one to
/// ``AssistantEngine/sendContentEngagement(_:)``. The engine's types are the base SDK's:
/// ``ContentImpressionEngagement``, ``ContentVisibleImpressionEngagement``,
/// ``ContentClickEngagement`` and ``ContentCloseEngagement``, made from the `content` and `campaign` of a
/// ``AssistantEngine/getContentBySelector(selector:pageContext:)`` answer.
///
/// The engine sends no engagement of its own for content the host renders: only what the
/// host reports. A conforming type of the host's own is refused with a log line.
public protocol ContentEngagement: Sendable, Hashable {
    /// The content engaged with, as the answer held it.
    var content: CampaignContent { get }
    /// The answer's entry the content belongs to.
    var campaign: Campaign { get }
}

/// Which content engagement an engine type is.
enum ContentEngagementKind: String, Sendable, Hashable {
    case impression, visibleImpression, close, click

    /// The `variables` entry whose action names the `events` type to request, as the base
    /// SDK's `ContentEventService` reads it; `nil` for a click, which requests the events of
    /// type `click` itself.
    var variable: String? {
        switch self {
        case .impression: return "onImpression"
        case .visibleImpression: return "onVisibleImpression"
        case .close: return "onClose"
        case .click: return nil
        }
    }
}

/// The engine's own content engagements.
protocol KnownContentEngagement: ContentEngagement {
    var kind: ContentEngagementKind { get }
}

/// The widget was drawn for the first time: report it once per content shown.
public struct ContentImpressionEngagement: KnownContentEngagement {
    /// The content drawn.
    public let content: CampaignContent
    /// Its entry of the answer.
    public let campaign: Campaign
    var kind: ContentEngagementKind { .impression }

    /// `content` of `campaign` was drawn.
    public init(content: CampaignContent, campaign: Campaign) {
        self.content = content
        self.campaign = campaign
    }
}

/// At least half of the widget has been in view for a second: report it once per content.
public struct ContentVisibleImpressionEngagement: KnownContentEngagement {
    /// The content seen.
    public let content: CampaignContent
    /// Its entry of the answer.
    public let campaign: Campaign
    var kind: ContentEngagementKind { .visibleImpression }

    /// `content` of `campaign` was seen.
    public init(content: CampaignContent, campaign: Campaign) {
        self.content = content
        self.campaign = campaign
    }
}

/// The shopper closed the widget.
public struct ContentCloseEngagement: KnownContentEngagement {
    /// The content closed.
    public let content: CampaignContent
    /// Its entry of the answer.
    public let campaign: Campaign
    var kind: ContentEngagementKind { .close }

    /// `content` of `campaign` was closed.
    public init(content: CampaignContent, campaign: Campaign) {
        self.content = content
        self.campaign = campaign
    }
}

/// The shopper tapped the widget: requests the content's `events` of type `click`, as the
/// vendor's newest SDK does, whatever its `variables` say.
public struct ContentClickEngagement: KnownContentEngagement {
    /// The content tapped.
    public let content: CampaignContent
    /// Its entry of the answer.
    public let campaign: Campaign
    var kind: ContentEngagementKind { .click }

    /// `content` of `campaign` was tapped.
    public init(content: CampaignContent, campaign: Campaign) {
        self.content = content
        self.campaign = campaign
    }
}
