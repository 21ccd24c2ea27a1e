import AssistantREPL
import Foundation
import ShoppingAssistant

/// Records a live session (demo store or real services) as a transcript: each input line,
/// what the REPL printed (without colours: the output gives its observer plain lines), and
/// every HTTP exchange with its latency or fault. Of the response headers only those that
/// change what the engine does or prints are kept (`recordedHeaders`); of the request headers
/// the significant ones (`RequestHeaders`), the API key written `<key>`, so secrets never reach
/// the file.
///
/// With a file attached, the recording is written as it goes: the settings at once, and each
/// step as soon as it is settled — the next step has begun (so it prints nothing more) and
/// none of its requests, or an earlier step's, is still in flight. `finish(cutShort:)` writes
/// the rest; after a signal, the steps that ended and a `%cut-short` line.
package final class TranscriptRecorder: REPLStepObserver {
    private struct State {
        var transcript: Transcript
        var file: RecordingFile?
        /// Steps written to the file so far, named by one speller in order.
        var written = 0
        var namer: TranscriptSpeller
        /// Requests in flight, per step.
        var inFlight: [Int] = []
        /// The last step has ended.
        var lastEnded = false
        var finished = false
    }

    /// Response headers the engine reads: `Retry-After` appears in a rate-limited message's
    /// diagnostic. Redirects (`Location`) are followed inside the transport, below the
    /// recorder, which sees only the final answer.
    static let recordedHeaders = ["Retry-After"]

    private let state: Locked<State>
    let apiKey: String
    let classify: ServiceClassifier
    /// The session's clock: latencies are measured on it, so a piped demo session on virtual
    /// time records the virtual delay (a slow reply's 5 s), not the wall time it took.
    let clock: any Clock<Duration>
    /// `clock` is virtual: latencies on it are exact, not noise.
    let clockIsVirtual: Bool

    package init(
        settings: Transcript.Settings, configuration: AssistantEngineConfiguration, summary: String,
        clock: any Clock<Duration> = ContinuousClock(), clockIsVirtual: Bool = false
    ) {
        self.clock = clock
        self.clockIsVirtual = clockIsVirtual
        state = Locked(
            State(
                transcript: Transcript(
                    comments: [summary, "Recorded with assistant --record."], settings: settings, segments: []),
                namer: TranscriptSpeller(namingMoments: !clockIsVirtual)))
        apiKey = configuration.apiKey
        classify = ServiceClassifier(
            gravityBase: configuration.gravityBaseURL, shoppingBase: configuration.shoppingBaseURL)
    }

    /// A transport that records what passes through `transport`.
    package func recording(_ transport: any HTTPTransport) -> any HTTPTransport {
        RecordingTransport(inner: transport, recorder: self)
    }

    package func stepBegan(_ line: String) {
        state.withLock { state in
            state.transcript.segments.append(Transcript.Segment(step: .input(line)))
            state.inFlight.append(0)
            state.lastEnded = false
            writeSettled(&state, upTo: state.transcript.segments.count - 1)
        }
    }

    package func stepEnded() {
        state.withLock { $0.lastEnded = true }
    }

    /// Writes the recording to `file` from now on: the comments and settings at once, each step
    /// as it is settled. Call once, after `setStartUID(_:)`.
    package func attach(_ file: RecordingFile) {
        state.withLock { state in
            state.file = file
            file.append(TranscriptFormat.renderHeader(state.transcript))
            writeSettled(&state, upTo: state.transcript.segments.count - 1)
        }
    }

    /// Ends the recording into the attached file: every step not yet written, or, when the
    /// session was ended by a signal (`cutShort` names it, `SIGTERM`), the steps that ended,
    /// then `%cut-short SIGTERM` and the line that was still running, as a comment. Throws when
    /// the file could not be written. Only the first call writes.
    package func finish(cutShort: String? = nil) throws(RecordingFile.OpenError) {
        let file = state.withLock { state -> RecordingFile? in
            guard !state.finished, let file = state.file else { return nil }
            state.finished = true
            let count = state.transcript.segments.count
            guard let cutShort else {
                writeSettled(&state, upTo: count, waitingForNothing: true)
                return file
            }
            writeSettled(&state, upTo: state.lastEnded ? count : count - 1, waitingForNothing: true)
            var lines = [TranscriptFormat.renderCutShort(cutShort)]
            if state.written < count, case .input(let line) = state.transcript.segments[state.written].step {
                lines.append("# not finished when the session ended: > " + line)
            }
            file.append(lines)
            return file
        }
        try file?.close()
    }

    /// Writes the steps from the first unwritten one up to (not including) `limit`, stopping
    /// at one with a request in flight unless `waitingForNothing`.
    private func writeSettled(_ state: inout State, upTo limit: Int, waitingForNothing: Bool = false) {
        guard let file = state.file else { return }
        var lines: [String] = []
        while state.written < limit, waitingForNothing || state.inFlight[state.written] == 0 {
            let segment = cleaned(state.transcript.segments[state.written], namer: &state.namer)
            lines += TranscriptFormat.renderSegment(segment)
            state.written += 1
        }
        file.append(lines)
    }

    /// A request starts: it belongs to the step under way, which is not settled until it is
    /// answered. Both under one lock: a step begun in between would otherwise be written out
    /// as settled while this request was still to land in it. Returns that step's segment.
    func requestStarted() -> Int? {
        state.withLock { state in
            guard !state.transcript.segments.isEmpty else { return nil }
            let segment = state.transcript.segments.count - 1
            if state.inFlight.indices.contains(segment) { state.inFlight[segment] += 1 }
            return segment
        }
    }

    /// The identity store's uid at the start of the session (`%uid`).
    package func setStartUID(_ uid: String?) {
        state.withLock { $0.transcript.settings.uid = uid }
    }

    package func output(_ line: String) {
        state.withLock { state in
            guard !state.transcript.segments.isEmpty else { return }  // the banner is not a step's output
            state.transcript.segments[state.transcript.segments.count - 1].output.append(line)
        }
    }

    /// Files `exchange` under the step that sent it (`segment`), even when the answer came
    /// during a later step: on replay the request is made while that step runs, and only
    /// that step's and earlier steps' exchanges can answer it.
    func exchange(_ exchange: Transcript.Exchange, segment: Int?) {
        state.withLock { state in
            guard let segment, state.transcript.segments.indices.contains(segment) else { return }
            state.transcript.segments[segment].exchanges.append(exchange)
            state.inFlight[segment] = max(0, state.inFlight[segment] - 1)
        }
    }

    /// The recording so far, secrets removed and generated IDs named.
    package var transcript: Transcript {
        var transcript = state.withLock { $0.transcript }
        var namer = TranscriptSpeller(namingMoments: !clockIsVirtual)
        for index in transcript.segments.indices {
            transcript.segments[index] = cleaned(transcript.segments[index], namer: &namer)
        }
        return transcript
    }

    /// `segment` as a file holds it: the API key replaced, generated IDs named by `namer`,
    /// which names them in order of first sight over the steps it is given in turn.
    private func cleaned(_ segment: Transcript.Segment, namer: inout TranscriptSpeller) -> Transcript.Segment {
        let clean: (String) -> String = { [apiKey] text in
            apiKey.isEmpty ? text : text.replacingOccurrences(of: apiKey, with: "<\(RequestHeaders.keyName)>")
        }
        var copy = segment
        copy.exchanges = segment.exchanges.map { exchange in
            var copy = exchange
            copy.target = namer.spell(clean(exchange.target))
            copy.body = namer.spell(clean(exchange.body))
            if case .response(let status, let latency, let body) = exchange.outcome {
                copy.outcome = .response(status: status, latency: latency, body: namer.spell(clean(body)))
            }
            copy.headers = exchange.headers.map { Transcript.Header($0.name, namer.spell(clean($0.value))) }
            return copy
        }
        copy.output = segment.output.map { namer.spell(clean($0)) }
        return copy
    }
}

