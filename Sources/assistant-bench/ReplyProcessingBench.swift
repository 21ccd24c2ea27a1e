import Foundation
import ShoppingAssistant

/// Figure 1: from a 50-product reply's bytes to a snapshot the presenter can draw, against
/// decoding the same bytes into a plain `Codable` model.
///
/// Each iteration starts a new chat (untimed, tracking flushed), then times `sendMessage` to
/// the instant the presenter observes the snapshot with the reply. The transport answers
/// from memory at once, so the time is the engine's own work: encoding the request, the
/// reply's decoding and leniency rules, the snapshot, and the tracking it queues. The
/// baseline, measured in the same loop, is `JSONDecoder` decoding the bytes into `WireReply`.
enum ReplyProcessingBench {
    static let goal = 1.5

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
        let verdict = Verdict(
            figure: 1, name: "reply processing vs JSONDecoder", value: Format.ratio(ratio),
            goal: "≤ \(Format.ratio(goal))", met: ratio <= goal)
        Report.verdict(verdict)
        return verdict
    }
}
