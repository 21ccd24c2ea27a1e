import AssistantREPL
import Foundation
import ShoppingAssistant

/// Reads and writes the transcript text format (see `Transcript`).
package enum TranscriptFormat {
    // MARK: - Parsing

    /// The lines of a file, split at every LF, CRLF or lone CR. Split by Unicode scalars: in
    /// Swift "\r\n" is one `Character`, so a split on the character "\n" leaves a CRLF file as
    /// one line — one comment, checking nothing — and a CR-only file is one line either way.
    package static func lines(of text: String) -> [String] {
        var lines: [String] = []
        var line = String.UnicodeScalarView()
        var afterCR = false
        for scalar in text.unicodeScalars {
            if scalar == "\n", afterCR {  // the LF of a CRLF: the line ended at its CR
                afterCR = false
                continue
            }
            afterCR = scalar == "\r"
            if scalar == "\n" || scalar == "\r" {
                lines.append(String(line))
                line = String.UnicodeScalarView()
            } else {
                line.append(scalar)
            }
        }
        lines.append(String(line))
        return lines
    }

    package static func parse(_ text: String) throws(TranscriptError) -> Transcript {
        var transcript = Transcript()
        var current: Transcript.Segment?
        let lines = lines(of: text)

        /// Where the open `%any-order` block started (its line, its first output line).
        var block: (line: Int, start: Int)?
        /// Comments after the first step, for the next step (or the end) to keep.
        var later: [String] = []

        func flushSegment() throws(TranscriptError) {
            if let block { throw TranscriptError(line: block.line, message: "%any-order without its %end") }
            if let segment = current { transcript.segments.append(segment) }
            current = nil
        }

        var index = 0
        while index < lines.count {
            let number = index + 1
            let line = lines[index]
            if line.hasPrefix("# ") || line == "#" {
                let comment = String(line.dropFirst(line == "#" ? 1 : 2))
                if current == nil && transcript.segments.isEmpty {
                    transcript.comments.append(comment)
                } else {
                    later.append(comment)  // kept: before the next step, or at the end
                }
            } else if line.hasPrefix("%") {
                let words = line.dropFirst().split(separator: " ", maxSplits: 1).map(String.init)
                let name = words.first ?? ""
                let value = words.count > 1 ? words[1] : ""
                if name == "any-order" || name == "end" {
                    guard let segment = current else {
                        throw TranscriptError(line: number, message: "%\(name) before any input")
                    }
                    if name == "any-order" {
                        guard block == nil else {
                            throw TranscriptError(line: number, message: "%any-order inside %any-order")
                        }
                        block = (number, segment.output.count)
                    } else {
                        guard let open = block else {
                            throw TranscriptError(line: number, message: "%end without %any-order")
                        }
                        guard segment.output.count - open.start >= 2 else {
                            throw TranscriptError(
                                line: open.line, message: "an %any-order block holds two output lines or more")
                        }
                        current?.unordered.append(open.start..<segment.output.count)
                        block = nil
                    }
                } else if name == "cut-short" {
                    try flushSegment()
                    transcript.cutShort = value.isEmpty ? "signal" : value
                    // Only comments and blank lines may follow: the session ended here.
                    let rest = lines[(index + 1)...]
                    if let extra = rest.firstIndex(where: {
                        !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty
                    }) {
                        throw TranscriptError(line: extra + 1, message: "nothing but comments may follow %cut-short")
                    }
                    break
                } else if name == "wait" {
                    guard let duration = parseDuration(value) else {
                        throw TranscriptError(line: number, message: "bad duration '\(value)' (use 10s, 1.5s or 250ms)")
                    }
                    try flushSegment()
                    current = Transcript.Segment(step: .wait(duration), line: number)
                    current?.comments = later
                    later = []
                } else {
                    guard current == nil && transcript.segments.isEmpty else {
                        throw TranscriptError(line: number, message: "settings must come before the first input")
                    }
                    if name == "unpinned" {
                        transcript.settings.unpinned.append(try parseUnpinned(value, lines: lines, index: &index))
                    } else {
                        try applySetting(name, value, to: &transcript.settings, line: number)
                    }
                }
            } else if line.hasPrefix("> ") || line == ">" {
                try flushSegment()
                current = Transcript.Segment(step: .input(String(line.dropFirst(2))), line: number)
                current?.comments = later
                later = []
            } else if line.hasPrefix("→ ") {
                if let block {
                    throw TranscriptError(line: block.line, message: "an %any-order block holds output lines only")
                }
                guard current != nil else { throw TranscriptError(line: number, message: "a request before any input") }
                let parts = line.dropFirst(2).split(separator: " ", maxSplits: 3).map(String.init)
                guard parts.count >= 3 else {
                    throw TranscriptError(line: number, message: "expected '→ METHOD SERVICE TARGET [BODY]'")
                }
                let body = try readBody(parts.count > 3 ? parts[3] : "", lines: lines, index: &index)
                try checkPattern(body, line: number)
                var requestHeaders: [Transcript.Header] = []
                var anyRequestHeaders = false
                while index + 1 < lines.count, let header = requestHeader(lines[index + 1]) {
                    index += 1
                    if let header { requestHeaders.append(header) } else { anyRequestHeaders = true }
                }
                guard index + 1 < lines.count, lines[index + 1].hasPrefix("← ") else {
                    throw TranscriptError(line: number, message: "a request line must be followed by its '← ' answer")
                }
                index += 1
                let (outcome, headers) = try readAnswer(lines: lines, index: &index)
                var exchange = Transcript.Exchange(
                    method: parts[0], service: parts[1], target: parts[2], body: body, outcome: outcome,
                    headers: headers, line: number)
                exchange.requestHeaders = requestHeaders
                exchange.anyRequestHeaders = anyRequestHeaders
                current?.exchanges.append(exchange)
            } else if line.hasPrefix("← ") {
                throw TranscriptError(line: number, message: "an answer without a request")
            } else if line.hasPrefix("  ") {
                guard current != nil else { throw TranscriptError(line: number, message: "output before any input") }
                current?.output.append(String(line.dropFirst(2)))
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                // blank lines separate nothing
            } else {
                throw TranscriptError(
                    line: number, message: "unrecognised line (inputs start with '> ', output with two spaces)")
            }
            index += 1
        }
        try flushSegment()
        transcript.trailingComments = later
        return transcript
    }

    /// `%unpinned METHOD SERVICE TARGET [BODY]`, maybe followed by its answer.
    private static func parseUnpinned(_ value: String, lines: [String], index: inout Int) throws(TranscriptError)
        -> Transcript.Unpinned
    {
        let number = index + 1
        let parts = value.split(separator: " ", maxSplits: 3).map(String.init)
        guard parts.count >= 3 else {
            throw TranscriptError(line: number, message: "expected '%unpinned METHOD SERVICE TARGET [BODY]'")
        }
        let body = try readBody(parts.count > 3 ? parts[3] : "", lines: lines, index: &index)
        try checkPattern(body, line: number)
        var unpinned = Transcript.Unpinned(
            method: parts[0], service: parts[1], target: parts[2], body: body.isEmpty ? nil : body)
        unpinned.line = number
        if index + 1 < lines.count, lines[index + 1].hasPrefix("← ") {
            index += 1
            (unpinned.outcome, unpinned.headers) = try readAnswer(lines: lines, index: &index)
        }
        return unpinned
    }

    /// A request header line after a request, `→ Name: value` (`.some(header)`), or `→ …`, which
    /// pins none (`.some(nil)`); nil for any other line (a request line has a method first).
    private static func requestHeader(_ line: String) -> Transcript.Header?? {
        guard line.hasPrefix("→ ") else { return nil }
        let text = line.dropFirst(2)
        if text == "…" || text == "..." { return .some(nil) }
        guard let colon = text.firstIndex(of: ":"), !text[..<colon].isEmpty,
            text[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else { return nil }
        return .some(
            Transcript.Header(
                String(text[..<colon]), text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
    }

    /// A request body must be a pattern the replay can use: say so at load time, with the line.
    private static func checkPattern(_ body: String, line: Int) throws(TranscriptError) {
        do {
            _ = try BodyPattern(body)
        } catch {
            throw TranscriptError(line: line, message: "the body is not JSON: \(error)")
        }
    }

    /// The `← ` line at `index` and the `← Name: value` header lines after it; `index` ends
    /// on the last line read.
    private static func readAnswer(lines: [String], index: inout Int) throws(TranscriptError) -> (
        Transcript.Outcome, [Transcript.Header]
    ) {
        let number = index + 1
        var outcome = try parseOutcome(String(lines[index].dropFirst(2)), line: number)
        if case .response(let status, let latency, let first) = outcome {
            outcome = .response(
                status: status, latency: latency, body: try readBody(first, lines: lines, index: &index))
        }
        var headers: [Transcript.Header] = []
        while index + 1 < lines.count, lines[index + 1].hasPrefix("← ") {
            index += 1
            let text = lines[index].dropFirst(2)
            guard let colon = text.firstIndex(of: ":"), !text[..<colon].isEmpty,
                text[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
            else {
                throw TranscriptError(
                    line: index + 1, message: "after an answer, a '← ' line is a header: '← Name: value'")
            }
            headers.append(
                Transcript.Header(
                    String(text[..<colon]), text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return (outcome, headers)
    }

    /// A body that is `{` or `[` alone goes on over the following lines until its bracket
    /// closes (brackets inside strings do not count); any other body is the rest of the line.
    /// `index` ends on the body's last line.
    private static func readBody(_ first: String, lines: [String], index: inout Int) throws(TranscriptError)
        -> String
    {
        if first.hasPrefix(textBodyPrefix) {
            let literal = first.dropFirst(textBodyPrefix.count - 1)  // from the opening quote
            guard let body = try? JSONDecoder().decode(String.self, from: Data(literal.utf8)) else {
                throw TranscriptError(line: index + 1, message: "a text: body is one JSON string, quotes included")
            }
            return body
        }
        guard first == "{" || first == "[" else { return first }
        let opened = index + 1
        var scanner = BracketScanner()
        scanner.scan(first)
        var body = [first]
        while !scanner.closed {
            index += 1
            guard index < lines.count else {
                throw TranscriptError(line: opened, message: "the body opened here never closes its '\(first)'")
            }
            body.append(lines[index])
            scanner.scan(lines[index])
        }
        return body.joined(separator: "\n")
    }

    /// Whether `body`, written over several lines, closes its first bracket on its last line
    /// and not before: what `readBody` reads back as the same body.
    private static func closesAtItsEnd(_ body: String) -> Bool {
        var scanner = BracketScanner()
        let lines = lines(of: body)
        for (index, line) in lines.enumerated() {
            scanner.scan(line)
            if scanner.closed { return index == lines.count - 1 }
        }
        return false
    }

    /// Tracks bracket depth over JSON text, outside strings.
    private struct BracketScanner {
        var depth = 0
        var inString = false
        var escaped = false
        var closed = false

        mutating func scan(_ text: String) {
            for scalar in text.unicodeScalars where !closed {
                if inString {
                    if escaped {
                        escaped = false
                    } else if scalar == "\\" {
                        escaped = true
                    } else if scalar == "\"" {
                        inString = false
                    }
                    continue
                }
                switch scalar {
                case "\"": inString = true
                case "{", "[": depth += 1
                case "}", "]":
                    depth -= 1
                    if depth == 0 { closed = true }
                default: break
                }
            }
            if inString { escaped = false }  // a string does not run over a line end
        }
    }

    private static func applySetting(
        _ name: String, _ value: String, to settings: inout Transcript.Settings, line: Int
    ) throws(TranscriptError) {
        switch name {
        case "width":
            guard let width = Int(value), width >= 20, width <= 1000 else {
                throw TranscriptError(line: line, message: "width must be a number from 20 to 1000")
            }
            settings.width = width
        case "uid": settings.uid = value == "-" || value.isEmpty ? nil : value
        case "section": settings.section = value
        case "entry": settings.entrySelector = value
        case "assistant": settings.assistantSelector = value
        case "log-level":
            guard let level = AssistantLogLevel.allCases.first(where: { $0.description == value }) else {
                throw TranscriptError(line: line, message: "log level must be debug, info, error or none")
            }
            settings.logLevel = level
        default: throw TranscriptError(line: line, message: "unknown setting %\(name)")
        }
    }

    private static func parseOutcome(_ text: String, line: Int) throws(TranscriptError) -> Transcript.Outcome {
        switch text {
        case "timeout": return .timeout
        case "refused": return .refused
        case "lost": return .lost
        default: break
        }
        var words = text.split(separator: " ", maxSplits: 1).map(String.init)
        guard let statusWord = words.first, let status = Int(statusWord), (100..<600).contains(status) else {
            throw TranscriptError(line: line, message: "expected a status, 'timeout', 'refused' or 'lost'")
        }
        words.removeFirst()
        var rest = words.first ?? ""
        var latency = Duration.zero
        if rest.hasPrefix("after ") {
            let parts = rest.dropFirst(6).split(separator: " ", maxSplits: 1).map(String.init)
            guard let first = parts.first, let parsed = parseDuration(first) else {
                throw TranscriptError(line: line, message: "bad latency after 'after'")
            }
            latency = parsed
            rest = parts.count > 1 ? parts[1] : ""
        }
        return .response(status: status, latency: latency, body: rest)
    }

    /// `10s`, `1.5s`, `250ms`, `2m`, as `:wait` reads them.
    package static func parseDuration(_ text: String) -> Duration? { DurationText.parse(text) }

    package static func format(_ duration: Duration) -> String { DurationText.format(duration) }

    // MARK: - Writing

    package static func render(_ transcript: Transcript) -> String {
        var lines = renderHeader(transcript)
        for segment in transcript.segments {
            lines += segment.comments.map(renderComment) + renderSegment(segment)
        }
        lines += transcript.trailingComments.map(renderComment)
        if let reason = transcript.cutShort { lines.append(renderCutShort(reason)) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// How a body written as one JSON string starts (`text:"<html>\n…"`).
    static let textBodyPrefix = "text:\""

    /// `# text`, or `#` alone for an empty comment.
    static func renderComment(_ text: String) -> String { text.isEmpty ? "#" : "# " + text }

    /// `%cut-short REASON`: the session ended here, by a signal, after its last complete step.
    static func renderCutShort(_ reason: String) -> String { "%cut-short " + reason }

    /// The comments and the settings: everything before the first step.
    static func renderHeader(_ transcript: Transcript) -> [String] {
        var lines: [String] = transcript.comments.map(renderComment)
        let defaults = Transcript.Settings()
        let settings = transcript.settings
        lines.append("%width \(settings.width)")
        lines.append("%uid \(settings.uid ?? "-")")
        if settings.section != defaults.section { lines.append("%section \(settings.section)") }
        if settings.entrySelector != defaults.entrySelector { lines.append("%entry \(settings.entrySelector)") }
        if settings.assistantSelector != defaults.assistantSelector {
            lines.append("%assistant \(settings.assistantSelector)")
        }
        if settings.logLevel != defaults.logLevel { lines.append("%log-level \(settings.logLevel)") }
        for unpinned in settings.unpinned {
            lines += withBody(
                "%unpinned \(unpinned.method) \(unpinned.service) \(unpinned.target)", unpinned.body ?? "")
            if unpinned.outcome != Transcript.Unpinned(method: "", service: "", target: "").outcome
                || !unpinned.headers.isEmpty
            {
                lines += renderAnswer(unpinned.outcome, headers: unpinned.headers)
            }
        }
        return lines
    }

    /// The lines that open and close a block of output lines in any order.
    static let anyOrder = "%any-order"
    static let endOfBlock = "%end"

    static func renderSegment(_ segment: Transcript.Segment) -> [String] {
        var lines = [renderStep(segment.step)]
        for exchange in segment.exchanges { lines += renderExchange(exchange) }
        for (index, line) in segment.output.enumerated() {
            if segment.unordered.contains(where: { $0.lowerBound == index }) { lines.append(anyOrder) }
            lines.append("  " + line)
            if segment.unordered.contains(where: { $0.upperBound == index + 1 }) { lines.append(endOfBlock) }
        }
        return lines
    }

    static func renderStep(_ step: Transcript.Step) -> String {
        switch step {
        case .input(let text): return "> " + text
        case .wait(let duration): return "%wait " + format(duration)
        }
    }

    /// The request line (and its body's further lines), the answer, its headers.
    static func renderExchange(_ exchange: Transcript.Exchange) -> [String] {
        renderRequest(exchange) + renderAnswer(exchange.outcome, headers: exchange.headers)
    }

    static func renderRequest(_ exchange: Transcript.Exchange) -> [String] {
        withBody("→ \(exchange.method) \(exchange.service) \(exchange.target)", exchange.body)
            + (exchange.anyRequestHeaders
                ? ["→ …"] : exchange.requestHeaders.map { "→ \($0.name): \(FormatControls.escape($0.value))" })
    }

    static func renderAnswer(_ outcome: Transcript.Outcome, headers: [Transcript.Header]) -> [String] {
        let answer: [String]
        switch outcome {
        case .timeout: answer = ["← timeout"]
        case .refused: answer = ["← refused"]
        case .lost: answer = ["← lost"]
        case .response(let status, let latency, let body):
            let after = latency == .zero ? "" : " after " + format(latency)
            answer = withBody("← \(status)\(after)", body)
        }
        return answer + headers.map { "← \($0.name): \(FormatControls.escape($0.value))" }
    }

    /// `head` and the body after a space; a multi-line body continues on lines of its own.
    /// Format characters (bidi controls among them) are written as `\u202e` escapes, which a
    /// JSON body reads back as the same text. A body that is not JSON and holds a line break
    /// or another control character (a proxy's HTML error page, say) is written on the line as
    /// `text:` and a JSON string: raw, its lines would read as the file's own — an input, an
    /// expected line — and its control characters would reach whoever reads the file.
    private static func withBody(_ head: String, _ body: String) -> [String] {
        guard !body.isEmpty else { return [head] }
        let handWrittenJSON = (body.hasPrefix("{\n") || body.hasPrefix("[\n")) && Self.closesAtItsEnd(body)
        let controls = body.unicodeScalars.contains(where: DisplayWidth.isControl)
        if !handWrittenJSON, body.hasPrefix(textBodyPrefix) || controls,
            let literal = try? JSONEncoder.textBody.encode(body)
        {
            // JSON escapes the C0 controls only: DEL and the C1 controls are spelled out too.
            let string = FormatControls.visible(String(decoding: literal, as: UTF8.self))
            return [head + " " + textBodyPrefix.dropLast() + string]
        }
        let parts = FormatControls.escape(body).split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
        return [head + " " + (parts.first ?? "")] + parts.dropFirst()
    }
}

extension JSONEncoder {
    /// Writes a `text:` body: a JSON string, `/` as it is.
    fileprivate static var textBody: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}
