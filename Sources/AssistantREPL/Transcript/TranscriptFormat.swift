import Foundation

/// Reads and writes the transcript text format (see `Transcript`).
package enum TranscriptFormat {
    // MARK: - Parsing

    package static func parse(_ text: String) throws(TranscriptError) -> Transcript {
        var transcript = Transcript()
        var current: Transcript.Segment?
        var pendingRequest: (method: String, service: String, target: String, body: String, line: Int)?
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)

        func flushSegment() {
            if let segment = current { transcript.segments.append(segment) }
            current = nil
        }

        for (offset, raw) in lines.enumerated() {
            let number = offset + 1
            let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : raw
            if pendingRequest != nil, !line.hasPrefix("← ") {
                throw TranscriptError(line: number, message: "a request line must be followed by its '← ' answer")
            }
            if line.hasPrefix("# ") || line == "#" {
                if current == nil && transcript.segments.isEmpty {
                    transcript.comments.append(String(line.dropFirst(line == "#" ? 1 : 2)))
                }
            } else if line.hasPrefix("%") {
                let words = line.dropFirst().split(separator: " ", maxSplits: 1).map(String.init)
                let name = words.first ?? ""
                let value = words.count > 1 ? words[1] : ""
                if name == "wait" {
                    guard let duration = parseDuration(value) else {
                        throw TranscriptError(line: number, message: "bad duration '\(value)' (use 10s, 1.5s or 250ms)")
                    }
                    flushSegment()
                    current = Transcript.Segment(step: .wait(duration), line: number)
                } else {
                    guard current == nil && transcript.segments.isEmpty else {
                        throw TranscriptError(line: number, message: "settings must come before the first input")
                    }
                    try applySetting(name, value, to: &transcript.settings, line: number)
                }
            } else if line.hasPrefix("> ") || line == ">" {
                flushSegment()
                current = Transcript.Segment(step: .input(String(line.dropFirst(2))), line: number)
            } else if line.hasPrefix("→ ") {
                guard current != nil else { throw TranscriptError(line: number, message: "a request before any input") }
                let parts = line.dropFirst(2).split(separator: " ", maxSplits: 3).map(String.init)
                guard parts.count >= 3 else {
                    throw TranscriptError(line: number, message: "expected '→ METHOD SERVICE TARGET [JSON]'")
                }
                pendingRequest = (parts[0], parts[1], parts[2], parts.count > 3 ? parts[3] : "", number)
            } else if line.hasPrefix("← ") {
                guard let request = pendingRequest else {
                    throw TranscriptError(line: number, message: "an answer without a request")
                }
                pendingRequest = nil
                let outcome = try parseOutcome(String(line.dropFirst(2)), line: number)
                current?.exchanges.append(
                    Transcript.Exchange(
                        method: request.method, service: request.service, target: request.target, body: request.body,
                        outcome: outcome, line: request.line))
            } else if line.hasPrefix("  ") {
                guard current != nil else { throw TranscriptError(line: number, message: "output before any input") }
                current?.output.append(String(line.dropFirst(2)))
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                continue
            } else {
                throw TranscriptError(
                    line: number, message: "unrecognised line (inputs start with '> ', output with two spaces)")
            }
        }
        if let request = pendingRequest {
            throw TranscriptError(line: request.line, message: "a request without its answer")
        }
        flushSegment()
        return transcript
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

    /// The longest duration a transcript or `:wait` may name: a week is plenty, and a bound
    /// keeps absurd values from overflowing.
    package static let maximumDuration: Double = 7 * 24 * 3600

    /// `10s`, `1.5s`, `250ms`, `2m`.
    package static func parseDuration(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value >= 0, value * scale <= maximumDuration
            else { return nil }
            return .milliseconds(Int64((value * scale * 1000).rounded()))
        }
        return nil
    }

    package static func format(_ duration: Duration) -> String {
        let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        return "\(ms)ms"
    }

    // MARK: - Writing

    package static func render(_ transcript: Transcript) -> String {
        var lines: [String] = transcript.comments.map { $0.isEmpty ? "#" : "# " + $0 }
        let defaults = Transcript.Settings()
        let settings = transcript.settings
        lines.append("%width \(settings.width)")
        lines.append("%uid \(settings.uid ?? "-")")
        if settings.section != defaults.section { lines.append("%section \(settings.section)") }
        if settings.entrySelector != defaults.entrySelector { lines.append("%entry \(settings.entrySelector)") }
        if settings.assistantSelector != defaults.assistantSelector {
            lines.append("%assistant \(settings.assistantSelector)")
        }
        for segment in transcript.segments {
            lines += renderSegment(segment)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func renderSegment(_ segment: Transcript.Segment) -> [String] {
        var lines: [String] = []
        switch segment.step {
        case .input(let text): lines.append("> " + text)
        case .wait(let duration): lines.append("%wait " + format(duration))
        }
        for exchange in segment.exchanges {
            lines.append(renderRequest(exchange))
            lines.append(renderOutcome(exchange.outcome))
        }
        lines += segment.output.map { "  " + $0 }
        return lines
    }

    static func renderRequest(_ exchange: Transcript.Exchange) -> String {
        "→ \(exchange.method) \(exchange.service) \(exchange.target)"
            + (exchange.body.isEmpty ? "" : " " + exchange.body)
    }

    static func renderOutcome(_ outcome: Transcript.Outcome) -> String {
        switch outcome {
        case .timeout: return "← timeout"
        case .refused: return "← refused"
        case .lost: return "← lost"
        case .response(let status, let latency, let body):
            let after = latency == .zero ? "" : " after " + format(latency)
            return "← \(status)\(after)" + (body.isEmpty ? "" : " " + body)
        }
    }
}