extension TranscriptRecorder {
    /// A recorder for the session `policy` describes: its settings, its configuration's key to
    /// keep out of the file, its clock to measure latencies on.
    package convenience init(policy: REPLEnvironment.Policy, summary: String) {
        var settings = Transcript.Settings()
        settings.width = policy.settings.width
        settings.section = policy.configuration.section
        settings.entrySelector = policy.settings.entrySelector
        settings.assistantSelector = policy.settings.assistantSelector
        settings.logLevel = policy.configuration.logLevel
        let clock: any Clock<Duration>
        let virtual: Bool
        switch policy.time {
        case .real: (clock, virtual) = (ContinuousClock(), false)
        case .clock(let given): (clock, virtual) = (given, false)
        case .virtual(let time): (clock, virtual) = (time.clock, true)
        }
        self.init(
            settings: settings, configuration: policy.configuration, summary: summary, clock: clock,
            clockIsVirtual: virtual)
    }

    /// Builds the session `policy` describes, recorded: every request passes through the
    /// recorder, every printed line is observed, and the file starts from the identity store's
    /// uid. Run the session with the recorder as its step observer.
    package static func recordedEnvironment(
        policy: REPLEnvironment.Policy, output: REPLOutput, summary: String, file: RecordingFile? = nil
    ) async -> (REPLEnvironment, TranscriptRecorder) {
        let recorder = TranscriptRecorder(policy: policy, summary: summary)
        var policy = policy
        policy.wrapTransport = REPLEnvironment.TransportWrapper { recorder.recording($0) }
        let environment = await REPLEnvironment(policy: policy, output: output)
        recorder.setStartUID(environment.identityStore.loadUid())
        output.setObserver { recorder.output($0) }
        if let file { recorder.attach(file) }
        return (environment, recorder)
    }

