import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting

/// The outcome of replaying one transcript.
package struct TranscriptReplay: Sendable {
    /// The transcript as this run produced it: same steps and answers, actual output and
    /// requests. Writing it back is re-blessing.
    package let actual: Transcript
    /// Unexpected requests, unused exchanges, a stuck step.
    package let problems: [String]
    /// Virtual time the replay covered.
    package let virtualTime: Duration
}

/// Replays a transcript through the real REPL core and engine, on a manual clock and a
/// replaying transport: a 120 s timeout costs no wall time.
///
/// Time moves only when nothing can run: the engine, the clock and the transport share an
/// `ActivityMonitor`, and when it reports quiescence while a command still waits, the clock
/// jumps to the next deadline.
package enum TranscriptReplayer {
    package static let apiKey = "transcript-api-key"

    package static func replay(_ transcript: Transcript) async -> TranscriptReplay {
        let time = VirtualTime()
        let configuration = AssistantEngineConfiguration(apiKey: apiKey, section: transcript.settings.section)
        let transport = ReplayTransport(
            transcript: transcript, clock: time.clock, activity: time.activity,
            classify: ServiceClassifier(
                gravityBase: configuration.gravityBaseURL, shoppingBase: configuration.shoppingBaseURL))
        let captured = Locked<[String]>([])
        let output = REPLOutput(style: .plain) { line in captured.withLock { $0.append(line) } }
        let environment = await REPLEnvironment(
            policy: .replay(transcript, configuration: configuration, transport: transport, time: time), output: output)
        let session = environment.session
        let activity = time.activity

        var problems: [String] = []
        var outputs: [[String]] = []
        var quit = false
        for (index, segment) in transcript.segments.enumerated() {
            transport.begin(segment: index)
            if quit {
                problems.append("line \(segment.line): input after :quit")
                outputs.append([])
                continue
            }
            switch segment.step {
            case .input(let text):
                let keepGoing = Locked(true)
                let finished = await time.run {
                    let result = await session.handle(text)
                    keepGoing.withLock { $0 = result }
                }
                if !finished {
                    problems.append("line \(segment.line): '\(text)' waits for something that never happens")
                }
                quit = !keepGoing.withLock { $0 }
            case .wait(let duration):
                await time.advance(by: duration)
            }
            await activity.waitUntilIdle()
            outputs.append(
                captured.withLock { lines in
                    defer { lines = [] }
                    return lines
                })
        }
        for exchange in transport.unused {
            problems.append(
                "line \(exchange.line): recorded exchange never requested: \(exchange.method) \(exchange.service) \(exchange.target)"
            )
        }
        problems += transport.problems

        var namer = UUIDNamer()
        var actual = transcript
        for index in actual.segments.indices {
            let served = transport.served(in: index).enumerated().sorted { lhs, rhs in
                (lhs.element.expectedIndex ?? Int.max, lhs.offset) < (rhs.element.expectedIndex ?? Int.max, rhs.offset)
            }
            let expected = transcript.segments[index].exchanges
            actual.segments[index].exchanges = served.map { item in
                var exchange = item.element.exchange
                exchange.target = namer.name(in: exchange.target)
                exchange.body = namer.name(in: exchange.body)
                // Keep the file's own spelling when it matches, so re-blessing changes only what changed.
                if let original = expected.first(where: { candidate in
                    var bindings = TranscriptBindings()
                    return candidate.method == exchange.method && candidate.service == exchange.service
                        && bindings.match(candidate.target, exchange.target)
                        && bindings.matchJSON(candidate.body, exchange.body)
                }) {
                    exchange.target = original.target
                    exchange.body = original.body
                }
                return exchange
            }
            actual.segments[index].output = outputs[index].map { namer.name(in: $0) }
        }
        return TranscriptReplay(actual: actual, problems: problems, virtualTime: time.clock.now.offset)
    }
}
