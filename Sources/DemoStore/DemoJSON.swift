import Foundation
import ShoppingAssistant

/// A JSON document the demo store writes. Objects keep their members in the order they were
/// built, so every response body is byte-for-byte the same from run to run and reads in the
/// order wire.md documents (recorded transcripts stay stable and diffable).
enum DemoJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([DemoJSON])
    case object([Member])

    /// One object member; a struct rather than a tuple so the enum stays `Equatable`.
    struct Member: Sendable, Equatable {
        var key: String
        var value: DemoJSON
    }

    /// An object from members in the given order.
    static func object(_ members: KeyValuePairs<String, DemoJSON>) -> DemoJSON {
        .object(members.map { Member(key: $0.key, value: $0.value) })
    }

    /// An object that leaves out the members whose value is `nil` (optional wire fields).
    static func compactObject(_ members: [(String, DemoJSON?)]) -> DemoJSON {
        .object(members.compactMap { key, value in value.map { Member(key: key, value: $0) } })
    }

    /// An array of strings.
    static func strings(_ values: [String]) -> DemoJSON {
        .array(values.map(DemoJSON.string))
    }

    /// The serialised document: UTF-8, no insignificant whitespace, slashes unescaped.
    var data: Data {
        var text = ""
        write(into: &text)
        return Data(text.utf8)
    }

    /// The serialised document as a string (used for `custom.json`, which travels as a string).
    var text: String {
        var text = ""
        write(into: &text)
        return text
    }

    private func write(into out: inout String) {
        switch self {
        case .null:
            out += "null"
        case .bool(let value):
            out += value ? "true" : "false"
        case .int(let value):
            out += String(value)
        case .double(let value):
            if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
                out += String(Int(value))
            } else if value.isFinite {
                out += String(value)
            } else {
                out += "null"
            }
        case .string(let value):
            Self.writeString(value, into: &out)
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(member.key, into: &out)
                out += ":"
                member.value.write(into: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ value: String, into out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

extension DemoJSON: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    init(stringLiteral value: String) {
        self = .string(value)
    }

    init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

// MARK: - Reading request bodies

extension JSONValue {
    /// Parses a request body leniently: `nil` for a missing or non-JSON body.
    static func parse(_ data: Data?) -> JSONValue? {
        guard let data, !data.isEmpty else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// The string at `key` when it is a non-empty string.
    func nonEmptyString(_ key: String) -> String? {
        guard let value = self[key]?.stringValue, !value.isEmpty else { return nil }
        return value
    }

    /// Whether any object key anywhere in this value satisfies `predicate`.
    func containsKey(where predicate: (String) -> Bool) -> Bool {
        switch self {
        case .object(let members):
            return members.contains { key, value in predicate(key) || value.containsKey(where: predicate) }
        case .array(let elements):
            return elements.contains { $0.containsKey(where: predicate) }
        default:
            return false
        }
    }

    /// Whether any string anywhere in this value (keys excluded) satisfies `predicate`.
    func containsString(where predicate: (String) -> Bool) -> Bool {
        switch self {
        case .string(let value):
            return predicate(value)
        case .object(let members):
            return members.values.contains { $0.containsString(where: predicate) }
        case .array(let elements):
            return elements.contains { $0.containsString(where: predicate) }
        default:
            return false
        }
    }
}
