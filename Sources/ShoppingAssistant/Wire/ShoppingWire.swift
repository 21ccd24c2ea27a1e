import Foundation

// MARK: - Shopping API wire models (wire.md § Shopping API). Keep every shape here, so that
// adapting to the real service is a local change. Each body's `JSONBodyWritable` conformance,
// beside its type, is its only description, members in ascending UTF-8 order of their keys.

/// `runtimeContext`, sent with every Shopping API call (S2, S3, D14).
struct ShoppingRuntimeContext: Hashable, Sendable {
    var tenantId: String
    var uid: String
    var selector: String
    var campaignId: String?
    var page: PageContext
}

extension ShoppingRuntimeContext: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("campaignId", ifPresent: campaignId)
            json.member("page", page)
            json.member("selector", selector)
            json.member("tenant_id", tenantId)
            json.member("uid", uid)
        }
    }
}

/// `POST /v1/messages`; its bytes are written once and kept, so a retry sends them again (D6).
struct ShoppingMessageRequest: Hashable, Sendable {
    var threadId: String
    var messageId: String
    var resourceId: String
    var text: String
    var runtimeContext: ShoppingRuntimeContext
}

extension ShoppingMessageRequest: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("messageId", messageId)
            json.member("resourceId", resourceId)
            json.member("runtimeContext", runtimeContext)
            json.member("text", text)
            json.member("threadId", threadId)
        }
    }
}

/// `POST /v1/feedback`: a rating of one reply.
struct ShoppingFeedbackRequest: Hashable, Sendable {
    var threadId: String
    var messageId: String
    var resourceId: String
    var rating: String
    var runtimeContext: ShoppingRuntimeContext
}

extension ShoppingFeedbackRequest: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("messageId", messageId)
            json.member("rating", rating)
            json.member("resourceId", resourceId)
            json.member("runtimeContext", runtimeContext)
            json.member("threadId", threadId)
        }
    }
}

/// A product as the reply carried it, with its tracking URLs, which never leave the engine (PR2).
///
/// A view into its reply's `ReplyStorage`: the strings are read from there when asked for.
struct ReplyProduct: Sendable, Hashable {
    /// Where each field lies in the storage.
    struct Fields: Sendable, Hashable {
        var itemId = StoredText.absent
        var name = StoredText.absent
        var sku = StoredText.absent
        var url = StoredText.absent
        var imageUrl = StoredText.absent
        var price = StoredPrice.none
        var oldPrice = StoredPrice.none
        var currency = StoredText.absent
        var category = StoredText.absent
        var brand = StoredText.absent
        /// The raw JSON of every other field, as one object.
        var extras = StoredText.absent
        var clicks = StoredList.empty
        var visibleImpressions = StoredList.empty
    }

    enum StoredPrice: Sendable, Hashable {
        case none
        case amount(Double)
        case text(StoredText)
    }

    /// Tracking URLs of the two product events (AN5), valid http(s) only, in reply order.
    struct Tracking: Sendable, Hashable {
        let clickURLs: [String]
        let visibleImpressionURLs: [String]
    }

    private let storage: ReplyStorage
    private let fields: Fields

    init(storage: ReplyStorage, fields: Fields) {
        self.storage = storage
        self.fields = fields
    }

    /// Decodes one item leniently (PR1): `nil` when it is not an object, or `itemId` (string
    /// or number) or `name` (string) is missing. For tests and callers holding a `JSONValue`.
    init?(json: JSONValue) {
        let envelope: JSONValue = ["products": ["items": [json]]]
        guard let product = ReplyDecoder.decode(WireJSON.encode(envelope), idKey: .assistantMessageId)?.products?.first
        else { return nil }
        self = product
    }

    var itemId: String { storage.text(fields.itemId) ?? "" }
    var name: String { storage.text(fields.name) ?? "" }
    var sku: String? { storage.text(fields.sku) }
    var url: String? { storage.text(fields.url) }
    var imageUrl: String? { storage.text(fields.imageUrl) }
    var price: AssistantPrice? { price(fields.price) }
    var oldPrice: AssistantPrice? { price(fields.oldPrice) }
    var currency: String? { storage.text(fields.currency) }
    var category: String? { storage.text(fields.category) }
    var brand: String? { storage.text(fields.brand) }
    /// Every other field of the item, keys as received (PR1); decoded on first access.
    var extra: [String: JSONValue] { storage.object(fields.extras) }
    var tracking: Tracking {
        Tracking(clickURLs: clickURLs, visibleImpressionURLs: visibleImpressionURLs)
    }

    /// The `click` URLs alone, read from the storage only when asked for (AN5).
    var clickURLs: [String] { storage.texts(fields.clicks) }
    /// The `visible_impression` URLs alone (AN5).
    var visibleImpressionURLs: [String] { storage.texts(fields.visibleImpressions) }
    /// The same URLs as `clickURLs` and `visibleImpressionURLs`, to be requested: their text
    /// is made where they are.
    var clickTrackingURLs: ReplyStorage.TrackingURLs { storage.trackingURLs(fields.clicks) }
    var visibleImpressionTrackingURLs: ReplyStorage.TrackingURLs { storage.trackingURLs(fields.visibleImpressions) }

    var canOpen: Bool { Self.isPresent(fields.sku) || Self.isPresent(fields.url) }

    /// The host's view of this product under a given ref.
    func product(ref: AssistantProductRef) -> AssistantProduct {
        AssistantProduct(
            itemId: itemId, ref: ref, name: name, sku: sku, url: url, imageUrl: imageUrl, price: price,
            oldPrice: oldPrice, currency: currency, category: category, brand: brand,
            extras: extras)
    }

