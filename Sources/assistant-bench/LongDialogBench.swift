import Foundation
import ShoppingAssistant

/// Figure 4: does a message cost more as the dialog grows? One engine, one dialog filled to
/// 100, 1,000, 10,000 and 50,000 messages; at each size the cost of a message with the chat
/// open (send → the presenter holds the snapshot with the reply) and with it closed (send →
/// `waitForReply`), and the heap each stored message takes.
///
/// Between the sizes messages are sent with the chat closed; the chat is opened for a window
/// of messages centred on each size, then closed again. Each window alternates message by
/// message with a reference engine whose dialog is at #100, so the ratios compare two
/// measurements taken side by side, whatever else the machine is doing. Every reply has text, 3 products and
/// its own assistant message ID, as a server sends them. Heap is malloc's bytes in use from
/// before the engine existed, with the chat closed and the tracking flushed, divided by the
/// messages stored. The headline is the open-chat cost at #10,000 and #50,000 against #100.
enum LongDialogBench {
    static let goal = 1.2
    /// Heap per stored message (a user message and a 3-product reply).
    static let memoryGoal = 3072.0
    /// Filling the dialog to its largest size, windows included.
    static let fillGoal = 30.0

    static func run(_ options: BenchOptions) async -> Verdict {
        let sizes = options.size(quick: [100, 1_000, 5_000], full: [100, 1_000, 10_000, 50_000])
        let window = options.size(quick: 21, full: 61)
        let near = 100
        let largest = sizes[sizes.count - 1]
        Report.heading(
            4,
            "Long dialog: cost per message and heap per message at "
                + "\(sizes.map(Format.count).joined(separator: " / ")) messages")
        Report.line(
            "inputs: one dialog of \(Format.count(largest + window / 2)) messages, replies with text and 3 products, "
                + "windows of \(window) messages centred on each size (chat open) and the \(window) before it "
                + "(chat closed), instant transport")
        Report.line(
            "each window alternates message by message with a reference engine whose dialog is at #\(near) "
                + "(restarted for each size), so load on the machine hits both alike; ratios are to it")

        let before = Memory.sample()
        let transport = InstantTransport(replies: BenchFixtures.numberedReplies(products: 3))
        let far = Side(engine: await BenchEngine.make(transport: transport))
        await BenchEngine.prepare(far.engine)
        let reference = Side(engine: await BenchEngine.make(transport: transport))
        await BenchEngine.prepare(reference.engine)

        var rows: [Row] = []
        var openings: [(size: Int, duration: Duration)] = []
        let fillStart = Timing.now
        for size in sizes {
            // Closed: untimed up to the closed window, then the window side by side.
            await far.fill(upTo: size - window / 2 - window)
            await reference.restart()
            await reference.fill(upTo: near - window / 2 - window)
            var closed = (far: Samples(), reference: Samples())
            for _ in 0..<window {
                closed.reference.append(await reference.sendClosed())
                closed.far.append(await far.sendClosed())
            }
            await far.engine.flushTracking()
            await reference.engine.flushTracking()
            // Open: the window centred on the size, side by side.
            let opening = await Timing.measure { await far.open() }
            openings.append((far.sent, opening))
            await reference.open()
            var open = (far: Samples(), reference: Samples())
            for _ in 0..<window {
                open.reference.append(await reference.sendOpen())
                open.far.append(await far.sendOpen())
            }
            await far.close()
            await reference.close()
            // Heap with only the long dialog stored: the reference engine's dialog emptied.
            await reference.restart()
            let stored = Memory.perItem(from: before, to: Memory.sample(), count: far.sent)
            rows.append(
                Row(
                    size: size, open: open.far, openReference: open.reference, closed: closed.far,
                    closedReference: closed.reference, heap: stored.heap, resident: stored.resident))
        }
        let fillDuration = fillStart.duration(to: Timing.now).seconds
        let snapshotMessages = far.presenter.latest?.messages.count ?? 0
        guard snapshotMessages == 2 * far.sent else { fatalError("the snapshot shows \(snapshotMessages) messages") }
        far.presenter.reportStaleDeliveries(messages: window * sizes.count)
        reference.presenter.reportStaleDeliveries(messages: window * sizes.count)

        Report.line(
            "messages | chat open, per message (reference at #\(near); ratio) | chat closed, per message "
                + "(reference; ratio) | heap per message | resident per message")
        for row in rows {
            Report.line(
                "\(Format.count(row.size).padding(toLength: 8, withPad: " ", startingAt: 0)) | "
                    + "\(Format.seconds(row.open.median)) (\(Format.seconds(row.openReference.median)); "
                    + "\(Format.ratio(row.openRatio))) | \(Format.seconds(row.closed.median)) "
                    + "(\(Format.seconds(row.closedReference.median)); \(Format.ratio(row.closedRatio))) | "
                    + "\(row.heap.map { Format.bytes($0) } ?? "n/a") | \(Format.bytes(row.resident))")
        }
        Report.line(
            "opening the chat (present + the impressions of replies that landed closed, AN7): "
                + openings.map { "at #\(Format.count($0.size)) \($0.duration.short)" }.joined(separator: ", "))
        let trackingRecords = await far.engine.trackingLog.count
        Report.line(
            "tracking log kept by the engine: \(Format.count(trackingRecords)) records (bounded) after "
                + "\(Format.count(far.sent)) messages; filling to #\(Format.count(largest)) took "
                + "\(Format.seconds(fillDuration)) in all, reference windows included")

        let judged = rows.filter { $0.size >= 10_000 || $0.size == largest }
        for row in judged {
            Report.verdict(
                Verdict(
                    figure: 4, name: "message cost at #\(Format.count(row.size)) vs #\(near), chat open",
                    value: Format.ratio(row.openRatio), goal: "≤ \(Format.ratio(goal))", met: row.openRatio <= goal))
        }
        if let heap = rows[rows.count - 1].heap {
            Report.verdict(
                Verdict(
                    figure: 4, name: "heap per stored message at #\(Format.count(largest))", value: Format.bytes(heap),
                    goal: "≤ \(Format.bytes(memoryGoal))", met: heap <= memoryGoal))
        }
        Report.verdict(
            Verdict(
                figure: 4, name: "filling a \(Format.count(largest))-message dialog",
                value: Format.seconds(fillDuration), goal: "≤ \(Format.seconds(fillGoal))",
                met: fillDuration <= fillGoal))
        // The headline: the worst of the judged open-chat ratios.
        let worst = judged.map(\.openRatio).max() ?? .nan
        let verdict = Verdict(
            figure: 4, name: "message cost, worst of #10,000 and up vs #\(near), chat open", value: Format.ratio(worst),
            goal: "≤ \(Format.ratio(goal))", met: worst <= goal)
        Report.verdict(verdict)
        withExtendedLifetime((far, reference)) {}
        return verdict
    }

