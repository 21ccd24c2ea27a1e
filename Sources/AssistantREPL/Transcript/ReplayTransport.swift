import Foundation
import ShoppingAssistant

/// Answers the engine's requests from a transcript's recorded exchanges, like a cassette.
///
/// A request is matched to the first unused exchange of the current segment or an earlier
/// one with the same method, service and target; its body is compared as JSON. A request
/// nobody recorded fails like a refused connection and is reported; so is a recorded
/// exchange left unused.
final class ReplayTransport: HTTPTransport {
    struct Served: Sendable {
        let expectedIndex: Int?
        let exchange: Transcript.Exchange
    }

    private struct Slot {
        let segment: Int
        let exchange: Transcript.Exchange
        var used = false
    }

    private struct State {
        var slots: [Slot]
        var segment = 0
        var bindings = TranscriptBindings()
        var served: [[Served]]
        var problems: [String] = []
    }

    /// What a recorded `refused` or `lost` says when it is replayed. A transcript stores the
    /// fault, not the transport's own wording, so the recorder reports the same words live:
    /// otherwise a recorded session would not replay byte for byte.
    static let refusedMessage = "connection refused (recorded)"
    static let lostMessage = "connection lost after send (recorded)"

    private let state: Locked<State>
    private let clock: any Clock<Duration>
    private let activity: ActivityMonitor?
    private let classify: ServiceClassifier

    init(transcript: Transcript, clock: any Clock<Duration>, activity: ActivityMonitor?, classify: ServiceClassifier) {
        var slots: [Slot] = []
        for (index, segment) in transcript.segments.enumerated() {
            slots += segment.exchanges.map { Slot(segment: index, exchange: $0) }
        }
        state = Locked(State(slots: slots, served: Array(repeating: [], count: transcript.segments.count)))
        self.clock = clock
        self.activity = activity
        self.classify = classify
    }

    /// Moves on to segment `index`: its exchanges become available.
    func begin(segment index: Int) { state.withLock { $0.segment = index } }

    var bindings: TranscriptBindings { state.withLock { $0.bindings } }
    var problems: [String] { state.withLock { $0.problems } }
    func served(in segment: Int) -> [Served] { state.withLock { $0.served[segment] } }

    /// Recorded exchanges no request used.
    var unused: [Transcript.Exchange] { state.withLock { $0.slots.filter { !$0.used }.map(\.exchange) } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let (service, target) = classify.describe(request.url)
        let body = CanonicalJSON.text(request.body)
        let chosen = state.withLock { state -> (Transcript.Exchange, HTTPResponse?, String?)? in
            let method = request.method.rawValue
            func candidates(matchingBody: Bool) -> Int? {
                state.slots.indices.first { index in
                    let slot = state.slots[index]
                    guard !slot.used, slot.segment <= state.segment, slot.exchange.method == method,
                        slot.exchange.service == service
                    else { return false }
                    var trial = state.bindings
                    guard trial.match(slot.exchange.target, target) else { return false }
                    if matchingBody {
                        guard trial.matchJSON(slot.exchange.body, body) else { return false }
                        state.bindings = trial
                    }
                    return true
                }
            }
            guard let index = candidates(matchingBody: true) ?? candidates(matchingBody: false) else {
                let actual = Transcript.Exchange(
                    method: method, service: service, target: target, body: body, outcome: .refused)
                state.served[state.segment].append(Served(expectedIndex: nil, exchange: actual))
                state.problems.append("unexpected request: \(method) \(service) \(target)")
                return nil
            }
            state.slots[index].used = true
            var bindings = state.bindings
            _ = bindings.match(state.slots[index].exchange.target, target)
            state.bindings = bindings
            let expected = state.slots[index].exchange
            let actual = Transcript.Exchange(
                method: method, service: service, target: target, body: body, outcome: expected.outcome)
            state.served[state.segment].append(Served(expectedIndex: index, exchange: actual))
            if case .response(let status, _, let text) = expected.outcome {
                let substituted = bindings.substitute(text)
                return (
                    expected,
                    HTTPResponse(
                        status: status, headers: ["Content-Type": "application/json"], body: Data(substituted.utf8)),
                    nil
                )
            }
            return (expected, nil, nil)
        }
        guard let (expected, response, _) = chosen else {
            throw HTTPTransportError.cannotConnect("no recorded exchange for \(request.method.rawValue) \(target)")
        }
        switch expected.outcome {
        case .response(_, let latency, _):
            if latency > .zero { try await clock.sleep(for: latency) }
            return response ?? HTTPResponse(status: 500)
        case .refused:
            throw HTTPTransportError.cannotConnect(Self.refusedMessage)
        case .lost:
            throw HTTPTransportError.connectionLost(Self.lostMessage)
        case .timeout:
            try await hangUntilCancelled()
            throw CancellationError()
        }
    }

    /// A request that never gets an answer: parks until the engine gives up on it.
    private func hangUntilCancelled() async throws {
        let parked = Locked<(continuation: CheckedContinuation<Void, any Error>?, cancelled: Bool)>((nil, false))
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = parked.withLock { state -> Bool in
                    if state.cancelled { return true }
                    state.continuation = continuation
                    return false
                }
                if cancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    activity?.end()
                }
            }
        } onCancel: {
            let continuation = parked.withLock { state -> CheckedContinuation<Void, any Error>? in
                state.cancelled = true
                defer { state.continuation = nil }
                return state.continuation
            }
            if let continuation {
                activity?.begin()
                continuation.resume(throwing: CancellationError())
            }
        }
    }
}

/// Names the service of a URL the way transcripts write it.
struct ServiceClassifier: Sendable {
    let gravityBase: URL
    let shoppingBase: URL

    /// (`gravity` | `shopping` | `tracking`, target).
    func describe(_ url: URL) -> (String, String) {
        let text = url.absoluteString
        for (name, base) in [("gravity", gravityBase), ("shopping", shoppingBase)] {
            let prefix =
                base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
            if text.hasPrefix(prefix + "/") { return (name, String(text.dropFirst(prefix.count))) }
        }
        return ("tracking", text)
    }
}
