import Foundation
import ShoppingAssistant

/// Figure 9: many engines at once, each sending one message, as a server process hosting many
/// shoppers would. 1,000 prepared engines (chat closed) send one message each, all at once,
/// and each waits for its reply; the figure is messages per second. Beside it, one engine
/// sends the same number of messages one after another: what the engines lose or gain by
/// running side by side on the machine's cores.
enum ManySendersBench {
    static func run(_ options: BenchOptions) async -> Verdict {
        let count = options.size(quick: 100, full: 1_000)
        Report.heading(9, "Many engines: \(Format.count(count)) engines sending one message each, at once")
        Report.line(
            "inputs: \(Format.count(count)) prepared engines, chat closed, one shared instant transport, 3-product "
                + "replies; baseline: one engine sending \(Format.count(count)) messages in turn")

        let transport = InstantTransport(replies: BenchFixtures.numberedReplies(products: 3))
        var engines: [AssistantEngine] = []
        engines.reserveCapacity(count)
        for _ in 0..<count {
            let engine = await BenchEngine.make(transport: transport)
            await BenchEngine.prepare(engine)
            engines.append(engine)
        }
        // Warm-up: the first message of a process pays for lazily built metadata.
        let single = await BenchEngine.make(transport: transport)
        await BenchEngine.prepare(single)
        for index in 0..<10 {
            await BenchEngine.send(single, "Разогрев \(index)")
            await single.waitForReply()
        }

        let parallel = await Timing.measure {
            await withTaskGroup(of: Void.self) { group in
                for (index, engine) in engines.enumerated() {
                    group.addTask {
                        await BenchEngine.send(engine, "Сообщение \(index)")
                        await engine.waitForReply()
                    }
                }
            }
        }
        let repliedTo = await engines.asyncMap { await $0.chatSnapshot.messages.count }.filter { $0 == 2 }.count
        guard repliedTo == count else { fatalError("only \(repliedTo) of \(count) engines show their reply") }
        for engine in engines { await engine.flushTracking() }

        let sequential = await Timing.measure {
            for index in 0..<count {
                await BenchEngine.send(single, "Сообщение \(index)")
                await single.waitForReply()
            }
        }
        await single.flushTracking()

        let rate = Double(count) / parallel.seconds
        let sequentialRate = Double(count) / sequential.seconds
        Report.line(
            "\(Format.count(count)) engines, one message each, at once: \(parallel.short) → \(Format.rate(rate)) "
                + "messages")
        Report.line(
            "one engine, \(Format.count(count)) messages in turn (baseline): \(sequential.short) → "
                + "\(Format.rate(sequentialRate)) messages; ratio \(Format.ratio(rate / sequentialRate))")
        withExtendedLifetime((engines, single)) {}
        let verdict = Verdict(
            figure: 9, name: "\(Format.count(count)) engines sending one message each",
            value: "\(Format.rate(rate)) messages", goal: nil, met: nil)
        Report.verdict(verdict)
        return verdict
    }
}
