import Foundation
import ShoppingAssistant

/// Figure 1: from a 50-product reply's bytes to a snapshot the presenter can draw, against
/// decoding the same bytes into a plain `Codable` model.
///
/// Each iteration starts a new chat (untimed, tracking flushed), then times `sendMessage` to
/// the instant the presenter observes the snapshot with the reply. The transport answers
/// from memory at once, so the time is the engine's own work: encoding the request, the
/// reply's decoding and leniency rules, the snapshot, and the tracking it queues. The
/// baseline, measured in the same loop once the engine's tracking has been flushed (so that
/// nothing the engine left running competes with it), is `JSONDecoder` decoding the bytes
/// into `WireReply`.
///
/// Two sub-figures make the total attributable: the reply decoder alone against
/// `JSONDecoder` on the same bytes (1a), and the heap a stored reply takes (1b).
enum ReplyProcessingBench {
    static let goal = 0.75
    /// The decoder's share of figure 1: it must leave room for the snapshot and the publish.
    static let decoderGoal = 0.5
    /// A stored 3-product reply: its share of the 3 KiB a whole stored message may take (the
    /// user message, the dialog entries and the tracking log get the rest).
    static let storedReplyGoal = 2560.0

    static func run(_ options: BenchOptions) async -> Verdict {
        let productCount = 50
        let warmup = options.size(quick: 10, full: 50)
        let iterations = options.size(quick: 40, full: 400)
        let body = BenchFixtures.reply(products: productCount)
        Report.heading(1, "Reply processing: transport bytes → presenter snapshot, vs JSONDecoder only")
        Report.line(
            "inputs: \(productCount)-product reply (\(Format.bytes(Double(body.count)))), \(iterations) iterations "
                + "after \(warmup) warm-up, new chat before each, instant in-memory transport")

        let transport = InstantTransport(replyBody: body)
        let presenter = BenchPresenter()
        let engine = await BenchEngine.openChat(transport: transport, presenter: presenter)

        var engineTimes = Samples()
        var afterHandoff = Samples()
        var decodeTimes = Samples()
        for iteration in 0..<(warmup + iterations) {
            await engine.startNewChat()
            await engine.flushTracking()

            presenter.expectReply(messages: 2)
            let start = Timing.now
            await BenchEngine.send(engine, "Подарок для мамы до 3000 ₽")
            let observed = await presenter.replyObserved()
            let handoff = transport.lastReplyHandoff ?? start
            // The reply queued lifecycle events and tracking; let them finish before the
            // baseline runs, or they would slow it down and flatter the ratio.
            await engine.flushTracking()

            let decoded = Timing.measure {
                let reply = try? JSONDecoder().decode(WireReply.self, from: body)
                Sink.consume(reply?.products?.items.count ?? -1)
            }
            guard iteration >= warmup else { continue }
            engineTimes.append(start.duration(to: observed))
            afterHandoff.append(handoff.duration(to: observed))
            decodeTimes.append(decoded)
        }
        await engine.flushTracking()

        let shown = presenter.latest?.messages.last?.productBlock?.products.count ?? 0
        guard shown == productCount else { fatalError("the reply snapshot shows \(shown) products") }

        presenter.reportStaleDeliveries(messages: warmup + iterations)
        let ratio = engineTimes.median / decodeTimes.median
        Report.line("engine, send → snapshot with reply:   \(engineTimes.summary)")
        Report.line("  of which transport hand-off → snapshot: \(afterHandoff.summary)")
        Report.line("JSONDecoder → WireReply (baseline):   \(decodeTimes.summary)")
        Report.line(
            "ratio engine / decode: \(Format.ratio(ratio)) (from hand-off only: "
                + "\(Format.ratio(afterHandoff.median / decodeTimes.median)))")
        decoderOnly(body: body, productCount: productCount, options: options)
        storedReplies(options: options)
        let verdict = Verdict(
            figure: 1, name: "reply processing vs JSONDecoder", value: Format.ratio(ratio),
            goal: "≤ \(Format.ratio(goal))", met: ratio <= goal)
        Report.verdict(verdict)
        return verdict
    }

    /// 1a: the engine's reply decoder against `JSONDecoder` on the same bytes, alternating.
    private static func decoderOnly(body: Data, productCount: Int, options: BenchOptions) {
        let warmup = options.size(quick: 20, full: 100)
        let iterations = options.size(quick: 100, full: 1_000)
        var ours = Samples()
        var baseline = Samples()
        for iteration in 0..<(warmup + iterations) {
            let decoded = Timing.measure { Sink.consume(WireBenchmarks.decodeReply(body)) }
            let plain = Timing.measure {
                let reply = try? JSONDecoder().decode(WireReply.self, from: body)
                Sink.consume(reply?.products?.items.count ?? -1)
            }
            guard iteration >= warmup else { continue }
            ours.append(decoded)
            baseline.append(plain)
        }
        guard WireBenchmarks.decodeReply(body) == productCount else { fatalError("the reply decoder lost products") }
        let ratio = ours.median / baseline.median
        Report.line("1a. reply decoder alone, bytes → reply model: \(ours.summary)")
        Report.line("    JSONDecoder → WireReply, same bytes:      \(baseline.summary)")
        Report.verdict(
            Verdict(
                figure: 1, name: "reply decoder vs JSONDecoder", value: Format.ratio(ratio),
                goal: "≤ \(Format.ratio(decoderGoal))", met: ratio <= decoderGoal))
    }

    /// 1b: heap bytes per stored 3-product reply (`mallinfo2`), each with its own IDs.
    private static func storedReplies(options: BenchOptions) {
        let count = options.size(quick: 500, full: 5_000)
        let numbered = BenchFixtures.numberedReplies(products: 3)
        let bodies = (1...count).map(numbered)
        let before = Memory.sample()
        let stored = WireBenchmarks.storeReplies(bodies)
        let after = Memory.sample()
        guard stored.count == count else { fatalError("only \(stored.count) of \(count) replies decoded") }
        let perReply = Memory.perItem(from: before, to: after, count: count)
        let json = Double(bodies.reduce(0) { $0 + $1.count }) / Double(count)
        guard let heap = perReply.heap else {
            Report.line("1b. memory per stored 3-product reply: n/a (no mallinfo2 here)")
            return
        }
        Report.line(
            "1b. memory per stored 3-product reply: malloc in use \(Format.bytes(heap)) "
                + "(\(Format.ratio(heap / json)) its \(Format.bytes(json)) of JSON), \(Format.count(count)) replies")
        Report.verdict(
            Verdict(
                figure: 1, name: "memory per stored reply", value: Format.bytes(heap),
                goal: "≤ \(Format.bytes(storedReplyGoal))", met: heap <= storedReplyGoal))
        withExtendedLifetime(stored) {}
    }
}
