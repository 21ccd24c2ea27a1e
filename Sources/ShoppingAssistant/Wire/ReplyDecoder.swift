import Foundation

/// Reads a reply — a `/v1/messages` body, or one message of a thread's history — straight
/// from its bytes into `ReplyContent`, without a `JSONValue` tree (wire.md § Shopping API).
///
/// Known fields are taken as they pass: their strings go into the reply's storage, prices
/// and numeric IDs are read as numbers, tracking URLs are checked (`HTTPURLValidator`) and
/// buttons routed (AC3) on the way. Unknown product fields are kept as their raw JSON text
/// and decoded only when read (PR1); so is each button's object, the payload of its action
/// (AC2).
///
/// Strict about JSON (`JSONReader`), lenient about the model exactly as wire.md says: unknown
/// fields are ignored; an optional field that is absent, `null` or of another type counts as
/// absent; a malformed item (not an object, no non-empty `itemId` string or number, no
/// `name` string) or button (not an object, no `action` string) is dropped with a diagnostic;
/// only bytes that are not one JSON text, or an envelope that is not an object, fail the
/// whole reply (`nil`, reported as `invalid_response`). As everywhere in the reader, the last
/// of duplicate member names wins.
struct ReplyDecoder {
    /// The member that carries the reply's own ID.
    enum IdentifierKey: Sendable {
        /// `/v1/messages`: `assistantMessageId`.
        case assistantMessageId
        /// A history message: `id`.
        case id

        /// The field's name in the JSON.
        var name: StaticString {
            switch self {
            case .assistantMessageId: return "assistantMessageId"
            case .id: return "id"
            }
        }
    }

    /// Replies larger than this are rejected. A reply is kilobytes; the bound keeps every
    /// offset into the storage within 32 bits even where numeric IDs print longer than they
    /// were sent (`1e308` is 312 characters).
    static let maximumSize = 64 << 20

    /// Decodes one reply envelope; `nil` when the bytes are not JSON, not an object, or over
    /// `maximumSize`.
    ///
    /// `keepsReceived`: the reply keeps a copy of `data` for a dialog store (D18); an engine
    /// without one copies nothing.
    static func decode(_ data: some ContiguousBytes, idKey: IdentifierKey, keepsReceived: Bool = true)
        -> ReplyContent?
    {
        do throws(JSONReadError) {
            return try JSONReader.read(data) { reader throws(JSONReadError) in
                guard reader.inputCount <= maximumSize, try reader.peek() == .object else { return nil }
                var decoder = ReplyDecoder(idKey: idKey, capacity: reader.inputCount)
                try reader.readObject { reader, key throws(JSONReadError) in try decoder.envelope(&reader, key) }
                try reader.finish()
                var reply = decoder.build(from: reader)
                if keepsReceived {
                    reply.received = ReceivedReply(bytes: data.withUnsafeBytes { Data($0) }, idKey: idKey)  // D18
                }
                return reply
            }
        } catch {
            return nil
        }
    }

    /// A reply's ID and its suggests (`ui.suggests`), read from its bytes as `decode` reads
    /// them, and nothing else taken: the chat of a restored dialog shows its last reply's
    /// suggests (C7) without decoding that reply (D18). The rest is skipped, checked as strictly
    /// as `decode` reads it, so `nil` exactly when `decode` gives `nil`.
    static func suggests(_ data: some ContiguousBytes, idKey: IdentifierKey)
        -> (assistantMessageId: String?, suggests: [String])?
    {
        do throws(JSONReadError) {
            return try JSONReader.read(data) { reader throws(JSONReadError) in
                guard reader.inputCount <= maximumSize, try reader.peek() == .object else { return nil }
                var id: String?
                var suggests: [String] = []
                try reader.readObject { reader, key throws(JSONReadError) in
                    if reader.text(key, is: idKey.name) {
                        id = try reader.readStringOrSkip().flatMap { $0.isEmpty ? nil : $0 }
                    } else if reader.text(key, is: "ui") {
                        suggests = []  // as `ui`: the last `ui` holds the suggests
                        try reader.readObjectOrSkip { reader, key throws(JSONReadError) in
                            guard reader.text(key, is: "suggests") else { return try reader.skipValue() }
                            suggests = []
                            try reader.readArrayOrSkip { reader, _ throws(JSONReadError) in
                                if let text = try reader.readStringOrSkip() { suggests.append(text) }
                            }
                        }
                    } else {
                        try reader.skipValue()
                    }
                }
                try reader.finish()
                return (id, suggests)
            }
        } catch {
            return nil
        }
    }

