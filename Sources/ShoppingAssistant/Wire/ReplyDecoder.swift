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
    }

    /// Decodes one reply envelope; `nil` when the bytes are not JSON or not an object.
    static func decode(_ data: some ContiguousBytes, idKey: IdentifierKey) -> ReplyContent? {
        do throws(JSONReadError) {
            return try JSONReader.read(data) { reader throws(JSONReadError) in
                guard try reader.peek() == .object else { return nil }
                var decoder = ReplyDecoder(idKey: idKey, capacity: reader.inputCount)
                try reader.readObject { reader, key throws(JSONReadError) in try decoder.envelope(&reader, key) }
                try reader.finish()
                return decoder.build()
            }
        } catch {
            return nil
        }
    }

    // MARK: - State

    private let idKey: IdentifierKey
    private var builder: ReplyStorageBuilder

    private var assistantMessageId: String?
    private var replyTo = StoredText.absent
    private var messageId = StoredText.absent
    private var text = StoredText.absent
    private var hasProducts = false
    private var productsTitle = StoredText.absent
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

    private struct ButtonFields {
        let route: ReplyButton.Route
        let action: StoredText
        let value: StoredText
        let object: StoredText
    }

    private init(idKey: IdentifierKey, capacity: Int) {
        self.idKey = idKey
        builder = ReplyStorageBuilder(capacity: capacity)
    }

    private func build() -> ReplyContent {
        let storage = builder.build()
        return ReplyContent(
            storage: storage, assistantMessageId: assistantMessageId, replyTo: replyTo.isAbsent ? messageId : replyTo,
            text: text, productsTitle: hasProducts ? productsTitle : .absent,
            products: hasProducts ? products.map { ReplyProduct(storage: storage, fields: $0) } : nil,
            suggests: suggests,
            buttons: buttons.map {
                ReplyButton(storage: storage, route: $0.route, action: $0.action, value: $0.value, object: $0.object)
            },
            impressionURLs: impressions, diagnostics: productDiagnostics + buttonDiagnostics)
    }

    // MARK: - Envelope

    private mutating func envelope(_ reader: inout JSONReader, _ key: JSONReader.RawString) throws(JSONReadError) {
        let isIdentifier: Bool
        switch idKey {
        case .assistantMessageId: isIdentifier = reader.text(key, is: "assistantMessageId")
        case .id: isIdentifier = reader.text(key, is: "id")
        }
        if isIdentifier {
            assistantMessageId = try reader.readStringOrSkip().flatMap { $0.isEmpty ? nil : $0 }
        } else if reader.text(key, is: "text") {
            text = try string(&reader)
        } else if reader.text(key, is: "products") {
            try productBlock(&reader)
        } else if reader.text(key, is: "ui") {
            try ui(&reader)
        } else if reader.text(key, is: "events") {
            texts.removeAll(keepingCapacity: true)
            try events(&reader, wanted: .impression)
            impressions = builder.appendList(texts)
        } else if reader.text(key, is: "replyTo") {
            replyTo = try string(&reader)
        } else if reader.text(key, is: "messageId") {
            messageId = try string(&reader)
        } else {
            try reader.skipValue()
        }
    }

    /// A string into the storage, or `absent` after skipping a value of another kind.
    private mutating func string(_ reader: inout JSONReader) throws(JSONReadError) -> StoredText {
        guard let raw = try reader.scanStringOrSkip() else { return .absent }
        return builder.append(raw, from: reader)
    }

    // MARK: - Products (PR1, PR2)

    private mutating func productBlock(_ reader: inout JSONReader) throws(JSONReadError) {
        productsTitle = .absent
        products.removeAll()
        productDiagnostics.removeAll()
        hasProducts = try reader.peek() == .object
        guard hasProducts else { return try reader.skipValue() }
        try reader.readObject { reader, key throws(JSONReadError) in
            if reader.text(key, is: "items") {
                products.removeAll()
                productDiagnostics.removeAll()
                guard try reader.peek() == .array else { return try reader.skipValue() }
                var index = 0
                try reader.readArray { reader throws(JSONReadError) in
                    try item(&reader, index: index)
                    index += 1
                }
            } else if reader.text(key, is: "title") {
                productsTitle = try string(&reader)
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
        var fields = ReplyProduct.Fields()
        extras.removeAll(keepingCapacity: true)
        clicks.removeAll(keepingCapacity: true)
        visibleImpressions.removeAll(keepingCapacity: true)
        try reader.readObject { reader, key throws(JSONReadError) in
            if reader.text(key, is: "name") {
                fields.name = try string(&reader)
            } else if reader.text(key, is: "itemId") {
                fields.itemId = try identifier(&reader)
            } else if reader.text(key, is: "sku") {
                fields.sku = try identifier(&reader)
            } else if reader.text(key, is: "url") {
                fields.url = try string(&reader)
            } else if reader.text(key, is: "imageUrl") {
                fields.imageUrl = try string(&reader)
            } else if reader.text(key, is: "price") {
                fields.price = try price(&reader)
            } else if reader.text(key, is: "oldPrice") {
                fields.oldPrice = try price(&reader)
            } else if reader.text(key, is: "currency") {
                fields.currency = try string(&reader)
            } else if reader.text(key, is: "category") {
                fields.category = try string(&reader)
            } else if reader.text(key, is: "brand") {
                fields.brand = try string(&reader)
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
        guard !fields.itemId.isAbsent, fields.itemId.count > 0, !fields.name.isAbsent else {
            builder.rollBack(to: mark)
            productDiagnostics.append("dropped product #\(index): itemId and name are required")
            return
        }
        fields.clicks = builder.appendList(clicks)
        fields.visibleImpressions = builder.appendList(visibleImpressions)
        if !extras.isEmpty { fields.extras = builder.appendObject(members: extras, from: reader) }
        products.append(fields)
    }

    /// IDs may arrive as numbers; a SKU or item ID of 123 is "123", as `AssistantPrice` prints it.
    private mutating func identifier(_ reader: inout JSONReader) throws(JSONReadError) -> StoredText {
        switch try reader.peek() {
        case .string: return builder.append(try reader.scanString(), from: reader)
        case .number: return builder.append(AssistantPrice.amount(try reader.readNumber()).description.utf8)
        default:
            try reader.skipValue()
            return .absent
        }
    }

    /// A number, or a non-empty string as the server formatted it.
    private mutating func price(_ reader: inout JSONReader) throws(JSONReadError) -> ReplyProduct.StoredPrice {
        switch try reader.peek() {
        case .number: return .amount(try reader.readNumber())
        case .string:
            let raw = try reader.scanString()
            return raw.end > raw.start ? .text(builder.append(raw, from: reader)) : .none
        default:
            try reader.skipValue()
            return .none
        }
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
        guard try reader.peek() == .array else { return try reader.skipValue() }
        try reader.readArray { reader throws(JSONReadError) in
            guard try reader.peek() == .object else { return try reader.skipValue() }
            // Only this event's URLs are appended while it is read, so dropping them is a roll-back.
            let mark = builder.mark
            var urls: [StoredText] = []
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
                    urls.removeAll()
                    guard try reader.peek() == .array else { return try reader.skipValue() }
                    try reader.readArray { reader throws(JSONReadError) in
                        guard let raw = try reader.scanStringOrSkip() else { return }
                        let url = builder.append(raw, from: reader)
                        if builder.withBytes(url, HTTPURLValidator.isValid) {
                            urls.append(url)
                        } else {
                            builder.drop(url)
                        }
                    }
                } else {
                    try reader.skipValue()
                }
            }
            switch (wanted, type) {
            case (.impression, .impression): texts += urls
            case (.product, .click): clicks += urls
            case (.product, .visibleImpression): visibleImpressions += urls
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
        guard try reader.peek() == .object else { return try reader.skipValue() }
        try reader.readObject { reader, key throws(JSONReadError) in
            if reader.text(key, is: "suggests") {
                suggests = .empty
                guard try reader.peek() == .array else { return try reader.skipValue() }
                texts.removeAll(keepingCapacity: true)
                try reader.readArray { reader throws(JSONReadError) in
                    // A suggest that is not a string is left out; it is not worth a diagnostic.
                    if let raw = try reader.scanStringOrSkip() { texts.append(builder.append(raw, from: reader)) }
                }
                suggests = builder.appendList(texts)
            } else if reader.text(key, is: "buttons") {
                buttons.removeAll()
                buttonDiagnostics.removeAll()
                guard try reader.peek() == .array else { return try reader.skipValue() }
                var index = 0
                try reader.readArray { reader throws(JSONReadError) in
                    try button(&reader, index: index)
                    index += 1
                }
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
