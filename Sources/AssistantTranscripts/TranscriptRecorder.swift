import AssistantREPL
import Foundation
import ShoppingAssistant

/// Records a live session (demo store or real services) as a transcript: each input line,
/// what the REPL printed (without colours: the output gives its observer plain lines), and
/// every HTTP exchange with its latency or fault. Of the response headers only those that
/// change what the engine does or prints are kept (`recordedHeaders`); request headers never
/// are, and the API key is replaced, so secrets never reach the file.
package final class TranscriptRecorder: REPLStepObserver {
    private struct State {
        var transcript: Transcript
    }

    /// Response headers the engine reads: `Retry-After` appears in a rate-limited message's
    /// diagnostic. Redirects (`Location`) are followed inside the transport, below the
    /// recorder, which sees only the final answer.
    static let recordedHeaders = ["Retry-After"]

    private let state: Locked<State>
    private let apiKey: String
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
                    comments: [summary, "Recorded with assistant --record."], settings: settings, segments: [])))
        apiKey = configuration.apiKey
        classify = ServiceClassifier(
            gravityBase: configuration.gravityBaseURL, shoppingBase: configuration.shoppingBaseURL)
    }

    /// A transport that records what passes through `transport`.
    package func recording(_ transport: any HTTPTransport) -> any HTTPTransport {
        RecordingTransport(inner: transport, recorder: self)
    }

    package func stepBegan(_ line: String) {
        state.withLock { $0.transcript.segments.append(Transcript.Segment(step: .input(line))) }
    }

    package func stepEnded() {}

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

    /// The step now running: requests are filed under the step that sent them.
    var currentSegment: Int? {
        state.withLock { $0.transcript.segments.isEmpty ? nil : $0.transcript.segments.count - 1 }
    }

    /// Files `exchange` under the step that sent it (`segment`), even when the answer came
    /// during a later step: on replay the request is made while that step runs, and only
    /// that step's and earlier steps' exchanges can answer it.
    func exchange(_ exchange: Transcript.Exchange, segment: Int?) {
        state.withLock { state in
            guard let segment, state.transcript.segments.indices.contains(segment) else { return }
            state.transcript.segments[segment].exchanges.append(exchange)
        }
    }

    /// The recording so far, secrets removed and generated IDs named.
    package var transcript: Transcript {
        var transcript = state.withLock { $0.transcript }
        var namer = TranscriptSpeller()
        let clean: (String) -> String = { [apiKey] text in
            apiKey.isEmpty ? text : text.replacingOccurrences(of: apiKey, with: "<api-key>")
        }
        for index in transcript.segments.indices {
            transcript.segments[index].exchanges = transcript.segments[index].exchanges.map { exchange in
                var copy = exchange
                copy.target = namer.spell(clean(exchange.target))
                copy.body = namer.spell(clean(exchange.body))
                if case .response(let status, let latency, let body) = exchange.outcome {
                    copy.outcome = .response(status: status, latency: latency, body: namer.spell(clean(body)))
                }
                copy.headers = exchange.headers.map { Transcript.Header($0.name, namer.spell(clean($0.value))) }
                return copy
            }
            transcript.segments[index].output = transcript.segments[index].output.map { namer.spell(clean($0)) }
        }
        return transcript
    }

    package func write(to path: String) throws {
        try TranscriptFormat.render(transcript).write(toFile: path, atomically: true, encoding: .utf8)
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
        policy: REPLEnvironment.Policy, output: REPLOutput, summary: String
    ) async -> (REPLEnvironment, TranscriptRecorder) {
        let recorder = TranscriptRecorder(policy: policy, summary: summary)
        var policy = policy
        policy.wrapTransport = REPLEnvironment.TransportWrapper { recorder.recording($0) }
        let environment = await REPLEnvironment(policy: policy, output: output)
        recorder.setStartUID(environment.identityStore.loadUid())
        output.setObserver { recorder.output($0) }
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
        let segment = recorder.currentSegment
        func record(_ outcome: Transcript.Outcome, headers: [Transcript.Header] = []) {
            recorder.exchange(
                Transcript.Exchange(
                    method: request.method.rawValue, service: service, target: target, body: body, outcome: outcome,
                    headers: headers),
                segment: segment)
        }
        do {
            let response = try await inner.send(request)
            let took = elapsed()
            // On virtual time a latency is what the backend decided, exactly, and it decides
            // what happens first (a page view answering after the entry flow); on real time a
            // sub-second latency is noise in a replay, and longer ones count in whole seconds.
            let latency: Duration =
                recorder.clockIsVirtual
                ? took : took >= .seconds(1) ? .milliseconds(took.components.seconds * 1000) : .zero
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
