import ShoppingAssistant

/// How the demo's Gravity section reads `/event` `data`: as strictly as it reads `ctx.type`,
/// so that a regression of the engine's event encoding (B10) is answered with a 400 that says
/// what, not silently recorded.
///
/// The standard types and their fields are the vendor SDKs' (`add-to-cart-v1` with `value`,
/// `productId`, `quantity`, `currency?`, `cart?`, …). An optional field may be absent or
/// `null` (flutter and Android send `null`). Any other type is a custom event, which carries
/// `customProps` (string values) and nothing else (besides `eventTime`, which every event may
/// carry): a standard field on a type that is not a
/// standard one is an unknown type, most likely a misspelled one.
///
/// Codes: `INVALID_EVENTS` (no list of event objects), `UNKNOWN_EVENT_TYPE`,
/// `MISSING_EVENT_FIELD` (a required field absent or empty, a purchase without its cart),
/// `INVALID_EVENT_FIELD` (a field of the wrong JSON kind, such as a string `value`; a quantity
/// below one; a negative amount; a field the type does not have).
enum DemoEventCheck {
    /// What every event carries besides its own fields: its type, its name and when it was
    /// raised (`eventTime`, DL6).
    private static let envelope = ["type", "name", "eventTime"]

    /// The kinds of value an event field holds.
    private enum Kind {
        /// A non-negative JSON number (`value`, `itemPrice`).
        case amount
        /// A JSON integer of at least one (`quantity`).
        case quantity
        /// A non-empty string (ids).
        case id
        /// Any string (`currency`, `cuidType`).
        case text
        /// A list of `{productId, quantity, itemPrice}`; `nonEmpty` for a purchase.
        case cart(nonEmpty: Bool)
    }

    private struct Field {
        let name: String
        let kind: Kind
        let required: Bool
    }

    private static func required(_ name: String, _ kind: Kind) -> Field {
        Field(name: name, kind: kind, required: true)
    }
    private static func optional(_ name: String, _ kind: Kind) -> Field {
        Field(name: name, kind: kind, required: false)
    }

    /// The standard event types, with their fields as the SDKs encode them.
    private static let standard: [String: [Field]] = [
        "add-to-cart-v1": [
            required("value", .amount), required("productId", .id), required("quantity", .quantity),
            optional("currency", .text), optional("cart", .cart(nonEmpty: false)),
        ],
        "remove-from-cart-v1": [
            required("value", .amount), required("productId", .id), required("quantity", .quantity),
            optional("currency", .text), optional("cart", .cart(nonEmpty: false)),
        ],
        "purchase-v1": [
            required("uniqueTransactionId", .id), required("value", .amount), required("cart", .cart(nonEmpty: true)),
            optional("currency", .text),
        ],
        "sync-cart-v1": [
            required("value", .amount), optional("currency", .text), optional("cart", .cart(nonEmpty: false)),
        ],
        "add-to-wishlist-v1": [required("value", .amount), required("productId", .id)],
        "signup-v1": [optional("hashedEmail", .text), optional("cuid", .text), optional("cuidType", .text)],
        "login-v1": [optional("hashedEmail", .text), optional("cuid", .text), optional("cuidType", .text)],
    ]

    /// The standard types, for help and completion.
    static var standardTypes: [String] { standard.keys.sorted() }

    /// Every field name a standard type has: on any other type it means a misspelled type.
    private static let standardFieldNames = Set(standard.values.flatMap { $0.map(\.name) })

    /// The 400 for `data`, or `nil` when every event in it reads.
    static func refusal(of data: JSONValue?) -> HTTPResponse? {
        guard let events = data?.arrayValue, !events.isEmpty else {
            return DemoHTTP.error(400, code: "INVALID_EVENTS", message: "data must be a non-empty list of events")
        }
        for (index, event) in events.enumerated() {
            if let refusal = refusal(of: event, at: "data[\(index)]") { return refusal }
        }
        return nil
    }