    /// One button object on its own (`ui.buttons[*]`), as the decoder reads it inside a reply:
    /// `nil` when it is not an object with an `action` string. A restored dialog asks the handler
    /// about its buttons from their objects alone (AC4), without decoding their replies (D18).
    static func button(_ object: some ContiguousBytes) -> ReplyButton? {
        do throws(JSONReadError) {
            return try JSONReader.read(object) { reader throws(JSONReadError) in
                guard reader.inputCount <= maximumSize else { return nil }
                var decoder = ReplyDecoder(idKey: .id, capacity: reader.inputCount)
                try decoder.button(&reader, index: 0)
                try reader.finish()
                return decoder.buttons.first?.button(in: decoder.builder.build())
            }
        } catch {
            return nil
        }
    }

    // MARK: - State

    private let idKey: IdentifierKey
    private var builder: ReplyStorageBuilder

    // Envelope strings are stored when the envelope is done, so a duplicate name leaves nothing behind.
    private var assistantMessageId: String?
    private var replyTo: JSONReader.RawString?
    private var messageId: JSONReader.RawString?
    private var text: JSONReader.RawString?
    private var hasProducts = false
    private var productsTitle: JSONReader.RawString?
    private var products: [ReplyProduct.Fields] = []
    private var productDiagnostics: [String] = []
    private var suggests = StoredList.empty
    private var buttons: [ButtonFields] = []
    private var buttonDiagnostics: [String] = []
    private var impressions = StoredList.empty

    // Scratch space, reused from item to item.
    private var extras: [Range<Int>] = []
    private var texts: [StoredText] = []
    private var clicks: [StoredText] = []
    private var visibleImpressions: [StoredText] = []
    /// The URLs of the event being read, until its type says where they go: one buffer for
    /// every event of the reply, not an array made for each.
    private var eventURLs: [StoredText] = []

    private struct ButtonFields {
        let route: ReplyButton.Route
        let action: StoredText
        let value: StoredText
        let object: StoredText

        func button(in storage: ReplyStorage) -> ReplyButton {
            ReplyButton(storage: storage, route: route, action: action, value: value, object: object)
        }
    }

    private init(idKey: IdentifierKey, capacity: Int) {
        self.idKey = idKey
        builder = ReplyStorageBuilder(capacity: capacity)
    }

    private mutating func build(from reader: JSONReader) -> ReplyContent {
        let replyTo = store(replyTo ?? messageId, from: reader)
        let text = store(text, from: reader)
        let productsTitle = hasProducts ? store(productsTitle, from: reader) : .absent
        let storage = builder.build()
        return ReplyContent(
            storage: storage, assistantMessageId: assistantMessageId, replyTo: replyTo, text: text,
            productsTitle: productsTitle,
            products: hasProducts ? products.map { ReplyProduct(storage: storage, fields: $0) } : nil,
            suggests: suggests,
            buttons: buttons.map { $0.button(in: storage) },
            impressionURLs: impressions, diagnostics: productDiagnostics + buttonDiagnostics)
    }

    // MARK: - Envelope

    private mutating func envelope(_ reader: inout JSONReader, _ key: JSONReader.RawString) throws(JSONReadError) {
        if reader.text(key, is: idKey.name) {
            assistantMessageId = try reader.readStringOrSkip().flatMap { $0.isEmpty ? nil : $0 }
        } else if reader.text(key, is: "text") {
            text = try reader.scanStringOrSkip()
        } else if reader.text(key, is: "products") {
            try productBlock(&reader)
        } else if reader.text(key, is: "ui") {
            try ui(&reader)
        } else if reader.text(key, is: "events") {
            texts.removeAll(keepingCapacity: true)
            try events(&reader, wanted: .impression)
            impressions = builder.appendList(texts)
        } else if reader.text(key, is: "replyTo") {
            replyTo = try reader.scanStringOrSkip()
        } else if reader.text(key, is: "messageId") {
            messageId = try reader.scanStringOrSkip()
        } else {
            try reader.skipValue()
        }
    }

    /// A value seen while an item is read, stored once the item is known to be kept.
    private enum Pending {
        case string(JSONReader.RawString)
        case number(Double)
    }

    private mutating func store(_ raw: JSONReader.RawString?, from reader: JSONReader) -> StoredText {
        raw.map { builder.append($0, from: reader) } ?? .absent
    }

    /// IDs may arrive as numbers; a SKU or item ID of 123 is "123", as `AssistantPrice` prints it.
    private mutating func store(_ pending: Pending?, from reader: JSONReader) -> StoredText {
        switch pending {
        case .string(let raw)?: return builder.append(raw, from: reader)
        case .number(let value)?: return builder.append(AssistantPrice.amount(value).description.utf8)
        case nil: return .absent
        }
    }

    private mutating func storePrice(_ pending: Pending?, from reader: JSONReader) -> ReplyProduct.StoredPrice {
        switch pending {
        case .string(let raw)?: return .text(builder.append(raw, from: reader))
        case .number(let value)?: return .amount(value)
        case nil: return .none
        }
    }

