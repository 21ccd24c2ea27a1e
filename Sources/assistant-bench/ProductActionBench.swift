import Foundation
import ShoppingAssistant

/// Figure 3: `performAssistantProductAction(.visibleImpression)` throughput, on fresh refs
/// (accepted: the impression URL is queued) and on duplicate refs (refused by the ledger),
/// from one task and from 8 concurrent tasks on the same engine. The baseline is an empty
/// call into an actor with the same argument, measured the same way.
///
/// The refs come from real snapshots: a dialog of replies with 50 products each. Each pass on
/// fresh refs uses a new opening (close and reopen), because a ref is current only in the
/// opening that issued it (PR6, PR8). Tracking URL requests go to an instant transport; the
/// rate is of the calls, and "with delivery" also waits until the tracker has sent them all.
enum ProductActionBench {
    static let concurrency = 8

    static func run(_ options: BenchOptions) async -> Verdict {
        let replies = options.size(quick: 20, full: 200)
        let productsPerReply = 50
        Report.heading(3, "Product actions per second: visibleImpression on fresh and duplicate refs")
        Report.line(
            "inputs: \(Format.count(replies * productsPerReply)) refs (\(replies) replies × \(productsPerReply) "
                + "products) per pass, 1 task and \(concurrency) concurrent tasks, instant tracking transport")

        let transport = InstantTransport(replyBody: BenchFixtures.reply(products: productsPerReply))
        let presenter = BenchPresenter()
        let engine = await BenchEngine.make(transport: transport)
        await BenchEngine.prepare(engine)
        for index in 0..<replies {
            // Filled while the chat is closed: no snapshot per message, the same dialog.
            await BenchEngine.send(engine, "Вопрос \(index)")
            await engine.waitForReply()
        }

        // Warm-up on a throwaway opening.
        var refs = await reopen(engine, presenter)
        _ = await perform(engine, Array(refs.prefix(2_000)), tasks: 1)
        _ = await perform(engine, Array(refs.prefix(2_000)), tasks: concurrency)
        let probe = ActorProbe()
        _ = await baseline(probe, Array(refs.prefix(2_000)), tasks: 1)
        _ = await baseline(probe, Array(refs.prefix(2_000)), tasks: concurrency)

        var rows: [(String, Double, Double?)] = []
        var singleFresh = 0.0
        for tasks in [1, concurrency] {
            refs = await reopen(engine, presenter)
            let fresh = await perform(engine, refs, tasks: tasks)
            let delivered = await Timing.measure { await engine.flushTracking() }
            let duplicate = await perform(engine, refs, tasks: tasks)
            let empty = await baseline(probe, refs, tasks: tasks)
            let label = tasks == 1 ? "1 task" : "\(tasks) tasks"
            let freshRate = Double(refs.count) / fresh.seconds
            if tasks == 1 { singleFresh = freshRate }
            rows.append(("fresh refs, \(label)", freshRate, Double(refs.count) / (fresh + delivered).seconds))
            rows.append(("duplicate refs, \(label)", Double(refs.count) / duplicate.seconds, nil))
            rows.append(("empty actor call, \(label) (baseline)", Double(refs.count) / empty.seconds, nil))
        }
        let counts = transport.counts
        for (label, rate, withDelivery) in rows {
            let delivery = withDelivery.map { ", with delivery \(Format.rate($0))" } ?? ""
            Report.line("\(label): \(Format.rate(rate))\(delivery)")
        }
        for tasks in [1, concurrency] {
            let label = tasks == 1 ? "1 task" : "\(tasks) tasks"
            let rate = { (name: String) in rows.first { $0.0.hasPrefix(name) && $0.0.contains(label) }?.1 ?? .nan }
            Report.line(
                "cost ratio vs empty actor call, \(label): fresh \(Format.ratio(rate("empty") / rate("fresh"))), "
                    + "duplicate \(Format.ratio(rate("empty") / rate("duplicate")))")
        }
        Report.line("tracking URL requests delivered to the instant transport: \(Format.count(counts.trackingURLs))")
        let verdict = Verdict(
            figure: 3, name: "product actions (fresh refs, 1 task)", value: "\(Format.rate(singleFresh)) actions",
            goal: nil, met: nil)
        Report.verdict(verdict)
        return verdict
    }

    /// Closes and reopens the chat, and returns every product ref of the new opening.
    private static func reopen(_ engine: AssistantEngine, _ presenter: BenchPresenter) async -> [AssistantProductRef] {
        await engine.closeAssistant()
        await BenchEngine.open(engine, on: presenter)
        await engine.flushTracking()
        let messages = presenter.latest?.messages ?? []
        return messages.flatMap { $0.productBlock?.products.map(\.ref) ?? [] }
    }

    /// Reports an impression of every ref, split among `tasks` concurrent tasks.
    private static func perform(_ engine: AssistantEngine, _ refs: [AssistantProductRef], tasks: Int) async -> Duration {
        await Timing.measure {
            await withTaskGroup(of: Void.self) { group in
                for chunk in chunks(refs, tasks) {
                    group.addTask {
                        var accepted = 0
                        for ref in chunk {
                            let result = await engine.performAssistantProductAction(product: ref, action: .visibleImpression)
                            if result == .accepted { accepted += 1 }
                        }
                        Sink.consume(accepted)
                    }
                }
            }
        }
    }

    private static func baseline(_ probe: ActorProbe, _ refs: [AssistantProductRef], tasks: Int) async -> Duration {
        await Timing.measure {
            await withTaskGroup(of: Void.self) { group in
                for chunk in chunks(refs, tasks) {
                    group.addTask {
                        var accepted = 0
                        for ref in chunk {
                            if await probe.call(ref) { accepted += 1 }
                        }
                        Sink.consume(accepted)
                    }
                }
            }
        }
    }

    private static func chunks(_ refs: [AssistantProductRef], _ count: Int) -> [ArraySlice<AssistantProductRef>] {
        let size = (refs.count + count - 1) / count
        return stride(from: 0, to: refs.count, by: size).map { refs[$0..<min($0 + size, refs.count)] }
    }
}

/// An actor whose method does almost nothing: the cost of the hop itself.
private actor ActorProbe {
    private var calls = 0

    func call(_ ref: AssistantProductRef) -> Bool {
        calls += 1
        return calls > 0
    }
}
