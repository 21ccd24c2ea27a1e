import AssistantREPL
import Foundation
import ShoppingAssistant

/// Answers the engine's requests from a transcript's recorded exchanges, like a cassette.
///
/// A request is answered by the first unused exchange of the current segment or an earlier
/// one whose method, service, target and body all match, with the file's placeholder bindings
/// (one table for the whole file: a value bound once must be the same text everywhere after).
/// There is no looser fallback. A request no exchange matches is, in this order: answered by
/// an `%unpinned` class it belongs to (and left out of the comparison); answered by the first
/// unused exchange with the same method, service and target but another body, and reported
/// as differing, so the rest of the replay stays on track and the diff shows the one request;
/// or refused and reported as unexpected. A recorded exchange left unused is reported too.
final class ReplayTransport: HTTPTransport {
    /// How a request was answered.
    enum Match: Sendable, Hashable {
        /// By exchange `slot`, fully matching.
        case exact(Int)
        /// By exchange `slot`, whose body (or target placeholders) did not match.
        case differs(Int)
        /// By an `%unpinned` class.
        case unpinned
        /// By nothing: refused.
        case unexpected
    }

    struct Served: Sendable {
        let match: Match
        /// What was actually sent (real text), with the outcome it got.
        let exchange: Transcript.Exchange
    }

    private struct Slot {
        let segment: Int
        let exchange: Transcript.Exchange
        let body: BodyPattern
        var used = false
    }

    private struct Class {
        let unpinned: Transcript.Unpinned
        let body: BodyPattern
    }

    private struct State {
        /// In the file's order, so by segment.
        var slots: [Slot]
        /// Every slot before this one is used: a request's search starts here and ends at the
        /// first slot of a later segment, so a long session costs the same per request as a
        /// short one.
        var firstUnused = 0
        var segment = 0
        var bindings = TranscriptBindings()
        var served: [[Served]]
        var problems: [String] = []

        /// Slot `index` answered a request.
        mutating func use(_ index: Int) {
            slots[index].used = true
            while firstUnused < slots.count, slots[firstUnused].used { firstUnused += 1 }
        }
    }

    /// What a recorded `refused` or `lost` says when it is replayed. A transcript stores the
    /// fault, not the transport's own wording, so the recorder reports the same words live:
    /// otherwise a recorded session would not replay byte for byte.
    static let refusedMessage = "connection refused (recorded)"
    static let lostMessage = "connection lost after send (recorded)"

    private let state: Locked<State>
    private let classes: [Class]
    private let clock: any Clock<Duration>
    private let activity: ActivityMonitor?
    private let classify: ServiceClassifier
    /// The file's placeholder names and the UUIDs it writes out, for reports.
    private let names: Set<String>
    private let literals: Set<String>
    /// Where each request waits for its turn (virtual time's), so that answers come one at a
    /// time, in the file's order; nil answers at once.
    private let held: HeldRequests?

    /// The key requests carry: `<key>` in the file stands for it.
    private let apiKey: String

    init(
        transcript: Transcript, clock: any Clock<Duration>, activity: ActivityMonitor?, held: HeldRequests? = nil,
        classify: ServiceClassifier, apiKey: String = TranscriptReplayer.apiKey
    ) {
        var slots: [Slot] = []
        for (index, segment) in transcript.segments.enumerated() {
            slots += segment.exchanges.map {
                // The parser checked every body; one that still fails matches nothing.
                Slot(segment: index, exchange: $0, body: (try? BodyPattern($0.body)) ?? .text("\u{0}"))
            }
        }
        classes = transcript.settings.unpinned.map {
            Class(unpinned: $0, body: $0.body.flatMap { try? BodyPattern($0) } ?? .any)
        }
        state = Locked(
            State(
                slots: slots, bindings: TranscriptBindings(prebound: [RequestHeaders.keyName: apiKey]),
                served: Array(repeating: [], count: transcript.segments.count)))
        self.apiKey = apiKey
        self.clock = clock
        self.activity = activity
        self.classify = classify
        self.held = held
        names = transcript.placeholderNames
        literals = transcript.literalUUIDs
    }

    /// Moves on to segment `index`: its exchanges become available.
    func begin(segment index: Int) { state.withLock { $0.segment = index } }

