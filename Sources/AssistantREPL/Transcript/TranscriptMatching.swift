import Foundation
import ShoppingAssistant

/// Placeholder bindings and JSON-aware comparison for transcript replay.
///
/// `<name>` in an expected request, target or output line binds to the actual text on first
/// sight and must equal it afterwards; in a response it is replaced by the bound value.
struct TranscriptBindings: Sendable {
    private(set) var values: [String: String] = [:]

    private static let placeholder = try? NSRegularExpression(pattern: "<([a-z][a-z0-9_-]*)>", options: [])

    /// Whether `actual` matches `expected`, binding placeholders as it goes. Bindings are
    /// only kept when the whole text matches.
    mutating func match(_ expected: String, _ actual: String) -> Bool {
        guard expected.contains("<"), let regex = Self.placeholder else { return expected == actual }
        let range = NSRange(expected.startIndex..., in: expected)
        let matches = regex.matches(in: expected, range: range)
        guard !matches.isEmpty else { return expected == actual }
        var pattern = "^"
        var names: [String] = []
        var cursor = expected.startIndex
        for match in matches {
            guard let whole = Range(match.range, in: expected), let name = Range(match.range(at: 1), in: expected)
            else {
                continue
            }
            pattern += NSRegularExpression.escapedPattern(for: String(expected[cursor..<whole.lowerBound]))
            let key = String(expected[name])
            if let bound = values[key] {
                pattern += NSRegularExpression.escapedPattern(for: bound)
            } else if let index = names.firstIndex(of: key) {
                pattern += "\\\(index + 1)"
            } else {
                names.append(key)
                pattern += "([^\\s\"/?&]+)"
            }
            cursor = whole.upperBound
        }
        pattern += NSRegularExpression.escapedPattern(for: String(expected[cursor...])) + "$"
        guard let compiled = try? NSRegularExpression(pattern: pattern, options: []),
            let found = compiled.firstMatch(in: actual, range: NSRange(actual.startIndex..., in: actual))
        else { return false }
        for (index, name) in names.enumerated() {
            if let captured = Range(found.range(at: index + 1), in: actual) { values[name] = String(actual[captured]) }
        }
        return true
    }

    /// Compares two JSON texts as JSON: key order and spacing do not matter.
    mutating func matchJSON(_ expected: String, _ actual: String) -> Bool {
        if expected.isEmpty || actual.isEmpty { return expected.isEmpty && actual.isEmpty }
        guard let expectedValue = try? JSONDecoder().decode(JSONValue.self, from: Data(expected.utf8)),
            let actualValue = try? JSONDecoder().decode(JSONValue.self, from: Data(actual.utf8))
        else { return match(expected, actual) }
        var trial = self
        guard trial.matchValue(expectedValue, actualValue) else { return false }
        self = trial
        return true
    }

    private mutating func matchValue(_ expected: JSONValue, _ actual: JSONValue) -> Bool {
        switch (expected, actual) {
        case (.string(let e), .string(let a)): return match(e, a)
        case (.object(let e), .object(let a)):
            guard Set(e.keys) == Set(a.keys) else { return false }
            return e.keys.sorted().allSatisfy { key in
                guard let ev = e[key], let av = a[key] else { return false }
                return matchValue(ev, av)
            }
        case (.array(let e), .array(let a)):
            guard e.count == a.count else { return false }
            return zip(e, a).allSatisfy { matchValue($0, $1) }
        default: return expected == actual
        }
    }

    /// `text` with bound placeholders replaced by their values.
    func substitute(_ text: String) -> String {
        guard text.contains("<") else { return text }
        var result = text
        for (name, value) in values { result = result.replacingOccurrences(of: "<\(name)>", with: value) }
        return result
    }
}

/// Replaces generated UUIDs with stable names (`<uuid-1>`, …) in order of first sight, so a
/// recorded or re-blessed transcript does not depend on the generator.
struct UUIDNamer: Sendable {
    private var names: [String: String] = [:]
    private static let pattern = try? NSRegularExpression(
        pattern: "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", options: [])

    mutating func name(in text: String) -> String {
        guard let regex = Self.pattern else { return text }
        var result = ""
        var cursor = text.startIndex
        for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let range = Range(match.range, in: text) else { continue }
            result += text[cursor..<range.lowerBound]
            let uuid = String(text[range]).lowercased()
            if names[uuid] == nil { names[uuid] = "<uuid-\(names.count + 1)>" }
            result += names[uuid] ?? uuid
            cursor = range.upperBound
        }
        return result + text[cursor...]
    }
}

/// Canonical JSON text: sorted keys, no escaped slashes; non-JSON text is kept as is.
enum CanonicalJSON {
    static func text(_ data: Data?) -> String {
        guard let data, !data.isEmpty else { return "" }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            return String(decoding: data, as: UTF8.self)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let encoded = try? encoder.encode(value) else { return String(decoding: data, as: UTF8.self) }
        return String(decoding: encoded, as: UTF8.self)
    }
}
