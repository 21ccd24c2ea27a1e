import Foundation
import ShoppingAssistant

/// One recorded REPL session, readable and editable by hand. The format takes cram's layout
/// (input lines, indented expected output), a cassette's exchanges (request and response,
/// latency or fault) and snapshot tools' re-blessing:
///
/// ```
/// # What this transcript shows (the first comment line is its summary).
/// # covers: P3, S4
/// %width 80
/// %uid -
/// %unpinned POST gravity /event
/// > :product KIT-1001
/// → POST gravity /visit {"ctx":{"type":"PRODUCT",…},…}
/// → Authorization: Bearer <key>
/// → Content-Type: application/json
/// → User-Agent: <user-agent>
/// ← 200 {"user":{"uid":"demo-u-1","ses":"demo-s-1"}}
///   (screen: product KIT-1001)
/// %wait 10s
/// ```
///
/// `→` lines are requests (method, service, target, body), then their significant headers
/// (`→ Name: value`, `RequestHeaders`); the body is JSON compared as JSON
/// where `…` stands for what the file does not pin (`JSONPattern`), and a body of `{` or `[`
/// alone continues on the following lines until its bracket closes. `←` lines are the answer:
/// `200 {…}`, `200 after 12s {…}`, or a fault `timeout`, `refused`, `lost`, followed by
/// `← Name: value` header lines. Lines indented by two spaces are expected output. `<name>` in a
/// request or output binds to the actual text on first sight and must be that text everywhere
/// after; in a response it is replaced by the bound value. `%unpinned` declares a class of
/// requests the file does not pin.
package struct Transcript: Sendable, Hashable {
    /// Session settings given by `%` lines before the first input.
    package struct Settings: Sendable, Hashable {
        package var width = 80
        /// The identity store's uid at start; `nil` is a first launch.
        package var uid: String?
        package var section = "demo"
        package var entrySelector = "assistant-entry"
        package var assistantSelector = "shopping-assistant"
        /// The engine's log level (`--log-level`): notes print at `info` and `debug`.
        package var logLevel = AssistantLogLevel.error
        /// Classes of requests this file does not pin, in the order they are tried.
        package var unpinned: [Unpinned] = []

        package init() {}
    }

    /// A response header kept in the file, such as `Retry-After`.
    package struct Header: Sendable, Hashable {
        package var name: String
        package var value: String

        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// `%unpinned METHOD SERVICE TARGET [BODY]`: requests of this class that no exchange of the
    /// file answers are answered with `outcome` and never fail the replay, and they are left
    /// out of the comparison. `target` may use `*` for any run of characters; without a body
    /// any body belongs to the class. Nothing is unpinned unless the file says so.
    package struct Unpinned: Sendable, Hashable {
        package var method: String
        package var service: String
        package var target: String
        /// `nil`: any body.
        package var body: String?
        /// `204` unless the file gives an answer line.
        package var outcome: Outcome = .response(status: 204, latency: .zero, body: "")
        package var headers: [Header] = []
        package var line: Int = 0

        package init(method: String, service: String, target: String, body: String? = nil) {
            self.method = method
            self.service = service
            self.target = target
            self.body = body
        }

        /// Whether `target` falls under this class's target, `*` matching any run of characters.
        func covers(target actual: String) -> Bool {
            let parts = target.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
            guard parts.count > 1 else { return target == actual }
            guard let first = parts.first, let last = parts.last, actual.hasPrefix(first) else { return false }
            var rest = actual.dropFirst(first.count)
            for part in parts.dropFirst().dropLast() {
                guard !part.isEmpty else { continue }
                guard let range = rest.range(of: part) else { return false }
                rest = rest[range.upperBound...]
            }
            return rest.count >= last.count && rest.hasSuffix(last)
        }
    }

    /// How a recorded exchange ended.
    package enum Outcome: Sendable, Hashable {
        case response(status: Int, latency: Duration, body: String)
        /// No answer until the caller gives up (the engine's own timeout decides).
        case timeout
        /// The connection was refused: nothing reached the server.
        case refused
        /// The connection broke after the request was sent.
        case lost
    }

    package struct Exchange: Sendable, Hashable {
        package var method: String
        /// `gravity`, `shopping` or `tracking`.
        package var service: String
        /// The path (with query) for services, the whole URL for tracking.
        package var target: String
        /// The body as written: JSON (maybe with `…`, maybe on several lines), `…`, or text.
        package var body: String
        package var outcome: Outcome
        /// Response headers the answer carries.
        package var headers: [Header]
        /// The significant request headers (`RequestHeaders`), written `→ Name: value` after the
        /// request; `→ …` instead pins none (`anyRequestHeaders`).
        package var requestHeaders: [Header] = []
        package var anyRequestHeaders = false
        /// 1-based line of the `→` line in the file, for error messages.
        package var line: Int

        package init(
            method: String, service: String, target: String, body: String, outcome: Outcome, headers: [Header] = [],
            requestHeaders: [Header] = [], line: Int = 0
        ) {
            self.requestHeaders = requestHeaders
            self.method = method
            self.service = service
            self.target = target
            self.body = body
            self.outcome = outcome
            self.headers = headers
            self.line = line
        }
    }

    /// What starts a segment: a typed line, or time passing.
    package enum Step: Sendable, Hashable {
        case input(String)
        case wait(Duration)
    }

    /// One step with the exchanges it caused and the output it printed.
    package struct Segment: Sendable, Hashable {
        package var step: Step
        package var exchanges: [Exchange]
        package var output: [String]
        /// Runs of `output` (`%any-order` … `%end`) that may be printed in any order among
        /// themselves, one after another: where the engine's order is genuinely not defined.
        package var unordered: [Range<Int>] = []
        package var line: Int
        /// The comments written after the step before this one: kept, and written back just
        /// before this step (a comment among a step's lines moves to its end).
        package var comments: [String] = []

        package init(step: Step, exchanges: [Exchange] = [], output: [String] = [], line: Int = 0) {
            self.step = step
            self.exchanges = exchanges
            self.output = output
            self.line = line
        }
    }

    package var comments: [String]
    /// The comments after the last step.
    package var trailingComments: [String] = []
    package var settings: Settings
    package var segments: [Segment]
    /// Why the session ended early (`%cut-short SIGTERM`): a recording whose session was ended
    /// by a signal holds every step that ended, then this line. Nil for a whole session.
    package var cutShort: String?

    package init(comments: [String] = [], settings: Settings = Settings(), segments: [Segment] = []) {
        self.comments = comments
        self.settings = settings
        self.segments = segments
    }
}

/// A transcript that cannot be read, with the line that is wrong.
package struct TranscriptError: Error, Sendable, Hashable, CustomStringConvertible {
    package let line: Int
    package let message: String

    package init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    package var description: String { "line \(line): \(message)" }
}
