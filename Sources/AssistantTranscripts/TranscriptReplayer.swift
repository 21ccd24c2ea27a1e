import AssistantREPL
import Foundation
import ShoppingAssistant

/// The outcome of replaying one transcript.
package struct TranscriptReplay: Sendable {
    /// The transcript as this run produced it: same steps, answers and comments; every line
    /// that matched spelled as the file spells it (partial bodies and placeholders kept),
    /// every other line as it actually was, with generated IDs named. Writing it back is
    /// re-blessing.
    package let actual: Transcript
    /// Requests that differ or nobody recorded, unused exchanges, a stuck step.
    package let problems: [String]
    /// Virtual time the replay covered.
    package let virtualTime: Duration
    /// What the file says against what happened.
    package let diff: TranscriptDiff
    /// Everything this run did, as it did it: each step, the requests it sent in the order they
    /// were answered (with the text actually sent), what it printed, and the problems. Two
    /// replays of one file must come out with the same trace, byte for byte
    /// (`assistant replay --repeat`).
    package let trace: [String]

    /// Whether the replay matched the file and nothing went wrong.
    package var passed: Bool { problems.isEmpty && !diff.differs }

    /// The first thing that went wrong, in one line naming `file`: the first problem, else the
    /// first line the file and the replay disagree on; nil when it passed.
    package func headline(file: String) -> String? {
        guard !passed else { return nil }
        return problems.first.map { "\(file): \($0)" } ?? diff.firstChange(file: file)
    }

    /// Why the replay failed: the diff, then the problems, each line naming `file`; nil
    /// when it passed. With `limit` the diff is cut after that many lines, saying so.
    package func report(file: String, limit: Int? = nil) -> String? {
        guard !passed else { return nil }
        var parts: [String] = []
        if let diff = diff.render(file: file, limit: limit) { parts.append(diff) }
        parts += problems.map { "\(file): \($0)" }
        return parts.joined(separator: "\n")
    }
}