    var bindings: TranscriptBindings { state.withLock { $0.bindings } }
    var problems: [String] { state.withLock { $0.problems } }
    func served(in segment: Int) -> [Served] { state.withLock { $0.served[segment] } }

    /// Recorded exchanges no request used.
    var unused: [Transcript.Exchange] { state.withLock { $0.slots.filter { !$0.used }.map(\.exchange) } }

    /// The file's exchange at `slot` (as `Match` numbers them).
    func recorded(_ slot: Int) -> Transcript.Exchange { state.withLock { $0.slots[slot].exchange } }

    /// What answers a request, decided from the state without changing it.
    private enum Decision {
        /// Exchange `slot` matches, with the bindings the match makes.
        case exact(Int, TranscriptBindings)
        /// An `%unpinned` class covers it.
        case unpinned(Int)
        /// Only exchange `slot` comes close: it answers, and the difference is reported.
        case differs(Int)
        case unexpected
    }

    private func decide(_ state: State, _ request: Request) -> Decision {
        var open: [Int] = []
        var next = state.firstUnused
        while next < state.slots.count, state.slots[next].segment <= state.segment {
            let slot = state.slots[next]
            if !slot.used, slot.exchange.method == request.method, slot.exchange.service == request.service {
                open.append(next)
            }
            next += 1
        }
        for index in open {
            var trial = state.bindings
            let exchange = state.slots[index].exchange
            guard trial.match(exchange.target, request.target),
                trial.match(state.slots[index].body, text: request.body, json: request.json),
                trial.match(headers: exchange.requestHeaders, any: exchange.anyRequestHeaders, request.headers)
            else { continue }
            return .exact(index, trial)
        }
        for (index, type) in classes.enumerated()
        where type.unpinned.method == request.method && type.unpinned.service == request.service {
            var trial = state.bindings  // a class binds nothing
            if type.unpinned.covers(target: request.target),
                trial.match(type.body, text: request.body, json: request.json)
            {
                return .unpinned(index)
            }
        }
        // Only to show the closest exchange in the diff: this always fails the replay, and
        // binds nothing.
        let near =
            open.first { index in
                // Only the headers differ.
                var trial = state.bindings
                return trial.match(state.slots[index].exchange.target, request.target)
                    && trial.match(state.slots[index].body, text: request.body, json: request.json)
            }
            ?? open.first { index in
                var trial = state.bindings
                return trial.match(state.slots[index].exchange.target, request.target)
            }
            ?? open.first { index in
                var fresh = TranscriptBindings()
                return fresh.match(state.slots[index].exchange.target, request.target)
            }
        return near.map { .differs($0) } ?? .unexpected
    }

    /// A request as the file compares it.
    private struct Request: Sendable {
        let method: String
        let service: String
        let target: String
        let body: String
        let json: JSONValue?
        /// The significant headers, as sent.
        let headers: [Transcript.Header]

        /// The request line, to rank requests no exchange answers.
        var text: String { "\(method) \(service) \(target) \(body)" }
    }

    /// Where a held request stands: the file's order of the exchange that will answer it, so
    /// requests in flight together are answered in the order the file lists them; those no
    /// exchange answers after every exchange, by their text.
    private func rank(_ request: Request) -> HeldRequests.Rank {
        let decision = state.withLock { decide($0, request) }
        switch decision {
        case .exact(let slot, _), .differs(let slot): return HeldRequests.Rank(order: slot, text: request.text)
        case .unpinned, .unexpected: return HeldRequests.Rank(order: .max, text: request.text)
        }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let (service, target) = classify.describe(request.method, request.url)
        let body = CanonicalJSON.text(request.body)
        let actual = Request(
            method: request.method.rawValue, service: service, target: target, body: body,
            json: CanonicalJSON.value(body), headers: RequestHeaders.sent(request.headers))
        if let held {
            do {
                try await held.hold { [weak self] in
                    self?.rank(actual) ?? HeldRequests.Rank(order: .max, text: actual.text)
                }
            } catch {
                // The engine stopped waiting before the answer's turn came: the request was
                // still made, and uses its exchange.
                _ = answer(actual)
                throw error
            }
        }
        guard let (outcome, headers, line) = answer(actual) else {
            throw HTTPTransportError.cannotConnect("no recorded exchange for \(actual.method) \(target)")
        }
        switch outcome {
        case .response(let status, let latency, let text):
            let substituted = bindings.substitute(text)
            let json = CanonicalJSON.value(substituted)
            // A JSON answer naming a placeholder nothing bound would reach the engine as
            // "<name>": a mistake in the file, said with its line (text such as <html> is
            // left alone).
            if json != nil, let name = TranscriptBindings.names(in: substituted).first {
                state.withLock {
                    $0.problems.append("line \(line): its answer names <\(name)>, which no request bound before it")
                }
            }
            var fields = ["Content-Type": "application/json"]
            for header in headers {
                fields = fields.filter { !HTTPFieldName.matches($0.key, header.name) }
                fields[header.name] = header.value
            }
            classify.learn(from: json)
            if latency > .zero { try await clock.sleep(for: latency) }
            return HTTPResponse(status: status, headers: fields, body: Data(substituted.utf8))
        case .refused:
            throw HTTPTransportError.cannotConnect(Self.refusedMessage)
        case .lost:
            throw HTTPTransportError.connectionLost(Self.lostMessage)
        case .timeout:
            try await hangUntilCancelled()
            throw CancellationError()
        }
    }

