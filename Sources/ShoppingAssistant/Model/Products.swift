/// `content.products`: the ranked products of a recommendation content, as the base SDK's
/// `Products`. A host that renders a widget itself draws `slots` in their order, and reports
/// what the shopper saw and tapped with ``AssistantEngine/sendProductEngagement(_:)`` (B12).
public struct Products: Sendable, Hashable {
    /// The recommendation strategy the service chose.
    public let strategyId: String?
    /// Whether the service fell back to its fallback strategy.
    public let fallback: Bool
    /// The strategy's name, for the host's own diagnostics.
    public let name: String?
    /// The products, ranked: draw them in this order. `nil` when the content has none.
    public let slots: [Slot]?
    /// The page of a paged recommendation, when there is one.
    public let pageNumber: Int?
    /// How many pages there are, when paged.
    public let countPages: Int?

    /// For hosts' own tests, which build answers without the service; the engine decodes its own.
    public init(
        strategyId: String?, fallback: Bool = false, name: String? = nil, slots: [Slot]?, pageNumber: Int? = nil,
        countPages: Int? = nil
    ) {
        self.strategyId = strategyId
        self.fallback = fallback
        self.name = name
        self.slots = slots
        self.pageNumber = pageNumber
        self.countPages = countPages
    }
}

/// One ranked product of ``Products``: the feed's data for it and its tracking URLs, as the
/// base SDK's `Slot`.
public struct Slot: Sendable, Hashable {
    /// The product's data from the feed (`name`, `price`, `imageUrl`, `url`, the feed's own
    /// fields), exactly as received.
    public let item: [String: JSONValue]
    /// Whether this product came from the fallback strategy.
    public let fallback: Bool
    /// The strategy's id for the slot, when the service sends one.
    public let strId: Int?
    /// The slot's id, when the service sends one.
    public let slotId: String?
    /// Tracking URLs by engagement type (`visible_impression`, `click`), as received (B12).
    public let events: [ProductEvent]

    /// For hosts' own tests, which build answers without the service; the engine decodes its own.
    public init(
        item: [String: JSONValue], fallback: Bool = false, strId: Int? = nil, slotId: String? = nil,
        events: [ProductEvent] = []
    ) {
        self.item = item
        self.fallback = fallback
        self.strId = strId
        self.slotId = slotId
        self.events = events
    }

    /// Every URL the slot's `events` carry for `type`, in order, duplicates included.
    func trackingURLs(_ type: String) -> [String] {
        events.filter { $0.type == type }.flatMap(\.urls)
    }
}

/// One `events[]` entry of a ``Slot``: the URLs to request for one kind of product
/// engagement, as the base SDK's `ProductEvent`.
public struct ProductEvent: Sendable, Hashable {
    /// `visible_impression` or `click`, as the service spells it (other types are kept).
    public let type: String
    /// The tracking URLs, as received.
    public let urls: [String]

    /// For hosts' own tests, which build answers without the service; the engine decodes its own.
    public init(type: String, urls: [String]) {
        self.type = type
        self.urls = urls
    }
}