    // MARK: - Products (PR1, PR2)

    private mutating func productBlock(_ reader: inout JSONReader) throws(JSONReadError) {
        products.removeAll()
        productDiagnostics.removeAll()
        productsTitle = nil
        hasProducts = try reader.readObjectOrSkip { reader, key throws(JSONReadError) in
            if reader.text(key, is: "items") {
                products.removeAll()
                productDiagnostics.removeAll()
                try reader.readArrayOrSkip { reader, index throws(JSONReadError) in try item(&reader, index: index) }
            } else if reader.text(key, is: "title") {
                productsTitle = try reader.scanStringOrSkip()
            } else {
                try reader.skipValue()
            }
        }
    }

    private mutating func item(_ reader: inout JSONReader, index: Int) throws(JSONReadError) {
        guard try reader.peek() == .object else {
            try reader.skipValue()
            productDiagnostics.append("dropped product #\(index): itemId and name are required")
            return
        }
        let mark = builder.mark
        var itemId: Pending?
        var name: JSONReader.RawString?
        var sku: Pending?
        var url: JSONReader.RawString?
        var imageUrl: JSONReader.RawString?
        var price: Pending?
        var oldPrice: Pending?
        var currency: JSONReader.RawString?
        var category: JSONReader.RawString?
        var brand: JSONReader.RawString?
        extras.removeAll(keepingCapacity: true)
        clicks.removeAll(keepingCapacity: true)
        visibleImpressions.removeAll(keepingCapacity: true)
        try reader.readObject { reader, key throws(JSONReadError) in
            if reader.text(key, is: "name") {
                name = try reader.scanStringOrSkip()
            } else if reader.text(key, is: "itemId") {
                itemId = try Self.stringOrNumber(&reader)
            } else if reader.text(key, is: "sku") {
                sku = try Self.stringOrNumber(&reader)
            } else if reader.text(key, is: "url") {
                url = try reader.scanStringOrSkip()
            } else if reader.text(key, is: "imageUrl") {
                imageUrl = try reader.scanStringOrSkip()
            } else if reader.text(key, is: "price") {
                price = try Self.price(&reader)
            } else if reader.text(key, is: "oldPrice") {
                oldPrice = try Self.price(&reader)
            } else if reader.text(key, is: "currency") {
                currency = try reader.scanStringOrSkip()
            } else if reader.text(key, is: "category") {
                category = try reader.scanStringOrSkip()
            } else if reader.text(key, is: "brand") {
                brand = try reader.scanStringOrSkip()
            } else if reader.text(key, is: "events") {
                clicks.removeAll(keepingCapacity: true)
                visibleImpressions.removeAll(keepingCapacity: true)
                try events(&reader, wanted: .product)
            } else {
                // An extra field (PR1): kept as its raw member text, from the name's quote.
                let value = try reader.skipValueReturningRange()
                extras.append((key.start - 1)..<value.upperBound)
            }
        }
        let hasItemId: Bool
        switch itemId {
        case .string(let raw)?: hasItemId = raw.end > raw.start
        case .number?: hasItemId = true
        case nil: hasItemId = false
        }
        guard hasItemId, name != nil else {
            builder.rollBack(to: mark)
            productDiagnostics.append("dropped product #\(index): itemId and name are required")
            return
        }
        var fields = ReplyProduct.Fields()
        fields.itemId = store(itemId, from: reader)
        fields.name = store(name, from: reader)
        fields.sku = store(sku, from: reader)
        fields.url = store(url, from: reader)
        fields.imageUrl = store(imageUrl, from: reader)
        fields.price = storePrice(price, from: reader)
        fields.oldPrice = storePrice(oldPrice, from: reader)
        fields.currency = store(currency, from: reader)
        fields.category = store(category, from: reader)
        fields.brand = store(brand, from: reader)
        fields.clicks = builder.appendList(clicks)
        fields.visibleImpressions = builder.appendList(visibleImpressions)
        if !extras.isEmpty { fields.extras = builder.appendObject(members: extras, from: reader) }
        products.append(fields)
    }

    private static func stringOrNumber(_ reader: inout JSONReader) throws(JSONReadError) -> Pending? {
        switch try reader.peek() {
        case .string: return .string(try reader.scanString())
        case .number: return .number(try reader.readNumber())
        default:
            try reader.skipValue()
            return nil
        }
    }

    /// A number, or a non-empty string as the server formatted it.
    private static func price(_ reader: inout JSONReader) throws(JSONReadError) -> Pending? {
        let value = try stringOrNumber(&reader)
        if case .string(let raw)? = value, raw.end == raw.start { return nil }
        return value
    }

    // MARK: - Tracking events (AN5, AN7)

