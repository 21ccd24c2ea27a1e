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
    /// A product action costs at most this many empty actor calls, through the one path every
    /// call takes.
    static let goal = 20.0

    static func run(_ options: BenchOptions) async -> Verdict {
        let replies = options.size(quick: 20, full: 200)
        let repetitions = options.size(quick: 2, full: 5)
        let productsPerReply = 50
        Report.heading(3, "Product actions per second: visibleImpression on fresh and duplicate refs")
        Report.line(
            "inputs: \(Format.count(replies * productsPerReply)) refs (\(replies) replies × \(productsPerReply) "
                + "products) per pass, \(repetitions) passes each for 1 task and \(concurrency) concurrent tasks "
                + "(median pass), instant tracking transport")

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

        var passes: [Pass] = []
        for tasks in [1, concurrency] {
            var pass = Pass(tasks: tasks, count: refs.count)
            for _ in 0..<repetitions {
                refs = await reopen(engine, presenter)
                let fresh = await perform(engine, refs, tasks: tasks)
                let delivery = await Timing.measure { await engine.flushTracking() }
                pass.fresh.append(fresh)
                pass.freshWithDelivery.append(fresh + delivery)
                pass.duplicate.append(await perform(engine, refs, tasks: tasks))
                pass.empty.append(await baseline(probe, refs, tasks: tasks))
            }
            passes.append(pass)
        }
        for pass in passes {
            let label = pass.tasks == 1 ? "1 task" : "\(pass.tasks) concurrent tasks"
            Report.line(
                "\(label): fresh refs \(Format.rate(pass.rate(pass.fresh))) (with delivery "
                    + "\(Format.rate(pass.rate(pass.freshWithDelivery)))), duplicate refs "
                    + "\(Format.rate(pass.rate(pass.duplicate))), empty actor call \(Format.rate(pass.rate(pass.empty)))"
            )
            Report.line(
                "  cost ratio vs empty actor call: fresh \(Format.ratio(pass.fresh.median / pass.empty.median)), "
                    + "duplicate \(Format.ratio(pass.duplicate.median / pass.empty.median))")
        }
        let counts = transport.counts
        Report.line("tracking URL requests delivered to the instant transport: \(Format.count(counts.trackingURLs))")

        // The default queue keeps 500 records (DL4), so most of a pass's 10,000 impressions are
        // dropped as the next arrive; with room for all, each is kept and delivered.
        await engine.setOfflineQueueSettings(OfflineQueueSettings(maxEntries: 1_000_000))
        var kept = Pass(tasks: 1, count: refs.count)
        for _ in 0..<repetitions {
            refs = await reopen(engine, presenter)
            let before = transport.counts.trackingURLs
            let fresh = await perform(engine, refs, tasks: 1)
            let delivery = await Timing.measure { await engine.flushTracking() }
            kept.fresh.append(fresh)
            kept.freshWithDelivery.append(fresh + delivery)
            kept.delivered.append(transport.counts.trackingURLs - before)
            kept.empty.append(await baseline(probe, refs, tasks: 1))
        }
        Report.line(
            "3b. every impression kept (maxEntries 1,000,000), 1 task: fresh refs \(Format.rate(kept.rate(kept.fresh))) "
                + "(\(Format.ratio(kept.fresh.median / kept.empty.median)) an empty actor call; with delivery "
                + "\(Format.rate(kept.rate(kept.freshWithDelivery)))), \(Format.count(kept.delivered.max() ?? 0)) "
                + "tracking URL requests a pass")
        let single = passes[0]
        let ratio = single.fresh.median / single.empty.median
        let verdict = Verdict(
            figure: 3, name: "product actions, fresh refs, 1 task",
            value: "\(Format.rate(single.rate(single.fresh))) (\(Format.ratio(ratio)) an empty actor call)",
            goal: "≤ \(Format.ratio(goal)) an empty actor call", met: ratio <= goal)
        Report.verdict(verdict)
        return verdict
    }

    /// Passes over every ref of an opening with `tasks` tasks: the time of each pass.
    private struct Pass {
        let tasks: Int
        let count: Int
        var fresh = Samples()
        var freshWithDelivery = Samples()
        var duplicate = Samples()
        var empty = Samples()
        var delivered: [Int] = []

        /// Calls per second in the median pass.
        func rate(_ samples: Samples) -> Double { Double(count) / samples.median }
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
    private static func perform(_ engine: AssistantEngine, _ refs: [AssistantProductRef], tasks: Int) async -> Duration
    {
        await Timing.measure {
            await withTaskGroup(of: Void.self) { group in
                for chunk in chunks(refs, tasks) {
                    group.addTask {
                        var accepted = 0
                        for ref in chunk {
                            let result = await engine.performAssistantProductAction(
                                product: ref, action: .visibleImpression)
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
