import Foundation
import ShoppingAssistant

/// Figure 4: does a message cost more as the dialog grows? The cost of a message (send →
/// snapshot with the reply, chat open on a presenter) around the 10,000th message of one
/// dialog, against the same cost around the 100th; and the memory each stored message takes.
///
/// One engine, one dialog. The messages between the two windows are sent while the chat is
/// closed, which changes nothing in the dialog but skips building a snapshot for each, so
/// that reaching message 10,000 takes seconds; the chat is opened for each window. Every
/// reply has text and 3 products and its own assistant message ID, as a server sends them.
/// Memory is the growth of resident memory and of malloc's bytes in use from before the
/// engine existed to the end, divided by the number of messages.
enum LongDialogBench {
    static let goal = 1.3

    static func run(_ options: BenchOptions) async -> Verdict {
        let near = 100
        let far = options.size(quick: 1_000, full: 10_000)
        let window = options.size(quick: 11, full: 21)
        Report.heading(4, "Long dialog: cost per message at message \(Format.count(far)) vs at message \(near)")
        Report.line(
            "inputs: one dialog of \(Format.count(far + window / 2)) messages, replies with text and 3 products, "
                + "windows of \(window) messages centred on #\(near) and #\(Format.count(far)), instant transport")

        let before = Memory.sample()
        let transport = InstantTransport(replies: BenchFixtures.numberedReplies(products: 3))
        let presenter = BenchPresenter()
        let engine = await BenchEngine.make(transport: transport)
        await BenchEngine.prepare(engine)

        var sent = 0
        var closedTimes: [Int: Duration] = [:]
        /// Sends messages while the chat is closed, up to (excluding) message `number`.
        func fill(upTo number: Int) async {
            while sent + 1 < number {
                let duration = await Timing.measure {
                    await BenchEngine.send(engine, "Сообщение \(sent + 1)")
                    await engine.waitForReply()
                }
                sent += 1
                closedTimes[sent] = duration
                if sent % 500 == 0 { await engine.flushTracking() }
            }
            await engine.flushTracking()
        }
        /// The engine building one snapshot of the whole chat (`chatSnapshot`), the O(n) part.
        func measureSnapshot() async -> Samples {
            var samples = Samples()
            for _ in 0..<5 {
                samples.append(await Timing.measure { Sink.consume(await engine.chatSnapshot.messages.count) })
            }
            return samples
        }
        /// Times `count` messages with the chat open, each to the snapshot showing its reply.
        func measureOpen(_ count: Int) async -> Samples {
            var samples = Samples()
            for _ in 0..<count {
                presenter.expectReply(messages: 2 * (sent + 1))
                let start = Timing.now
                await BenchEngine.send(engine, "Сообщение \(sent + 1)")
                sent += 1
                let observed = await presenter.replyObserved()
                samples.append(start.duration(to: observed))
                await engine.flushTracking()
            }
            return samples
        }

        await fill(upTo: near - window / 2)
        await BenchEngine.open(engine, on: presenter)
        await engine.flushTracking()
        let nearTimes = await measureOpen(window)
        let nearSnapshot = await measureSnapshot()
        await engine.closeAssistant()
        let fillStart = Timing.now
        await fill(upTo: far - window / 2)
        let fillDuration = fillStart.duration(to: Timing.now)
        let closed = Memory.sample()
        let closedCount = sent
        let openStart = Timing.now
        await BenchEngine.open(engine, on: presenter)
        await engine.flushTracking()
        let openDuration = openStart.duration(to: Timing.now)
        let farTimes = await measureOpen(window)
        let farSnapshot = await measureSnapshot()
        await engine.flushTracking()
        let after = Memory.sample()
        let stored = Memory.perItem(from: before, to: closed, count: closedCount)
        let total = Memory.perItem(from: before, to: after, count: sent)
        let trackingRecords = await engine.trackingLog.count
        let snapshotMessages = presenter.latest?.messages.count ?? 0
        guard snapshotMessages == 2 * sent else { fatalError("the snapshot shows \(snapshotMessages) messages") }

        presenter.reportStaleDeliveries(messages: 2 * window)
        let ratio = farTimes.median / nearTimes.median
        // The last `window` messages sent with the chat closed before each open window.
        let closedNearFirst = near - window / 2 - window
        let closedFarFirst = far - window / 2 - window
        let closedNear = Samples(closedWindow(closedTimes, from: closedNearFirst, window))
        let closedFar = Samples(closedWindow(closedTimes, from: closedFarFirst, window))
        Report.line("chat open, around message #\(near):    \(nearTimes.summary)")
        Report.line("chat open, around message #\(Format.count(far)): \(farTimes.summary)")
        Report.line("ratio #\(Format.count(far)) / #\(near): \(Format.ratio(ratio))")
        Report.line(
            "chat closed (no snapshots), median per message: #\(closedNearFirst)–#\(closedNearFirst + window - 1) "
                + "\(Format.seconds(closedNear.median)), #\(Format.count(closedFarFirst))–"
                + "#\(Format.count(closedFarFirst + window - 1)) \(Format.seconds(closedFar.median)) "
                + "(\(Format.ratio(closedFar.median / closedNear.median))); filling took \(fillDuration.short)")
        Report.line(
            "one chatSnapshot alone: #\(near) \(Format.seconds(nearSnapshot.median)), #\(Format.count(far)) "
                + "\(Format.seconds(farSnapshot.median)) (\(Format.ratio(farSnapshot.median / nearSnapshot.median))); "
                + "a message publishes two; opening the chat at #\(Format.count(closedCount)) took \(openDuration.short)"
        )
        func memory(_ perItem: (resident: Double, heap: Double?)) -> String {
            "malloc in use \(perItem.heap.map { Format.bytes($0) } ?? "n/a"), resident \(Format.bytes(perItem.resident))"
        }
        Report.line(
            "memory per stored message (user message + reply): \(memory(total)) with the chat open "
                + "(\(Format.count(sent)) messages); \(memory(stored)) with it closed (dialog and tracking log only)")
        Report.line(
            "tracking log kept by the engine: \(Format.count(trackingRecords)) records "
                + "(\(String(format: "%.1f", Double(trackingRecords) / Double(sent))) per message, never trimmed)")
        let verdict = Verdict(
            figure: 4, name: "message cost at #\(Format.count(far)) vs #\(near)", value: Format.ratio(ratio),
            goal: "≤ \(Format.ratio(goal))", met: ratio <= goal)
        Report.verdict(verdict)
        withExtendedLifetime(engine) {}
        return verdict
    }

    /// The closed-chat timings of `count` messages starting at `first` (those that exist).
    private static func closedWindow(_ times: [Int: Duration], from first: Int, _ count: Int) -> [Double] {
        (first..<(first + count)).compactMap { times[$0]?.seconds }
    }
}