    /// Which event types a caller keeps.
    private enum WantedEvents {
        /// A reply's `impression`.
        case impression
        /// A product's `click` and `visible_impression`.
        case product
    }

    /// Reads `events: [{type, urls}]`: valid http(s) URLs of the wanted types go to `texts`
    /// (impressions), `clicks` and `visibleImpressions`, in order; everything else is skipped.
    private mutating func events(_ reader: inout JSONReader, wanted: WantedEvents) throws(JSONReadError) {
        try reader.readArrayOrSkip { reader, _ throws(JSONReadError) in
            guard try reader.peek() == .object else { return try reader.skipValue() }
            // Only this event's URLs are appended while it is read, so dropping them is a roll-back.
            let mark = builder.mark
            eventURLs.removeAll(keepingCapacity: true)
            var type: RawTypeMatch = .other
            try reader.readObject { reader, key throws(JSONReadError) in
                if reader.text(key, is: "type") {
                    type = .other
                    guard let raw = try reader.scanStringOrSkip() else { return }
                    if reader.text(raw, is: "click") {
                        type = .click
                    } else if reader.text(raw, is: "visible_impression") {
                        type = .visibleImpression
                    } else if reader.text(raw, is: "impression") {
                        type = .impression
                    }
                } else if reader.text(key, is: "urls") {
                    builder.rollBack(to: mark)
                    eventURLs.removeAll(keepingCapacity: true)
                    try reader.readArrayOrSkip { reader, _ throws(JSONReadError) in
                        guard let raw = try reader.scanStringOrSkip() else { return }
                        let url = builder.append(raw, from: reader)
                        if builder.withBytes(url, HTTPURLValidator.isValid) {
                            eventURLs.append(url)
                        } else {
                            builder.drop(url)
                        }
                    }
                } else {
                    try reader.skipValue()
                }
            }
            switch (wanted, type) {
            case (.impression, .impression): texts += eventURLs
            case (.product, .click): clicks += eventURLs
            case (.product, .visibleImpression): visibleImpressions += eventURLs
            default: builder.rollBack(to: mark)
            }
        }
    }

    private enum RawTypeMatch {
        case impression, click, visibleImpression, other
    }

    // MARK: - UI: suggests and buttons (C7, AC1–AC4)

    private mutating func ui(_ reader: inout JSONReader) throws(JSONReadError) {
        suggests = .empty
        buttons.removeAll()
        buttonDiagnostics.removeAll()
        try reader.readObjectOrSkip { reader, key throws(JSONReadError) in
            if reader.text(key, is: "suggests") {
                texts.removeAll(keepingCapacity: true)
                try reader.readArrayOrSkip { reader, _ throws(JSONReadError) in
                    // A suggest that is not a string is left out; it is not worth a diagnostic.
                    if let raw = try reader.scanStringOrSkip() { texts.append(builder.append(raw, from: reader)) }
                }
                suggests = builder.appendList(texts)
            } else if reader.text(key, is: "buttons") {
                buttons.removeAll()
                buttonDiagnostics.removeAll()
                try reader.readArrayOrSkip { reader, index throws(JSONReadError) in try button(&reader, index: index) }
            } else {
                try reader.skipValue()
            }
        }
    }

    private mutating func button(_ reader: inout JSONReader, index: Int) throws(JSONReadError) {
        guard try reader.peek() == .object else {
            try reader.skipValue()
            buttonDiagnostics.append("dropped button #\(index): not an object with an action")
            return
        }
        let start = reader.position
        var action: JSONReader.RawString?
        var value: JSONReader.RawString?
        var url: JSONReader.RawString?
        try reader.readObject { reader, key throws(JSONReadError) in
            if reader.text(key, is: "action") {
                action = try reader.scanStringOrSkip()
            } else if reader.text(key, is: "value") {
                value = try reader.scanStringOrSkip()
            } else if reader.text(key, is: "url") {
                url = try reader.scanStringOrSkip()
            } else {
                try reader.skipValue()
            }
        }
        guard let action else {
            buttonDiagnostics.append("dropped button #\(index): not an object with an action")
            return
        }
        // The object is kept as sent; strings without escapes are read from inside it.
        let object = builder.append(reader.bytes(from: start, to: reader.position))
        func place(_ raw: JSONReader.RawString?) -> StoredText {
            guard let raw else { return .absent }
            guard raw.escaped else {
                return StoredText(start: object.start + UInt32(raw.start - start), count: UInt32(raw.end - raw.start))
            }
            return builder.append(raw, from: reader)
        }
        let actionText = place(action)
        let urlText = place(url)
        buttons.append(
            ButtonFields(
                route: ReplyButton.route(action: actionText, url: urlText, in: builder), action: actionText,
                value: place(value), object: object))
    }
}