    /// The summary line of a recording made with `assistant --record`.
    package static func summary(onDemoStore: Bool) -> String {
        "A session recorded \(onDemoStore ? "on the demo store" : "against live services")."
    }
}

/// Passes requests through and tells the recorder what happened.
struct RecordingTransport: HTTPTransport {
    let inner: any HTTPTransport
    let recorder: TranscriptRecorder

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (service, target) = recorder.classify.describe(request.method, request.url)
        let body = CanonicalJSON.text(request.body)
        let elapsed = stopwatch(on: recorder.clock)
        let trackerDelivery = TrackerDeliveryScope.isActive
        let segment = recorder.requestStarted()
        // The key never reaches the file: `Authorization: Bearer <key>`.
        let requestHeaders = RequestHeaders.written(RequestHeaders.sent(request.headers), apiKey: recorder.apiKey)
        func record(_ outcome: Transcript.Outcome, headers: [Transcript.Header] = []) {
            recorder.exchange(
                Transcript.Exchange(
                    method: request.method.rawValue, service: service, target: target, body: body, outcome: outcome,
                    headers: headers, requestHeaders: requestHeaders),
                segment: segment)
        }
        do {
            let response = try await inner.send(request)
            let took = elapsed()
            // On virtual time a latency is what the backend decided, exactly, and it decides
            // what happens first (a page view answering after the entry flow); on real time a
            // sub-second latency is noise in a replay, and longer ones count in whole seconds —
            // except the tracker's deliveries': nothing waits for them but a step's own wait for
            // its tracking, on a stopped impression clock, so their latency (a loaded machine's
            // as much as a slow host's) would only move the next delivery into a later step of
            // the replay than the live session had it in.
            let latency: Duration =
                recorder.clockIsVirtual
                ? took
                : took >= .seconds(1) && !trackerDelivery ? .milliseconds(took.components.seconds * 1000) : .zero
            let answer = CanonicalJSON.value(response.body)
            recorder.classify.learn(from: answer)
            let headers = TranscriptRecorder.recordedHeaders.compactMap { name in
                response.header(name).map { Transcript.Header(name, $0) }
            }
            record(
                .response(status: response.status, latency: latency, body: CanonicalJSON.text(response.body)),
                headers: headers)
            return response
        } catch let error as HTTPTransportError {
            // A transcript keeps the fault, not the wording: say what the replay will say.
            switch error {
            case .cannotConnect:
                record(.refused)
                throw HTTPTransportError.cannotConnect(ReplayTransport.refusedMessage)
            case .connectionLost:
                record(.lost)
                throw HTTPTransportError.connectionLost(ReplayTransport.lostMessage)
            case .timedOut:
                record(.timeout)
                throw error
            }
        } catch {
            record(.timeout)  // the engine gave up waiting
            throw error
        }
    }
}