    private struct Row {
        let size: Int
        let open: Samples
        let openReference: Samples
        let closed: Samples
        let closedReference: Samples
        let heap: Double?
        let resident: Double

        var openRatio: Double { open.median / openReference.median }
        var closedRatio: Double { closed.median / closedReference.median }
    }

    /// One engine with its presenter and the number of messages its dialog holds.
    private final class Side: @unchecked Sendable {
        // @unchecked: used by one task at a time, in turn.
        let engine: AssistantEngine
        let presenter = BenchPresenter()
        private(set) var sent = 0

        init(engine: AssistantEngine) { self.engine = engine }

        /// Sends messages with the chat closed, untimed, up to (excluding) message `number`.
        func fill(upTo number: Int) async {
            while sent + 1 < number {
                _ = await sendClosed()
                if sent % 500 == 0 { await engine.flushTracking() }
            }
            await engine.flushTracking()
        }

        /// One message with the chat closed: send → `waitForReply`.
        func sendClosed() async -> Duration {
            let text = "Сообщение \(sent + 1)"
            let duration = await Timing.measure {
                await BenchEngine.send(engine, text)
                await engine.waitForReply()
            }
            sent += 1
            return duration
        }

        /// One message with the chat open: send → the presenter holds the snapshot with the reply.
        func sendOpen() async -> Duration {
            presenter.expectReply(messages: 2 * (sent + 1))
            let text = "Сообщение \(sent + 1)"
            let start = Timing.now
            await BenchEngine.send(engine, text)
            sent += 1
            let observed = await presenter.replyObserved()
            await engine.flushTracking()
            return start.duration(to: observed)
        }

        func open() async {
            await BenchEngine.open(engine, on: presenter)
            await engine.flushTracking()  // the impressions of the replies that landed closed (AN7)
        }

        func close() async {
            await engine.closeAssistant()
            await engine.flushTracking()
        }

        /// A new, empty dialog; the presenter lets go of the old one's snapshot.
        func restart() async {
            await engine.startNewChat()
            await engine.flushTracking()
            presenter.forget()
            sent = 0
        }
    }
}