    /// Decides what answers `request` and takes it: the exchange is used, its bindings kept,
    /// the request filed under the current segment; nil when nothing answers (refused).
    private func answer(_ request: Request) -> (Transcript.Outcome, [Transcript.Header], Int)? {
        state.withLock { state -> (Transcript.Outcome, [Transcript.Header], Int)? in
            func served(_ match: Match, _ outcome: Transcript.Outcome) {
                var actual = Transcript.Exchange(
                    method: request.method, service: request.service, target: request.target, body: request.body,
                    outcome: outcome)
                actual.requestHeaders = RequestHeaders.written(request.headers, apiKey: apiKey)
                state.served[state.segment].append(Served(match: match, exchange: actual))
            }
            switch decide(state, request) {
            case .exact(let index, let bindings):
                state.bindings = bindings
                state.use(index)
                let exchange = state.slots[index].exchange
                served(.exact(index), exchange.outcome)
                return (exchange.outcome, exchange.headers, exchange.line)
            case .unpinned(let index):
                let unpinned = classes[index].unpinned
                served(.unpinned, unpinned.outcome)
                return (unpinned.outcome, unpinned.headers, unpinned.line)
            case .differs(let index):
                state.use(index)
                let slot = state.slots[index]
                // What does match binds as the file names it: the answer's placeholders, and the
                // request once re-blessed, keep their names.
                var spelled = state.bindings
                spelled.bindWhatMatches(
                    target: slot.exchange.target, request.target, body: slot.body, json: request.json)
                state.bindings = spelled
                var speller = TranscriptSpeller(bindings: state.bindings, reserved: names, literals: literals)
                state.problems.append(
                    "line \(slot.exchange.line): the request differs from the recorded one: \(request.method) "
                        + "\(request.service) " + speller.spell(request.target) + " — "
                        + speller.spell(
                            Self.difference(slot, request, state.bindings)
                                .replacingOccurrences(of: apiKey, with: "<\(RequestHeaders.keyName)>")))
                served(.differs(index), slot.exchange.outcome)
                return (slot.exchange.outcome, slot.exchange.headers, slot.exchange.line)
            case .unexpected:
                served(.unexpected, .refused)
                var speller = TranscriptSpeller(bindings: state.bindings, reserved: names, literals: literals)
                state.problems.append(
                    "unexpected request: \(request.method) \(request.service) " + speller.spell(request.target))
                return nil
            }
        }
    }

    /// The first thing that keeps `slot` from matching, in words.
    private static func difference(_ slot: Slot, _ request: Request, _ bindings: TranscriptBindings) -> String {
        var trial = bindings
        guard trial.match(slot.exchange.target, request.target) else { return "the target differs" }
        guard trial.match(slot.body, text: request.body, json: request.json) else {
            switch slot.body {
            case .json(let pattern):
                guard let json = request.json else {
                    return "the file has JSON, the request sent \(request.body.isEmpty ? "no body" : "text")"
                }
                return pattern.difference(from: json, &trial) ?? "the body differs"
            case .empty: return "the file has no body, the request sent one"
            case .text, .any: return "the body differs"
            }
        }
        return TranscriptBindings.headerDifference(slot.exchange.requestHeaders, request.headers, &trial)
            ?? "the headers differ"
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
