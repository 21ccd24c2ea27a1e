import Foundation
import ShoppingAssistant

/// The placeholder bindings of one replay, shared by every line of the file.
///
/// `<name>` in an expected request, target or output line binds to the actual text on first
/// sight and must be that same text everywhere after, in any line of the file; in an answer it
/// is replaced by the bound value. Two names never stand for the same text: `<uuid-3>` cannot
/// match where `<uuid-1>` was bound, so a retry that sends a new ID fails.
struct TranscriptBindings: Sendable {
    private(set) var values: [String: String] = [:]
    /// Bound text → its name, to keep names one-to-one.
    private var names: [String: String] = [:]

    static let placeholder = try? NSRegularExpression(pattern: "<([a-z][a-z0-9_-]*)>", options: [])

    /// The placeholder names `text` mentions.
    static func names(in text: String) -> [String] {
        guard text.contains("<"), let regex = placeholder else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// Whether `actual` matches `expected`, binding placeholders as it goes. Bindings are
    /// only kept when the whole text matches.
    mutating func match(_ expected: String, _ actual: String) -> Bool {
        guard expected.contains("<"), let regex = Self.placeholder else { return expected == actual }
        let matches = regex.matches(in: expected, range: NSRange(expected.startIndex..., in: expected))
        guard !matches.isEmpty else { return expected == actual }
        // Every name already bound (a replay's `<key>`, an ID seen before): the text is fixed,
        // compared without building a pattern.
        if let fixed = substituted(expected, matches) { return fixed == actual }
        var pattern = "^"
        var fresh: [String] = []
        var cursor = expected.startIndex
        for match in matches {
            guard let whole = Range(match.range, in: expected), let name = Range(match.range(at: 1), in: expected)
            else { continue }
            pattern += NSRegularExpression.escapedPattern(for: String(expected[cursor..<whole.lowerBound]))
            let key = String(expected[name])
            if let bound = values[key] {
                pattern += NSRegularExpression.escapedPattern(for: bound)
            } else if let index = fresh.firstIndex(of: key) {
                pattern += "\\\(index + 1)"
            } else {
                fresh.append(key)
                pattern += "([^\\s\"/?&]+)"
            }
            cursor = whole.upperBound
        }
        pattern += NSRegularExpression.escapedPattern(for: String(expected[cursor...])) + "$"
        guard let compiled = try? NSRegularExpression(pattern: pattern, options: []),
            let found = compiled.firstMatch(in: actual, range: NSRange(actual.startIndex..., in: actual))
        else { return false }
        var captured: [(String, String)] = []
        for (index, name) in fresh.enumerated() {
            guard let range = Range(found.range(at: index + 1), in: actual) else { return false }
            let value = String(actual[range])
            // One name per text: a value bound to another name (or captured twice now) fails.
            if names[value] != nil || captured.contains(where: { $0.1 == value }) { return false }
            captured.append((name, value))
        }
        for (name, value) in captured {
            values[name] = value
            names[value] = name
        }
        return true
    }

    /// Whether the actual body (`text`, and `json` when it parsed) matches `pattern`; bindings
    /// are only kept when it does.
    mutating func match(_ pattern: BodyPattern, text: String, json: JSONValue?) -> Bool {
        var trial = self
        let matched: Bool
        switch pattern {
        case .any: matched = true
        case .empty: matched = text.isEmpty
        case .json(let expected):
            guard let json else { return false }
            matched = expected.matches(json, &trial)
        case .text(let expected): matched = !text.isEmpty && trial.match(expected, text)
        }
        if matched { self = trial }
        return matched
    }

    /// Bindings that start with `values` bound (a replay's `<key>`).
    init(prebound values: [String: String] = [:]) {
        self.values = values
        names = Dictionary(values.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether the significant request headers `actual` sent match the file's `expected` ones:
    /// the same names, each value matching (a value that is one placeholder alone, such as
    /// `<user-agent>`, binds the whole value, spaces and slashes too). Bindings are only kept
    /// when all match; `any` (`→ …`) matches whatever was sent.
    mutating func match(headers expected: [Transcript.Header], any: Bool, _ actual: [Transcript.Header]) -> Bool {
        guard !any else { return true }
        return Self.headerDifference(expected, actual, &self) == nil
    }

    /// The first header that keeps `actual` from matching `expected`, in words (`Authorization:
    /// "Bearer <key>" in the file, none sent`); nil, with the bindings made, when all match.
    static func headerDifference(
        _ expected: [Transcript.Header], _ actual: [Transcript.Header], _ bindings: inout TranscriptBindings
    ) -> String? {
        var trial = bindings
        for name in RequestHeaders.significant {
            let file = expected.first { HTTPFieldName.matches($0.name, name) }
            let sent = actual.first { HTTPFieldName.matches($0.name, name) }
            switch (file, sent) {
            case (nil, nil): continue
            case (let file?, nil): return "\(name): \"\(file.value)\" in the file, none sent"
            case (nil, let sent?): return "\(name): none in the file, \"\(sent.value)\" sent"
            case (let file?, let sent?):
                guard trial.matchWhole(file.value, sent.value) else {
                    return "\(name): \"\(file.value)\" in the file, \"\(sent.value)\" sent"
                }
            }
        }
        for header in expected
        where !RequestHeaders.significant.contains(where: { HTTPFieldName.matches($0, header.name) }) {
            return
                "\(header.name): only the significant headers are matched (\(RequestHeaders.significant.joined(separator: ", ")))"
        }
        bindings = trial
        return nil
    }

    /// `match(_:_:)`, except that an expected text that is one placeholder alone binds the
    /// whole actual text.
    mutating func matchWhole(_ expected: String, _ actual: String) -> Bool {
        let names = Self.names(in: expected)
        guard names.count == 1, let name = names.first, expected == "<\(name)>" else { return match(expected, actual) }
        if let bound = values[name] { return bound == actual }
        guard self.names[actual] == nil, !actual.isEmpty else { return false }
        values[name] = actual
        self.names[actual] = name
        return true
    }

    /// Binds what matches of a request that does not match as a whole: the target's
    /// placeholders when the target matches, and each body string's that matches on its own.
    mutating func bindWhatMatches(target: String, _ actualTarget: String, body: BodyPattern, json: JSONValue?) {
        var trial = self
        if trial.match(target, actualTarget) { self = trial }
        if case .json(let pattern) = body, let json { pattern.bindWhatMatches(json, &self) }
    }

    /// `expected` with its placeholders (`matches`) replaced by their values in one pass; nil
    /// when one is not bound yet.
    private func substituted(_ expected: String, _ matches: [NSTextCheckingResult]) -> String? {
        var fixed = ""
        var end = expected.startIndex
        for match in matches {
            guard let whole = Range(match.range, in: expected), let name = Range(match.range(at: 1), in: expected),
                let bound = values[String(expected[name])]
            else { return nil }
            fixed += expected[end..<whole.lowerBound] + bound
            end = whole.upperBound
        }
        return fixed + expected[end...]
    }

    /// `text` with bound placeholders replaced by their values, in one pass: a long session
    /// binds hundreds of names, and an answer is not searched once per name. A value is not
    /// searched again for placeholders; `<` that opens no bound name stays as it is.
    func substitute(_ text: String) -> String {
        guard !values.isEmpty, text.contains("<") else { return text }
        var result = ""
        var rest = text[...]
        while let open = rest.firstIndex(of: "<") {
            result += rest[..<open]
            let name = rest.index(after: open)
            // The name ends at the next `>`; a `<` first means this one opens nothing.
            if let close = rest[name...].firstIndex(where: { $0 == ">" || $0 == "<" }), rest[close] == ">",
                let value = values[String(rest[name..<close])]
            {
                result += value
                rest = rest[rest.index(after: close)...]
            } else {
                result.append("<")
                rest = rest[name...]
            }
        }
        return result + rest
    }
}

/// A request body as the file writes it, ready to match.
enum BodyPattern: Sendable, Hashable {
    /// `…`: any body, or none.
    case any
    /// Nothing written: the request has no body.
    case empty
    /// JSON, maybe with `…` where the file does not pin.
    case json(JSONPattern)
    /// Anything else: text, with placeholders.
    case text(String)

    init(_ text: String) throws(JSONPatternError) {
        if text.isEmpty {
            self = .empty
        } else if JSONPattern.isAnyBody(text) {
            self = .any
        } else if JSONPattern.looksLikeJSON(text) {
            self = .json(try JSONPattern.parse(text))
        } else {
            self = .text(text)
        }
    }
}

/// Writes actual text the way a transcript spells it: generated UUIDs become placeholder names
/// — the name the replay bound to that UUID, else a fresh `<uuid-N>` no line of the file uses —
/// so a recording or a diff does not depend on the generator.
///
/// A UUID the file itself writes out (`literals`) is left as written, never given a name.
struct TranscriptSpeller: Sendable {
    private var names: [String: String] = [:]
    private var taken: Set<String>
    private var literals: Set<String> = []
    /// The bound names `learn` has seen: a name, once bound, keeps its value.
    private var learned: Set<String> = []
    private var next = 1
    private static let pattern = try? NSRegularExpression(
        pattern: "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", options: [])

    /// Wall-clock moments (`eventTime`) are named too: a session on real time stamps its events
    /// with moments no replay reproduces, while one on virtual time writes them out.
    private var namesMoments = false
    private var moments: [String: String] = [:]
    private var nextMoment = 1
    private static let momentPattern = try? NSRegularExpression(
        pattern: "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z", options: [])

    /// A speller that names UUIDs `<uuid-1>`, `<uuid-2>`, … in order of first sight, and when
    /// `namingMoments`, wall-clock moments `<time-1>`, `<time-2>`, … the same way (one name per
    /// moment, so a replayed event must carry the moment its first attempt carried).
    init(namingMoments: Bool = false) {
        taken = []
        namesMoments = namingMoments
    }

    /// A speller that names each UUID `bindings` bound after its placeholder, and the others
    /// with names outside `reserved` (the names the file uses), except those in `literals`
    /// (the UUIDs the file writes out).
    init(bindings: TranscriptBindings, reserved: Set<String>, literals: Set<String> = []) {
        taken = reserved
        self.literals = Set(literals.map { $0.lowercased() })
        learn(bindings)
    }

    /// A speller for reports and re-blessings of `file`: names made for unknown IDs are new to
    /// the file, and the UUIDs it writes out stay as written.
    init(file: Transcript, bindings: TranscriptBindings) {
        self.init(bindings: bindings, reserved: file.placeholderNames, literals: file.literalUUIDs)
    }

    /// The UUIDs `text` writes out.
    static func uuids(in text: String) -> Set<String> {
        guard let regex = pattern else { return [] }
        return Set(
            regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
                Range(match.range, in: text).map { text[$0].lowercased() }
            })
    }

    /// Names the UUIDs `bindings` bound since, after their placeholders.
    mutating func learn(_ bindings: TranscriptBindings) {
        // Only what is new since the last time: a long session binds a name or two a step.
        let fresh = bindings.values.filter { !learned.contains($0.key) }
        for (name, _) in fresh { learned.insert(name) }
        for (name, value) in fresh.sorted(by: { $0.key < $1.key }) where Self.isUUID(value) {
            taken.insert(name)
            if names[value.lowercased()] == nil { names[value.lowercased()] = "<\(name)>" }
        }
    }

    static func isUUID(_ text: String) -> Bool {
        guard text.utf8.count == 36, let regex = pattern else { return false }
        return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))?.range.length == 36
    }

