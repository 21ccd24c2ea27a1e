import Foundation

/// A JSON value kept exactly as the server sent it, so reply buttons and unknown product fields
/// reach the host without being renamed or reinterpreted (AC1, AC2, PR1).
public enum JSONValue: Sendable, Hashable {
    /// JSON `null`, kept so a host can tell an explicit null from a missing key.
    case null
    /// JSON `true` or `false`.
    case bool(Bool)
    /// Any JSON number, as a `Double`, like `JSONSerialization` reads it.
    case number(Double)
    /// A JSON string, unescaped.
    case string(String)
    /// A JSON array, in order.
    case array([JSONValue])
    /// A JSON object; keys as received, never renamed (AC2).
    case object([String: JSONValue])

    /// The string payload, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number payload, if this is a number.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The boolean payload, if this is a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// Member lookup that yields `nil` on non-objects, for lenient decoding.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension JSONValue: Codable {
    /// Reads any JSON value, so a host can keep a payload in its own `Codable` types.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // JSONDecoder accepts each JSON kind as exactly one of these types, so the order only
        // decides the cost: every failed attempt builds a DecodingError with its coding path.
        // Most common kinds first (strings dominate replies), booleans last.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    /// Writes the value back as the same JSON kind it was read as.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// Lets tests and hosts write payloads as literals: `["type": "x"]`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal is a JSON number.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A floating-point literal is a JSON number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// `true`/`false` literals are JSON booleans.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array literal is a JSON array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A dictionary literal is a JSON object; of repeated keys the last wins, as in JSON parsers.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `nil` is JSON `null`.
    public init(nilLiteral: ()) { self = .null }
}
