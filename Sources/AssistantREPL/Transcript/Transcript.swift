import Foundation

/// One recorded REPL session, readable and editable by hand. The format takes cram's layout
/// (input lines, indented expected output), a cassette's exchanges (request and response,
/// latency or fault) and snapshot tools' re-blessing:
///
/// ```
/// # What this transcript shows (the first comment line is its summary).
/// # covers: P3, S4
/// %width 80
/// %uid -
/// > :product KIT-1001
/// → POST gravity /visit {"ctx":{…},"sec":"demo",…}
/// ← 200 {"user":{"uid":"demo-u-1","ses":"demo-s-1"}}
///   (screen: product KIT-1001)
/// %wait 10s
/// ```
///
/// `→` lines are requests (method, service, path, JSON body compared as JSON); `←` lines the
/// answer: `200 {…}`, `200 after 12s {…}`, or a fault `timeout`, `refused`, `lost`. Lines
/// indented by two spaces are expected output. `<name>` in a request or output binds to the
/// actual value on first sight and must match it afterwards; in a response it is replaced by
/// the bound value.
package struct Transcript: Sendable, Hashable {
    /// Session settings given by `%` lines before the first input.
    package struct Settings: Sendable, Hashable {
        package var width = 80
        /// The identity store's uid at start; `nil` is a first launch.
        package var uid: String?
        package var section = "demo"
        package var entrySelector = "assistant-entry"
        package var assistantSelector = "shopping-assistant"

        package init() {}
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
        package var body: String
        package var outcome: Outcome
        /// 1-based line of the `→` line in the file, for error messages.
        package var line: Int

        package init(method: String, service: String, target: String, body: String, outcome: Outcome, line: Int = 0) {
            self.method = method
            self.service = service
            self.target = target
            self.body = body
            self.outcome = outcome
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
        package var line: Int

        package init(step: Step, exchanges: [Exchange] = [], output: [String] = [], line: Int = 0) {
            self.step = step
            self.exchanges = exchanges
            self.output = output
            self.line = line
        }
    }

    package var comments: [String]
    package var settings: Settings
    package var segments: [Segment]

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