    private static func isPresent(_ text: StoredText) -> Bool { !text.isAbsent && text.count > 0 }

    private func price(_ stored: StoredPrice) -> AssistantPrice? {
        switch stored {
        case .none: return nil
        case .amount(let value): return .amount(value)
        case .text(let text): return storage.text(text).map { .text($0) }
        }
    }

    static func == (lhs: ReplyProduct, rhs: ReplyProduct) -> Bool {
        if lhs.storage === rhs.storage, lhs.fields == rhs.fields { return true }
        return lhs.itemId == rhs.itemId && lhs.name == rhs.name && lhs.sku == rhs.sku && lhs.url == rhs.url
            && lhs.imageUrl == rhs.imageUrl && lhs.price == rhs.price && lhs.oldPrice == rhs.oldPrice
            && lhs.currency == rhs.currency && lhs.category == rhs.category && lhs.brand == rhs.brand
            && lhs.tracking == rhs.tracking && lhs.extras == rhs.extras
    }

    /// The extras, still undecoded: equal texts compare equal without decoding.
    private var extras: LazyJSONObject { LazyJSONObject(storage: storage, text: fields.extras) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(itemId)
        hasher.combine(name)
    }
}

/// A decoded assistant reply, from `/v1/messages` or from history (D5), as `ReplyDecoder`
/// stores it: a few scalars and views into one `ReplyStorage`.
struct ReplyContent: Sendable, Hashable {
    private let storage: ReplyStorage
    let assistantMessageId: String?
    private let replyToText: StoredText
    private let bodyText: StoredText
    private let titleText: StoredText
    /// `nil` when the reply has no `products`; an empty array for an empty block (PR2).
    let products: [ReplyProduct]?
    private let suggestList: StoredList
    /// Buttons that are objects with an `action`, routed (AC3); ones not offered included.
    let buttons: [ReplyButton]
    private let impressionList: StoredList
    /// Items and buttons dropped as malformed, for diagnostics.
    let diagnostics: [String]
    /// The bytes the reply was decoded from, for the dialog store (D18); not part of equality.
    var received: ReceivedReply?

    init(
        storage: ReplyStorage, assistantMessageId: String?, replyTo: StoredText, text: StoredText,
        productsTitle: StoredText, products: [ReplyProduct]?, suggests: StoredList, buttons: [ReplyButton],
        impressionURLs: StoredList, diagnostics: [String]
    ) {
        self.storage = storage
        self.assistantMessageId = assistantMessageId
        replyToText = replyTo
        bodyText = text
        titleText = productsTitle
        self.products = products
        suggestList = suggests
        self.buttons = buttons
        impressionList = impressionURLs
        self.diagnostics = diagnostics
    }

    /// Decodes a reply held as a `JSONValue` (tests, history written by hand): `idKey` names
    /// the member with the reply's ID. `nil` when `json` is not an object.
    init?(json: JSONValue, idKey: ReplyDecoder.IdentifierKey) {
        guard let reply = ReplyDecoder.decode(WireJSON.encode(json), idKey: idKey) else { return nil }
        self = reply
    }

    /// The user message this replies to: `replyTo`, else `messageId`.
    var replyTo: String? { storage.text(replyToText) }
    var text: String { storage.text(bodyText) ?? "" }
    var productsTitle: String? { storage.text(titleText) }
    /// `ui.suggests`, strings only.
    var suggests: [String] { storage.texts(suggestList) }
    /// Reply-level `events[type=impression]` URLs, valid http(s) only (AN7).
    var impressionURLs: [String] { storage.texts(impressionList) }
    /// The same URLs, to be requested: their text is made where they are.
    var impressionTrackingURLs: ReplyStorage.TrackingURLs { storage.trackingURLs(impressionList) }

    static func == (lhs: ReplyContent, rhs: ReplyContent) -> Bool {
        if lhs.storage === rhs.storage, lhs.assistantMessageId == rhs.assistantMessageId,
            lhs.replyToText == rhs.replyToText, lhs.bodyText == rhs.bodyText, lhs.titleText == rhs.titleText,
            lhs.products == rhs.products, lhs.suggestList == rhs.suggestList, lhs.buttons == rhs.buttons,
            lhs.impressionList == rhs.impressionList, lhs.diagnostics == rhs.diagnostics
        {
            return true
        }
        return lhs.assistantMessageId == rhs.assistantMessageId && lhs.replyTo == rhs.replyTo && lhs.text == rhs.text
            && lhs.productsTitle == rhs.productsTitle && lhs.products == rhs.products && lhs.suggests == rhs.suggests
            && lhs.buttons == rhs.buttons && lhs.impressionURLs == rhs.impressionURLs
            && lhs.diagnostics == rhs.diagnostics
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(assistantMessageId)
        hasher.combine(text)
    }
}

/// One history entry (wire.md § GET history): what reconciliation looks at (D5). An
/// assistant message comes with its reply already read, so the dialog machine never sees bytes.
struct HistoryMessage: Sendable, Hashable {
    let id: String?
    let role: String
    let replyTo: String?
    /// The message read as a reply (its `id` is the assistant message ID); assistant messages only.
    let reply: ReplyContent?

    init(id: String?, role: String, replyTo: String?, reply: ReplyContent?) {
        self.id = id
        self.role = role
        self.replyTo = replyTo
        self.reply = reply
    }

    /// A history entry written as a `JSONValue` (tests).
    init(id: String?, role: String, replyTo: String?, json: JSONValue) {
        self.init(
            id: id, role: role, replyTo: replyTo,
            reply: role == "assistant" ? ReplyDecoder.decode(WireJSON.encode(json), idKey: .id) : nil)
    }
}