    private static func refusal(of event: JSONValue, at path: String) -> HTTPResponse? {
        guard let members = event.objectValue else {
            return DemoHTTP.error(400, code: "INVALID_EVENTS", message: "\(path) is not an event object")
        }
        guard let type = event.nonEmptyString("type") else {
            return missing("\(path).type", "the event type")
        }
        let at = "\(path) (\(type))"
        guard event.nonEmptyString("name") != nil else { return missing("\(at).name", "the event's name") }
        // When it happened (DL6): every event may carry it, as a string.
        if let time = members["eventTime"], time != .null, time.stringValue == nil {
            return invalid("\(at).eventTime", "must be a string")
        }
        guard let fields = standard[type] else { return customRefusal(members, at: at, type: type) }
        for name in members.keys where !envelope.contains(name) && !fields.contains(where: { $0.name == name }) {
            return invalid("\(at).\(name)", "is not a field of \(type)")
        }
        for field in fields {
            let value = members[field.name]
            guard let value, value != .null else {
                if field.required { return missing("\(at).\(field.name)", describe(field.kind)) }
                continue
            }
            if let refusal = check(value, field.kind, at: "\(at).\(field.name)") { return refusal }
        }
        return nil
    }

    private static func customRefusal(_ members: [String: JSONValue], at: String, type: String) -> HTTPResponse? {
        for name in members.keys.sorted() where !(envelope + ["customProps"]).contains(name) {
            guard !standardFieldNames.contains(name) else {
                return DemoHTTP.error(
                    400, code: "UNKNOWN_EVENT_TYPE",
                    message:
                        "\(at): \"\(type)\" is not a standard event type (\(standardTypes.joined(separator: ", "))), so it cannot carry \(name); a custom event carries customProps only"
                )
            }
            return invalid("\(at).\(name)", "is not a field of a custom event (customProps only)")
        }
        switch members["customProps"] {
        case nil, .null?:
            return nil
        case .object(let props)?:
            if let key = props.keys.sorted().first(where: { props[$0]?.stringValue == nil }) {
                return invalid("\(at).customProps.\(key)", "must be a string")
            }
            return nil
        default:
            return invalid("\(at).customProps", "must be an object of strings")
        }
    }

    private static func check(_ value: JSONValue, _ kind: Kind, at path: String) -> HTTPResponse? {
        switch kind {
        case .amount:
            guard let number = value.numberValue else {
                return invalid(path, "must be a JSON number, got \(spelling(value))")
            }
            return number < 0 ? invalid(path, "must not be negative") : nil
        case .quantity:
            guard let number = value.numberValue, let count = Int(exactly: number) else {
                return invalid(path, "must be a JSON integer, got \(spelling(value))")
            }
            return count < 1 ? invalid(path, "must be at least 1, got \(count)") : nil
        case .id:
            guard let text = value.stringValue else { return invalid(path, "must be a string, got \(spelling(value))") }
            return text.isEmpty ? missing(path, "a non-empty id") : nil
        case .text:
            return value.stringValue == nil ? invalid(path, "must be a string, got \(spelling(value))") : nil
        case .cart(let nonEmpty):
            guard let items = value.arrayValue else { return invalid(path, "must be a list of cart items") }
            if nonEmpty, items.isEmpty { return missing(path, "at least one cart item") }
            for (index, item) in items.enumerated() {
                let at = "\(path)[\(index)]"
                guard let members = item.objectValue else { return invalid(at, "must be a cart item object") }
                let fields: [(String, Kind)] = [("productId", .id), ("quantity", .quantity), ("itemPrice", .amount)]
                for name in members.keys.sorted() where !fields.contains(where: { $0.0 == name }) {
                    return invalid("\(at).\(name)", "is not a field of a cart item")
                }
                for (name, kind) in fields {
                    guard let value = members[name], value != .null else {
                        return missing("\(at).\(name)", describe(kind))
                    }
                    if let refusal = check(value, kind, at: "\(at).\(name)") { return refusal }
                }
            }
            return nil
        }
    }

    private static func missing(_ path: String, _ what: String) -> HTTPResponse {
        DemoHTTP.error(400, code: "MISSING_EVENT_FIELD", message: "\(path) is required: \(what)")
    }

    private static func invalid(_ path: String, _ problem: String) -> HTTPResponse {
        DemoHTTP.error(400, code: "INVALID_EVENT_FIELD", message: "\(path) \(problem)")
    }

    private static func describe(_ kind: Kind) -> String {
        switch kind {
        case .amount: "a JSON number"
        case .quantity: "a JSON integer of at least 1"
        case .id: "a non-empty id"
        case .text: "a string"
        case .cart(let nonEmpty): nonEmpty ? "at least one cart item" : "a list of cart items"
        }
    }

    private static func spelling(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string(let text): "the string \"\(text.prefix(40))\""
        case .array: "a list"
        case .object: "an object"
        }
    }
}
