import Foundation
import ShoppingAssistant

extension DemoStore {
    /// What the demo campaigns say and how strict the store is. Change it at runtime with
    /// `DemoStore.updateConfiguration(_:)`; the next request sees the change.
    public struct Configuration: Sendable, Hashable {
        /// How the assistant campaign's content is shaped, to show the configuration rules
        /// C4–C6 (and C5's notFound) without a real campaign editor.
        public enum AssistantCampaignShape: String, Sendable, Hashable, CaseIterable {
            /// One campaign with one well-formed configuration.
            case normal
            /// Two campaigns with different configurations (C4: `invalid_configuration`).
            case conflicting
            /// The same configuration twice (C4: identical duplicates are one configuration).
            case duplicated
            /// A content without `custom.json` (C5/C6: `invalid_configuration`).
            case missingJSON = "missing-json"
            /// `custom.json` that does not parse (C6: `invalid_configuration`).
            case malformedJSON = "malformed-json"
            /// No campaign at all: empty `data` (C5: `.unavailable(.notFound)`).
            case absent
        }

        /// The entry-point selector (E1).
        public var entrySelector = "assistant-entry"
        /// The assistant selector (C1).
        public var assistantSelector = "shopping-assistant"
        /// The recommendation widget's selector: a content with `products.slots` from the
        /// catalogue, for a host that renders the widget itself (B12, `DemoRecommendations`).
        public var recommendationSelector = "recommendations"
        /// The entry campaign's `enabled`; `false` hides the entry button (E1).
        public var entryEnabled = true
        /// The assistant configuration's `enabled`; `false` gives `.unavailable(.disabled)` (C2).
        public var assistantEnabled = true
        /// The entry button title.
        public var entryTitle = "Спросите помощника"
        /// The start screen title.
        public var assistantTitle = "Помощник магазина"
        /// The start screen subtitle.
        public var assistantSubtitle = "Помогу выбрать подходящий товар."
        /// The start screen suggests.
        public var assistantSuggests = ["Помогите выбрать подарок", "Нужны наушники", "Покажи кружки"]
        /// Page types the entry campaign targets; on other pages `/choose` returns no data for it.
        /// `nil` targets every page.
        public var entryPageTypes: Set<PageContext.PageType>?
        /// Page types the assistant campaign targets; on other pages `/choose` returns no data,
        /// which the engine reports as `.unavailable(.notFound)` (C5). `nil` targets every page.
        public var assistantPageTypes: Set<PageContext.PageType>?
        /// The shape of the assistant campaign.
        public var assistantCampaignShape = AssistantCampaignShape.normal
        /// Whether `/visit` and `/event` answer with an auto-shown in-app campaign on every
        /// page (to show B6/O7).
        public var promoCampaignOnVisit = false
        /// Whether the page views of `DemoCatalog.campaignScreens` answer with their campaign.
        public var campaignScreens = true
        /// Whether the events of `DemoCatalog.eventCampaigns` answer with their campaign (a
        /// cart reminder after `add-to-cart-v1`, a thank-you after `purchase-v1`).
        public var eventCampaigns = true
        /// How long a page view that brings a campaign takes to answer: choosing a campaign takes
        /// the demo's server a moment, so the screen's entry flow (which never waits for the page
        /// view, E5) is done first and a piped session prints in one order.
        public var campaignVisitLatency: Duration = .milliseconds(300)
        /// The only Gravity key accepted; `nil` accepts any non-empty bearer key.
        public var apiKey: String?
        /// The only `tenant_id` accepted by the Shopping API; `nil` accepts any non-empty one.
        public var tenant: String?
        /// How long the `slow-reply` fault holds a reply back.
        public var slowReplyLatency: Duration = .seconds(5)
        /// How long the `slow-choose` fault holds `/choose` back; longer than the 10 s
        /// preparation timeout by default.
        public var slowChooseLatency: Duration = .seconds(15)
        /// The time of the first stored message; later ones are one second apart (`createdAt`).
        public var historyEpoch = Date(timeIntervalSince1970: 1_767_261_600)

        /// The default demo configuration: both campaigns on every page, any key accepted.
        public init() {}
    }
}
