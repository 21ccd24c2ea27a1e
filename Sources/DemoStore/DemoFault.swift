/// A failure the demo store can be told to produce, so every network rule of behavior.md can be
/// shown in the REPL or a transcript. Set with `DemoStore.inject(_:mode:)`.
///
/// Each fault applies to one kind of request (see `summary`); requests of other kinds are
/// answered normally and do not consume it. The raw value is the fault's name for commands and
/// tab completion.
public enum DemoFault: String, Sendable, Hashable, CaseIterable {
    /// `POST /v1/messages`: the reply is generated and stored in history at once, but the
    /// response is held back for `Configuration.slowReplyLatency` on the injected clock. If the
    /// caller gives up first, the reply is still in history (D5 reconciliation adopts it).
    case slowReply = "slow-reply"
    /// `POST /choose`: the response is held back for `Configuration.slowChooseLatency`, longer
    /// than the 10 s preparation timeout by default (P3: no dead entry button).
    case slowChoose = "slow-choose"
    /// `POST /v1/messages`: nothing is stored and no response ever comes; the request ends only
    /// when its task is cancelled (the engine's 120 s reply timeout, D3), with `CancellationError`.
    case replyTimeout = "reply-timeout"
    /// `POST /v1/messages`: the reply is generated and stored in history, then the transport
    /// throws `HTTPTransportError.connectionLost` (uncertain outcome, D5 adopts it from history).
    case lostAfterSend = "lost-after-send"
    /// `POST /v1/messages`: 409 `MESSAGE_ID_CONFLICT`, nothing stored (D8).
    case messageConflict = "conflict"
    /// `GET /v1/threads/{id}/messages`: 404 `SHOPPING_HISTORY_NOT_FOUND` (D9).
    case historyNotFound = "history-404"
    /// Any Shopping API call: 403 `IP_NOT_ALLOWED` (S6).
    case ipNotAllowed = "ip-not-allowed"
    /// `POST /v1/messages`: 502 Bad Gateway, nothing stored (uncertain outcome, D5 finds nothing).
    case badGateway = "bad-gateway"
    /// `POST /v1/messages`: 503 Service Unavailable, nothing stored.
    case serviceUnavailable = "unavailable"
    /// `POST /v1/messages`: 429 `RATE_LIMITED` with `Retry-After: 30`, nothing stored.
    case rateLimited = "rate-limited"
    /// `POST /v1/messages`: 200 with a body that is not JSON (`invalid_response`), nothing stored.
    case invalidReply = "invalid-reply"
    /// Any Gravity call (`/choose`, `/visit`, `/event`): `HTTPTransportError.cannotConnect`,
    /// the server sees nothing.
    case gravityRefused = "gravity-refused"

    /// The fault's name for commands (the raw value).
    public var name: String { rawValue }

    /// One line for help and completion.
    public var summary: String {
        switch self {
        case .slowReply: "next reply is stored at once but answered after the slow-reply latency"
        case .slowChoose: "next /choose is answered after the slow-choose latency (past the prepare timeout)"
        case .replyTimeout: "next message never gets an answer until the request is cancelled"
        case .lostAfterSend: "next reply is stored in history, then the connection is lost"
        case .messageConflict: "next message gets 409 MESSAGE_ID_CONFLICT"
        case .historyNotFound: "next history read gets 404 SHOPPING_HISTORY_NOT_FOUND"
        case .ipNotAllowed: "next Shopping API call gets 403 IP_NOT_ALLOWED"
        case .badGateway: "next message gets 502 Bad Gateway, nothing stored"
        case .serviceUnavailable: "next message gets 503 Service Unavailable, nothing stored"
        case .rateLimited: "next message gets 429 with Retry-After: 30"
        case .invalidReply: "next message gets 200 with a body that is not JSON"
        case .gravityRefused: "next Gravity call fails with connection refused"
        }
    }

    /// The requests this fault applies to.
    var target: DemoFaultTarget {
        switch self {
        case .slowReply, .replyTimeout, .lostAfterSend, .messageConflict, .badGateway, .serviceUnavailable,
            .rateLimited, .invalidReply:
            .messages
        case .slowChoose: .choose
        case .historyNotFound: .history
        case .ipNotAllowed: .anyShopping
        case .gravityRefused: .anyGravity
        }
    }

    /// Whether the fault only delays the answer (and combines with an outcome fault).
    var isDelay: Bool {
        self == .slowReply || self == .slowChoose
    }
}

/// How long an injected fault stays active.
public enum DemoFaultMode: String, Sendable, Hashable, CaseIterable {
    /// Consumed by the first request it applies to.
    case once
    /// Applies to every matching request until cleared.
    case sticky
}

/// A fault that is currently armed.
public struct DemoActiveFault: Sendable, Hashable {
    /// The fault.
    public var fault: DemoFault
    /// One-shot or sticky.
    public var mode: DemoFaultMode

    /// Creates an armed fault.
    package init(fault: DemoFault, mode: DemoFaultMode) {
        self.fault = fault
        self.mode = mode
    }
}

/// The kinds of request faults are aimed at.
enum DemoFaultTarget: Sendable, Hashable {
    case messages, choose, history, anyShopping, anyGravity

    func matches(_ endpoint: DemoEndpoint) -> Bool {
        switch (self, endpoint) {
        case (.messages, .messages), (.choose, .choose), (.history, .history): true
        case (.anyShopping, .messages), (.anyShopping, .history), (.anyShopping, .feedback): true
        case (.anyGravity, .choose), (.anyGravity, .visit), (.anyGravity, .event): true
        default: false
        }
    }
}

/// The faults armed in a store, in the order they were injected.
struct DemoFaultBoard: Sendable {
    private(set) var active: [DemoActiveFault] = []

    /// Arms `fault`, replacing an earlier arming of the same fault.
    mutating func inject(_ fault: DemoFault, mode: DemoFaultMode) {
        active.removeAll { $0.fault == fault }
        active.append(DemoActiveFault(fault: fault, mode: mode))
    }

    /// Disarms `fault`.
    mutating func clear(_ fault: DemoFault) {
        active.removeAll { $0.fault == fault }
    }

    /// Disarms everything.
    mutating func clearAll() {
        active.removeAll()
    }

    /// The faults that apply to a request for `endpoint`: at most one delay and at most one
    /// outcome, the earliest armed of each. One-shot faults that are returned are consumed.
    mutating func take(for endpoint: DemoEndpoint) -> (delay: DemoFault?, outcome: DemoFault?) {
        let applicable = active.filter { $0.fault.target.matches(endpoint) }
        let delay = applicable.first { $0.fault.isDelay }
        let outcome = applicable.first { !$0.fault.isDelay }
        for taken in [delay, outcome].compactMap({ $0 }) where taken.mode == .once {
            active.removeAll { $0.fault == taken.fault }
        }
        return (delay?.fault, outcome?.fault)
    }
}