/// Replays a transcript through the real REPL core and engine, on a manual clock and a
/// replaying transport: a 120 s timeout costs no wall time.
///
/// Time moves only when nothing can run: the engine, the clock and the transport share an
/// `ActivityMonitor`, and when it reports quiescence while a command still waits, the clock
/// jumps to the next deadline.
package enum TranscriptReplayer {
    package static let apiKey = "transcript-api-key"

    /// Replays `transcript`; `wrapTransport` comes between the engine and the file's answers
    /// (to replay a change to what the engine sends, such as a header dropped).
    package static func replay(
        _ transcript: Transcript, wrapTransport: REPLEnvironment.TransportWrapper? = nil
    ) async -> TranscriptReplay {
        let time = VirtualTime()
        let configuration = AssistantEngineConfiguration(
            apiKey: apiKey, section: transcript.settings.section, logLevel: transcript.settings.logLevel,
            appName: REPLEnvironment.Policy.appName, appVersion: AssistantEngineConfiguration.sdkVersion)
        let transport = ReplayTransport(
            transcript: transcript, clock: time.clock, activity: time.activity, held: time.requests,
            classify: ServiceClassifier(
                gravityBase: configuration.gravityBaseURL, shoppingBase: configuration.shoppingBaseURL))
        let captured = Locked<[String]>([])
        let output = REPLOutput(style: .plain) { line in captured.withLock { $0.append(line) } }
        let environment = await REPLEnvironment(
            policy: .replay(
                transcript, configuration: configuration, transport: wrapTransport?.wrap(transport) ?? transport,
                time: time),
            output: output)
        let stepper = environment.session.stepper

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
                let outcome = await stepper.run(text)
                if !outcome.finished {
                    problems.append("line \(segment.line): '\(text)' waits for something that never happens")
                }
                quit = !outcome.keepGoing
            case .wait(let duration):
                await stepper.pass(duration)
            }
            outputs.append(
                captured.withLock { lines in
                    defer { lines = [] }
                    return lines
                })
        }
        problems += transport.problems
        for exchange in transport.unused {
            problems.append(
                "line \(exchange.line): recorded exchange never requested: \(exchange.method) \(exchange.service) \(exchange.target)"
            )
        }
        var comparison = Comparison(transcript: transcript, transport: transport)
        var trace: [String] = []
        for (index, segment) in transcript.segments.enumerated() {
            // Lines of an `%any-order` block are traced in the file's order when they match it.
            let output = comparison.compare(segment: index, output: outputs[index])
            trace.append(TranscriptFormat.renderStep(segment.step))
            for served in transport.served(in: index) { trace += TranscriptFormat.renderExchange(served.exchange) }
            trace += output.map { "  " + $0 }
        }
        return TranscriptReplay(
            actual: comparison.actual, problems: problems, virtualTime: time.clock.now.offset, diff: comparison.diff,
            trace: trace + problems)
    }

    /// Lines up a replay with its file, segment by segment, one binding table for the file.
    private struct Comparison {
        let transcript: Transcript
        let transport: ReplayTransport
        var bindings: TranscriptBindings
        var speller: TranscriptSpeller
        var actual: Transcript
        var diff = TranscriptDiff()
        /// The slot number of each segment's first exchange.
        let firstSlot: [Int]

        init(transcript: Transcript, transport: ReplayTransport) {
            self.transcript = transcript
            self.transport = transport
            bindings = transport.bindings
            speller = TranscriptSpeller(file: transcript, bindings: bindings)
            actual = transcript
            var slot = 0
            firstSlot = transcript.segments.map { segment in
                defer { slot += segment.exchanges.count }
                return slot
            }
        }

        /// Compares segment `index` with what it printed, and returns that output with the lines
        /// of each `%any-order` block that matched put in the file's order.
        @discardableResult
        mutating func compare(segment index: Int, output printedLines: [String]) -> [String] {
            let segment = transcript.segments[index]
            var output = printedLines
            var matchedBlocks: [Range<Int>] = []
            for block in segment.unordered {
                if let reordered = Self.reorder(output, block: block, patterns: segment.output, bindings) {
                    output = reordered
                    matchedBlocks.append(block)
                }
            }
            // The file's lines: the step, each exchange's lines, the output.
            var expected = [
                TranscriptDiff.ExpectedLine(text: TranscriptFormat.renderStep(segment.step), source: segment.line)
            ]
            var exchangeStart: [Int] = []
            var source = segment.line + 1
            for exchange in segment.exchanges {
                exchangeStart.append(expected.count)
                source = exchange.line
                for line in TranscriptFormat.renderExchange(exchange) {
                    expected.append(TranscriptDiff.ExpectedLine(text: line, source: source))
                    source += 1
                }
            }
            // Output lines, and the lines of the blocks around some of them.
            var outputAt: [Int] = []
            var blockOpenAt: [Int: Int] = [:]
            var blockCloseAt: [Int: Int] = [:]
            for (offset, line) in segment.output.enumerated() {
                if let block = segment.unordered.first(where: { $0.lowerBound == offset }) {
                    blockOpenAt[block.lowerBound] = expected.count
                    expected.append(TranscriptDiff.ExpectedLine(text: TranscriptFormat.anyOrder, source: source))
                    source += 1
                }
                outputAt.append(expected.count)
                expected.append(TranscriptDiff.ExpectedLine(text: "  " + line, source: source))
                source += 1
                if let block = segment.unordered.first(where: { $0.upperBound == offset + 1 }) {
                    blockCloseAt[block.lowerBound] = expected.count
                    expected.append(TranscriptDiff.ExpectedLine(text: TranscriptFormat.endOfBlock, source: source))
                    source += 1
                }
            }

            var lines = [TranscriptDiff.ActualLine(text: expected[0].text, link: 0)]
            var exchanges: [Transcript.Exchange] = []
            let served = transport.served(in: index).enumerated().filter { $0.element.match != .unpinned }
            let ordered = served.sorted { lhs, rhs in
                (Self.order(lhs.element.match), lhs.offset) < (Self.order(rhs.element.match), rhs.offset)
            }
            for (_, item) in ordered {
                var exchange = item.exchange
                var link: Int?
                switch item.match {
                case .exact(let slot):
                    let recorded = transport.recorded(slot)
                    exchange = recorded
                    let local = slot - firstSlot[index]
                    if local >= 0, local < segment.exchanges.count { link = exchangeStart[local] }
                case .differs(let slot):
                    let recorded = transport.recorded(slot)
                    var trial = bindings
                    if trial.match(recorded.target, item.exchange.target),
                        let body = try? BodyPattern(recorded.body),
                        trial.match(body, text: item.exchange.body, json: CanonicalJSON.value(item.exchange.body))
                    {
                        // Only the headers differ: the file keeps its own spelling of the rest.
                        exchange = recorded
                        exchange.requestHeaders = item.exchange.requestHeaders
                        exchange.anyRequestHeaders = false
                    } else {
                        exchange = spelled(item.exchange, like: recorded.body)
                        exchange.outcome = recorded.outcome
                        exchange.headers = recorded.headers
                    }
                case .unexpected:
                    exchange = spelled(item.exchange, like: "")
                case .unpinned:
                    continue
                }
                exchanges.append(exchange)
                for (offset, line) in TranscriptFormat.renderExchange(exchange).enumerated() {
                    lines.append(TranscriptDiff.ActualLine(text: line, link: link.map { $0 + offset }))
                }
            }

            // Output: aligned with placeholders bound, then the pairs confirmed in order.
            let patterns = segment.output
            let pairs = TranscriptDiff.align(patterns.count, output.count) { i, j in
                var trial = bindings
                return trial.match(patterns[i], output[j])
            }
            var linked = [Int?](repeating: nil, count: output.count)
            for (i, j) in pairs where bindings.match(patterns[i], output[j]) { linked[j] = i }
            speller.learn(bindings)
            var printed: [String] = []
            var blocks: [Range<Int>] = []
            for (j, line) in output.enumerated() {
                if let i = linked[j] {
                    // A matched block is whole and in order here: its lines open and close it.
                    let opens = matchedBlocks.first { $0.lowerBound == i }
                    if let opens, let at = blockOpenAt[opens.lowerBound] {
                        lines.append(TranscriptDiff.ActualLine(text: TranscriptFormat.anyOrder, link: at))
                        blocks.append(printed.count..<(printed.count + opens.count))
                    }
                    printed.append(patterns[i])
                    lines.append(TranscriptDiff.ActualLine(text: "  " + patterns[i], link: outputAt[i]))
                    if let closes = matchedBlocks.first(where: { $0.upperBound == i + 1 }),
                        let at = blockCloseAt[closes.lowerBound]
                    {
                        lines.append(TranscriptDiff.ActualLine(text: TranscriptFormat.endOfBlock, link: at))
                    }
                } else {
                    let text = speller.spell(line)
                    printed.append(text)
                    lines.append(TranscriptDiff.ActualLine(text: "  " + text, link: nil))
                }
            }
            actual.segments[index].exchanges = exchanges
            actual.segments[index].output = printed
            actual.segments[index].unordered = blocks.filter { $0.upperBound <= printed.count }
            diff.append(expected: expected, actual: lines, endSource: source)
            return output
        }

        /// `output` with the lines of `block` (a run of `patterns`) in the file's order, when
        /// the output holds them one after another in some order — nearest the block's own
        /// place first; nil when it does not.
        static func reorder(
            _ output: [String], block: Range<Int>, patterns: [String], _ bindings: TranscriptBindings
        ) -> [String]? {
            let size = block.count
            guard output.count >= size else { return nil }
            let starts = (0...(output.count - size)).sorted {
                (abs($0 - block.lowerBound), $0) < (abs($1 - block.lowerBound), $1)
            }
            for start in starts {
                var trial = bindings
                var taken = Set<Int>()
                var ordered: [String] = []
                for pattern in patterns[block] {
                    guard
                        let found = (start..<(start + size)).first(where: { index in
                            guard !taken.contains(index) else { return false }
                            var attempt = trial
                            guard attempt.match(pattern, output[index]) else { return false }
                            trial = attempt
                            return true
                        })
                    else { break }
                    taken.insert(found)
                    ordered.append(output[found])
                }
                if ordered.count == size {
                    var result = output
                    result.replaceSubrange(start..<(start + size), with: ordered)
                    return result
                }
            }
            return nil
        }

        /// Requests in the file's order, those nobody recorded last.
        private static func order(_ match: ReplayTransport.Match) -> Int {
            switch match {
            case .exact(let slot), .differs(let slot): return slot
            case .unpinned, .unexpected: return Int.max
            }
        }

        /// What was sent, with IDs named; a body is pretty when the file's was.
        private mutating func spelled(_ exchange: Transcript.Exchange, like recorded: String) -> Transcript.Exchange {
            var copy = exchange
            copy.target = speller.spell(exchange.target)
            if recorded.contains("\n"), let json = CanonicalJSON.value(exchange.body) {
                copy.body = speller.spell(CanonicalJSON.pretty(json))
            } else {
                copy.body = speller.spell(exchange.body)
            }
            return copy
        }
    }
}

extension REPLEnvironment.Policy {
    /// A transcript's replay: its answers through `transport`, on virtual time, starting with
    /// the transcript's `%uid`, with sequential IDs, as a piped session.
    package static func replay(
        _ transcript: Transcript, configuration: AssistantEngineConfiguration, transport: any HTTPTransport,
        time: VirtualTime
    ) -> Self {
        let settings = transcript.settings
        return Self(
            configuration: configuration,
            backend: .transport(transport),
            time: .virtual(time),
            identity: .memory(uid: settings.uid),
            ids: .sequential,
            settings: REPLSettings(
                width: settings.width, entrySelector: settings.entrySelector,
                assistantSelector: settings.assistantSelector, interactive: false),
            replaying: true)
    }
}
