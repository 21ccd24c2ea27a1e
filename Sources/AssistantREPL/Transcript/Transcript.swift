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
public struct Transcript: Sendable, Hashable {
    /// Session settings given by `%` lines before the first input.
    public struct Settings: Sendable, Hashable {
        public var width = 80
        /// The identity store's uid at start; `nil` is a first launch.
        public var uid: String?
        public var section = "demo"
        public var entrySelector = "assistant-entry"
        public var assistantSelector = "shopping-assistant"

        public init() {}
    }

    /// How a recorded exchange ended.
    public enum Outcome: Sendable, Hashable {
        case response(status: Int, latency: Duration, body: String)
        /// No answer until the caller gives up (the engine's own timeout decides).
        case timeout
        /// The connection was refused: nothing reached the server.
        case refused
        /// The connection broke after the request was sent.
        case lost
    }

    public struct Exchange: Sendable, Hashable {
        public var method: String
        /// `gravity`, `shopping` or `tracking`.
        public var service: String
        /// The path (with query) for services, the whole URL for tracking.
        public var target: String
        public var body: String
        public var outcome: Outcome
        /// 1-based line of the `→` line in the file, for error messages.
        public var line: Int

        public init(method: String, service: String, target: String, body: String, outcome: Outcome, line: Int = 0) {
            self.method = method
            self.service = service
            self.target = target
            self.body = body
            self.outcome = outcome
            self.line = line
        }
    }

    /// What starts a segment: a typed line, or time passing.
    public enum Step: Sendable, Hashable {
        case input(String)
        case wait(Duration)
    }

    /// One step with the exchanges it caused and the output it printed.
    public struct Segment: Sendable, Hashable {
        public var step: Step
        public var exchanges: [Exchange]
        public var output: [String]
        public var line: Int

        public init(step: Step, exchanges: [Exchange] = [], output: [String] = [], line: Int = 0) {
            self.step = step
            self.exchanges = exchanges
            self.output = output
            self.line = line
        }
    }

    public var comments: [String]
    public var settings: Settings
    public var segments: [Segment]

    public init(comments: [String] = [], settings: Settings = Settings(), segments: [Segment] = []) {
        self.comments = comments
        self.settings = settings
        self.segments = segments
    }
}

/// A transcript that cannot be read, with the line that is wrong.
public struct TranscriptError: Error, Sendable, Hashable, CustomStringConvertible {
    public let line: Int
    public let message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { "line \(line): \(message)" }
}