    mutating func spell(_ text: String) -> String {
        let spelled = spellUUIDs(text)
        return namesMoments ? spellMoments(spelled) : spelled
    }

    private mutating func spellMoments(_ text: String) -> String {
        guard text.contains("Z"), let regex = Self.momentPattern else { return text }
        return Self.replacingMatches(of: regex, in: text) { moment in
            if let name = moments[moment] { return name }
            let name = "<time-\(nextMoment)>"
            nextMoment += 1
            moments[moment] = name
            return name
        }
    }

    private mutating func spellUUIDs(_ text: String) -> String {
        guard let regex = Self.pattern else { return text }
        return Self.replacingMatches(of: regex, in: text) { match in
            let uuid = match.lowercased()
            if literals.contains(uuid) { return match }
            if let name = names[uuid] { return name }
            while taken.contains("uuid-\(next)") { next += 1 }
            taken.insert("uuid-\(next)")
            names[uuid] = "<uuid-\(next)>"
            return "<uuid-\(next)>"
        }
    }

    /// `text` with every match of `regex` replaced by what `name` says for it, in order.
    private static func replacingMatches(
        of regex: NSRegularExpression, in text: String, _ name: (String) -> String
    ) -> String {
        var result = ""
        var cursor = text.startIndex
        for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let range = Range(match.range, in: text) else { continue }
            result += text[cursor..<range.lowerBound]
            result += name(String(text[range]))
            cursor = range.upperBound
        }
        return result + text[cursor...]
    }
}

