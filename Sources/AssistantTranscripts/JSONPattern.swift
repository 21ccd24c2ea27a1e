import Foundation
import ShoppingAssistant

/// A request body as a transcript writes it: JSON, where `…` (or `...`) stands for what the
/// file does not pin. A hand-written transcript pins only the fields it is about:
///
/// ```
/// {"data":[{"type":"chat_dialog_open",…}],…}     an object with at least these members
/// {"ctx":…,"sec":"demo"}                           `ctx` present, any value; nothing else
/// ["a",…]                                          an array starting with "a"
/// …                                                any body at all (as the whole body)
/// ```
///
/// Without `…` a pattern is exact JSON: the same members, the same elements. Strings may hold
/// `<name>` placeholders (see `TranscriptBindings`).
indirect enum JSONPattern: Sendable, Hashable {
    /// `…` as a value: anything.
    case any
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    /// Elements in order; `open` when a trailing `…` allows more.
    case array([JSONPattern], open: Bool)
    /// Members by key; `open` when a `…` member allows others.
    case object([String: JSONPattern], open: Bool)

    /// Nesting deeper than this is refused: no real request is that deep, and the parser
    /// recurses.
    static let maximumDepth = 256

    /// Whether `text` opens like JSON (an object or an array), so that it must parse as a
    /// pattern rather than be compared as text.
    static func looksLikeJSON(_ text: String) -> Bool {
        guard let first = text.first(where: { !$0.isWhitespace }) else { return false }
        return first == "{" || first == "["
    }

    /// Whether `text` is the whole-body wildcard.
    static func isAnyBody(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed == "…" || trimmed == "..."
    }

    /// Parses `text`; the error says what is wrong and where (a character offset).
    static func parse(_ text: String) throws(JSONPatternError) -> JSONPattern {
        var parser = Parser(scalars: Array(text.unicodeScalars))
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.atEnd else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    /// Whether `actual` matches, binding placeholders in `bindings` as it goes; on a mismatch
    /// `bindings` may hold partial work, so callers match on a copy.
    func matches(_ actual: JSONValue, _ bindings: inout TranscriptBindings) -> Bool {
        switch (self, actual) {
        case (.any, _): return true
        case (.null, .null): return true
        case (.bool(let e), .bool(let a)): return e == a
        case (.number(let e), .number(let a)): return e == a
        case (.string(let e), .string(let a)): return bindings.match(e, a)
        case (.array(let e, let open), .array(let a)):
            guard open ? a.count >= e.count : a.count == e.count else { return false }
            return zip(e, a).allSatisfy { $0.matches($1, &bindings) }
        case (.object(let e, let open), .object(let a)):
            if !open, a.count != e.count { return false }
            // Sorted keys: placeholders bind in the same order on every run.
            return e.keys.sorted().allSatisfy { key in
                guard let expected = e[key], let value = a[key] else { return false }
                return expected.matches(value, &bindings)
            }
        default: return false
        }
    }

    /// Binds every placeholder of the pattern whose string matches on its own, whether or not
    /// the whole matches: how a request that differs in one field keeps the names the file
    /// gives its other fields (a re-blessed request must bind the names its kept answer uses).
    func bindWhatMatches(_ actual: JSONValue, _ bindings: inout TranscriptBindings) {
        switch (self, actual) {
        case (.string(let e), .string(let a)):
            var trial = bindings
            if trial.match(e, a) { bindings = trial }
        case (.array(let e, _), .array(let a)):
            for (expected, value) in zip(e, a) { expected.bindWhatMatches(value, &bindings) }
        case (.object(let e, _), .object(let a)):
            for key in e.keys.sorted() {
                if let expected = e[key], let value = a[key] { expected.bindWhatMatches(value, &bindings) }
            }
        default: break
        }
    }

    /// Where `actual` first fails to match, for a report: `messageId: "<uuid-3>" in the file,
    /// "…" sent`. Nil when it matches.
    func difference(from actual: JSONValue, _ bindings: inout TranscriptBindings, at path: String = "")
        -> String?
    {
        let here = path.isEmpty ? "the body" : path
        func shown(_ value: JSONValue) -> String { CanonicalJSON.compact(value).map { String($0.prefix(120)) } ?? "?" }
        switch (self, actual) {
        case (.array(let e, let open), .array(let a)):
            if open ? a.count < e.count : a.count != e.count {
                return "\(here): \(e.count)\(open ? " or more" : "") elements in the file, \(a.count) sent"
            }
            for (index, (expected, value)) in zip(e, a).enumerated() {
                if let found = expected.difference(from: value, &bindings, at: "\(path)[\(index)]") { return found }
            }
            return nil
        case (.object(let e, let open), .object(let a)):
            for key in e.keys.sorted() {
                let member = path.isEmpty ? key : "\(path).\(key)"
                guard let value = a[key] else { return "\(member): in the file, not sent" }
                if let expected = e[key], let found = expected.difference(from: value, &bindings, at: member) {
                    return found
                }
            }
            if !open, let extra = a.keys.sorted().first(where: { e[$0] == nil }) {
                return "\(path.isEmpty ? extra : "\(path).\(extra)"): sent, not in the file (add … to allow it)"
            }
            return nil
        default:
            if matches(actual, &bindings) { return nil }
            return "\(here): \(description) in the file, \(shown(actual)) sent"
        }
    }

    /// The pattern as JSON text, shortened; `…` for `any`.
    var description: String {
        switch self {
        case .any: return "…"
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let value): return CanonicalJSON.compact(.number(value)) ?? "\(value)"
        case .string(let value): return CanonicalJSON.compact(.string(String(value.prefix(120)))) ?? "\"?\""
        case .array(let elements, let open): return "[\(elements.count) elements\(open ? ", …" : "")]"
        case .object(let members, let open): return "{\(members.count) members\(open ? ", …" : "")}"
        }
    }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0

        var atEnd: Bool { index >= scalars.count }

        func error(_ message: String) -> JSONPatternError {
            JSONPatternError(offset: index, message: message)
        }

        mutating func skipSpace() {
            while index < scalars.count, [" ", "\t", "\n", "\r"].contains(scalars[index]) { index += 1 }
        }

        /// Consumes `…` or `...` if it comes next.
        mutating func ellipsis() -> Bool {
            if index < scalars.count, scalars[index] == "…" {
                index += 1
                return true
            }
            if index + 2 < scalars.count, scalars[index] == ".", scalars[index + 1] == ".", scalars[index + 2] == "." {
                index += 3
                return true
            }
            return false
        }

        mutating func value(depth: Int) throws(JSONPatternError) -> JSONPattern {
            guard depth < JSONPattern.maximumDepth else { throw error("nested too deeply") }
            guard index < scalars.count else { throw error("a value is missing") }
            if ellipsis() { return .any }
            switch scalars[index] {
            case "{": return try object(depth: depth)
            case "[": return try array(depth: depth)
            case "\"": return .string(try string())
            case "t": return try literal("true", .bool(true))
            case "f": return try literal("false", .bool(false))
            case "n": return try literal("null", .null)
            default: return .number(try number())
            }
        }

        mutating func literal(_ word: String, _ value: JSONPattern) throws(JSONPatternError) -> JSONPattern {
            let expected = Array(word.unicodeScalars)
            guard index + expected.count <= scalars.count, Array(scalars[index..<index + expected.count]) == expected
            else { throw error("expected \(word)") }
            index += expected.count
            return value
        }

        mutating func object(depth: Int) throws(JSONPatternError) -> JSONPattern {
            index += 1  // {
            var members: [String: JSONPattern] = [:]
            var open = false
            skipSpace()
            if index < scalars.count, scalars[index] == "}" {
                index += 1
                return .object([:], open: false)
            }
            while true {
                skipSpace()
                if ellipsis() {
                    open = true
                } else {
                    guard index < scalars.count, scalars[index] == "\"" else {
                        throw error("expected a member name in quotes, or …")
                    }
                    let key = try string()
                    skipSpace()
                    guard index < scalars.count, scalars[index] == ":" else { throw error("expected ':'") }
                    index += 1
                    skipSpace()
                    guard members[key] == nil else { throw error("the member \"\(key)\" appears twice") }
                    members[key] = try value(depth: depth + 1)
                }
                skipSpace()
                guard index < scalars.count else { throw error("the object is not closed") }
                if scalars[index] == "," {
                    index += 1
                    continue
                }
                guard scalars[index] == "}" else { throw error("expected ',' or '}'") }
                index += 1
                return .object(members, open: open)
            }
        }

        mutating func array(depth: Int) throws(JSONPatternError) -> JSONPattern {
            index += 1  // [
            var elements: [JSONPattern] = []
            skipSpace()
            if index < scalars.count, scalars[index] == "]" {
                index += 1
                return .array([], open: false)
            }
            while true {
                skipSpace()
                if ellipsis() {
                    skipSpace()
                    guard index < scalars.count, scalars[index] == "]" else {
                        throw error("'…' must be the last element of an array")
                    }
                    index += 1
                    return .array(elements, open: true)
                }
                elements.append(try value(depth: depth + 1))
                skipSpace()
                guard index < scalars.count else { throw error("the array is not closed") }
                if scalars[index] == "," {
                    index += 1
                    continue
                }
                guard scalars[index] == "]" else { throw error("expected ',' or ']'") }
                index += 1
                return .array(elements, open: false)
            }
        }

        mutating func string() throws(JSONPatternError) -> String {
            index += 1  // opening quote
            var result = String.UnicodeScalarView()
            while index < scalars.count {
                let scalar = scalars[index]
                index += 1
                switch scalar {
                case "\"": return String(result)
                case "\\":
                    guard index < scalars.count else { break }
                    let escape = scalars[index]
                    index += 1
                    switch escape {
                    case "\"", "\\", "/": result.append(escape)
                    case "b": result.append("\u{08}")
                    case "f": result.append("\u{0C}")
                    case "n": result.append("\n")
                    case "r": result.append("\r")
                    case "t": result.append("\t")
                    case "u":
                        let high = try hex4()
                        if (0xD800..<0xDC00).contains(high) {
                            guard index + 1 < scalars.count, scalars[index] == "\\", scalars[index + 1] == "u" else {
                                throw error("a lone surrogate in \\u escape")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low),
                                let combined = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                            else { throw error("a bad surrogate pair in \\u escape") }
                            result.append(combined)
                        } else {
                            guard let decoded = Unicode.Scalar(high) else {
                                throw error("a lone surrogate in \\u escape")
                            }
                            result.append(decoded)
                        }
                    default: throw error("unknown escape \\\(escape)")
                    }
                default:
                    guard scalar.value >= 0x20 else { throw error("a control character inside a string") }
                    result.append(scalar)
                }
            }
            throw error("the string is not closed")
        }

        mutating func hex4() throws(JSONPatternError) -> UInt32 {
            guard index + 4 <= scalars.count else { throw error("a short \\u escape") }
            var value: UInt32 = 0
            for scalar in scalars[index..<index + 4] {
                guard let digit = Character(scalar).hexDigitValue else { throw error("a bad \\u escape") }
                value = value * 16 + UInt32(digit)
            }
            index += 4
            return value
        }

        mutating func number() throws(JSONPatternError) -> Double {
            let start = index
            while index < scalars.count, "+-0123456789.eE".unicodeScalars.contains(scalars[index]) { index += 1 }
            let text = String(String.UnicodeScalarView(scalars[start..<index]))
            guard !text.isEmpty, let value = Double(text), value.isFinite else {
                index = start
                throw error("expected a JSON value or …")
            }
            return value
        }
    }
}

/// A request body pattern that does not parse, with the character where it goes wrong.
struct JSONPatternError: Error, Sendable, Hashable, CustomStringConvertible {
    let offset: Int
    let message: String

    var description: String { "\(message) (at character \(offset + 1) of the body)" }
}