/// JSON as transcripts write it: sorted keys, no escaped slashes; non-JSON text kept as is.
enum CanonicalJSON {
    static func text(_ data: Data?) -> String {
        guard let data, !data.isEmpty else { return "" }
        guard let value = value(data) else { return String(decoding: data, as: UTF8.self) }
        return compact(value) ?? String(decoding: data, as: UTF8.self)
    }

    static func value(_ data: Data) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: data)
    }

    static func value(_ text: String) -> JSONValue? {
        text.isEmpty ? nil : value(Data(text.utf8))
    }

    /// One line, keys sorted.
    static func compact(_ value: JSONValue) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Several lines, two spaces per level, keys sorted: how a hand-written body reads best.
    /// The first line is `{` or `[`, the last `}` or `]` at the left margin plus `indent`.
    static func pretty(_ value: JSONValue, indent: String = "") -> String {
        var out = ""
        write(value, indent: indent, into: &out)
        return out
    }

    private static func write(_ value: JSONValue, indent: String, into out: inout String) {
        let inner = indent + "  "
        switch value {
        case .object(let members) where !members.isEmpty:
            out += "{\n"
            for (offset, key) in members.keys.sorted().enumerated() {
                out += inner + quoted(key) + ": "
                if let member = members[key] { write(member, indent: inner, into: &out) }
                out += offset == members.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        case .array(let elements) where !elements.isEmpty:
            out += "[\n"
            for (offset, element) in elements.enumerated() {
                out += inner
                write(element, indent: inner, into: &out)
                out += offset == elements.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        default:
            out += compact(value) ?? "null"
        }
    }

    private static func quoted(_ key: String) -> String {
        compact(.string(key)) ?? "\"\""
    }

    /// The tracking URLs a response names: every string in the `urls` of an object in an
    /// `events` array, at any depth (reply, product and content events alike).
    static func eventURLs(in value: JSONValue) -> [String] {
        var found: [String] = []
        var stack = [value]
        while let next = stack.popLast() {
            switch next {
            case .object(let members):
                if case .array(let events)? = members["events"] {
                    for case .object(let event) in events {
                        if case .array(let urls)? = event["urls"] { found += urls.compactMap(\.stringValue) }
                    }
                }
                stack += members.values
            case .array(let elements): stack += elements
            default: break
            }
        }
        return found
    }
}

extension Transcript {
    /// Every text of the file a placeholder or a UUID may stand in.
    var texts: [String] {
        var texts: [String] = []
        for unpinned in settings.unpinned { texts.append(unpinned.target + " " + (unpinned.body ?? "")) }
        for segment in segments {
            if case .input(let line) = segment.step { texts.append(line) }
            for exchange in segment.exchanges {
                texts +=
                    [exchange.target, exchange.body] + exchange.headers.map(\.value)
                    + exchange.requestHeaders.map(\.value)
                if case .response(_, _, let body) = exchange.outcome { texts.append(body) }
            }
            texts += segment.output
        }
        return texts
    }

    /// Every placeholder name the file uses: a name made for an unknown ID must be new.
    var placeholderNames: Set<String> {
        texts.reduce(into: Set<String>()) { $0.formUnion(TranscriptBindings.names(in: $1)) }
    }

    /// The UUIDs the file writes out as they are.
    var literalUUIDs: Set<String> {
        texts.reduce(into: Set<String>()) { $0.formUnion(TranscriptSpeller.uuids(in: $1)) }
    }
}
