import Foundation
import ShoppingAssistant

/// Figure 11: what bringing a conversation back after a restart costs (D18). One engine holds a
/// dialog of 200 messages, each answered with text and 3 products, saved in a dialog store on
/// every change. Timed side by side, opening after opening: the chat opened on the dialog kept
/// in memory (the snapshot built from memory), against a new engine created on the store and
/// opened (the store read and decoded, the dialog restored, the snapshot built). The headline
/// is the ratio of the medians; a second line compares the store's bytes with those of the
/// replies as the transport handed them over.
enum DialogRestoreBench {
    static let goal = 2.0
    static let bytesGoal = 2.0

    /// Counts the bytes of every `/v1/messages` reply handed to the engine.
    private final class CountingTransport: HTTPTransport, Sendable {
        let inner: InstantTransport
        private let replyBytes = Locked(0)
        init(inner: InstantTransport) { self.inner = inner }
        var bytes: Int { replyBytes.withLock { $0 } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let response = try await inner.send(request)
            if request.url.path.hasSuffix("/v1/messages") {
                replyBytes.withLock { $0 += response.body.count }
            }
            return response
        }
    }

    static func run(_ options: BenchOptions) async -> Verdict {
        let messages = 200
        let rounds = options.size(quick: 11, full: 41)
        Report.heading(11, "Dialog restore: a \(messages)-message dialog reopened after a restart")
        Report.line(
            "inputs: \(messages) messages, replies with text and 3 products, an in-memory dialog store, instant "
                + "transport; \(rounds) openings of each kind, alternating")

        let transport = CountingTransport(inner: InstantTransport(replies: BenchFixtures.numberedReplies(products: 3)))
        let store = InMemoryDialogStore()
        let kept = await make(transport: transport, store: store)
        await BenchEngine.prepare(kept)
        for number in 1...messages {
            await BenchEngine.send(kept, "Сообщение \(number)")
            await kept.waitForReply()
        }
        await kept.flushTracking()
        await kept.dialogStoreWritten()
        let received = transport.bytes
        let stored = store.storedData?.count ?? 0

        var memory: [Duration] = []
        var restored: [Duration] = []
        var startOnly: [Duration] = []
        var readFromMemory = Samples()
        var readRestored = Samples()
        let presenter = BenchPresenter()
        for _ in 0..<rounds {
            memory.append(
                await Timing.measure { await BenchEngine.open(kept, on: presenter) })
            readFromMemory.append(readEveryMessage(presenter))
            await kept.closeAssistant()
            await kept.dialogStoreWritten()
            // The store holds the dialog as the kept engine left it; a new engine reads it.
            var engine: AssistantEngine?
            let creation = await Timing.measure { engine = await make(transport: transport, store: store) }
            guard let engine else { fatalError("no engine") }
            await BenchEngine.prepare(engine)
            let restorePresenter = BenchPresenter()
            let opening = await Timing.measure { await BenchEngine.open(engine, on: restorePresenter) }
            restored.append(creation + opening)
            // What the restore left for later: every reply decoded when a presenter first reads it.
            readRestored.append(readEveryMessage(restorePresenter))
            guard await engine.chatSnapshot.messages.count == 2 * messages else {
                fatalError("the restored dialog is not the kept one")
            }
            await engine.shutdown()
            // An engine made and opened on an empty store: what a restart costs without a dialog.
            var empty: AssistantEngine?
            let emptyCreation = await Timing.measure {
                empty = await make(transport: transport, store: InMemoryDialogStore())
            }
            guard let empty else { fatalError("no engine") }
            await BenchEngine.prepare(empty)
            let emptyOpening = await Timing.measure { await BenchEngine.open(empty, on: BenchPresenter()) }
            startOnly.append(emptyCreation + emptyOpening)
            await empty.shutdown()
        }
        await kept.shutdown()

        // The restore itself: a start on the store, less a start on an empty one.
        let restore = max(seconds(median(restored)) - seconds(median(startOnly)), 0)
        let ratio = restore / seconds(median(memory))
        let bytesRatio = received > 0 ? Double(stored) / Double(received) : .infinity
        Report.line(
            "opening on the dialog in memory: median \(Format.seconds(seconds(median(memory)))); a new engine on the "
                + "store, created and opened: median \(Format.seconds(seconds(median(restored)))), on an empty "
                + "store: \(Format.seconds(seconds(median(startOnly)))); the restore: \(Format.seconds(restore))")
        Report.line(
            "store: \(Format.bytes(Double(stored))) for \(Format.bytes(Double(received))) of replies as received "
                + "(\(Format.ratio(bytesRatio)), goal ≤ \(Format.ratio(bytesGoal)))")
        Report.line(
            "reading every message of the opened snapshot, as a presenter drawing the whole chat would: from memory "
                + "\(readFromMemory.summary); restored \(readRestored.summary) (each reply decoded on its first read)")
        await saving(store: store, rounds: rounds, messages: messages)
        let verdict = Verdict(
            figure: 11, name: "Dialog restore (200 messages) vs. opening from memory", value: Format.ratio(ratio),
            goal: "≤ \(Format.ratio(goal)), store ≤ \(Format.ratio(bytesGoal)) the replies",
            met: ratio <= goal && bytesRatio <= bytesGoal)
        Report.verdict(verdict)
        return verdict
    }

    /// Builds every message of the presenter's latest snapshot once.
    private static func readEveryMessage(_ presenter: BenchPresenter) -> Duration {
        guard let snapshot = presenter.latest else { fatalError("no snapshot") }
        return Timing.measure {
            var products = 0
            for message in snapshot.messages { products &+= message.productBlock?.products.count ?? 0 }
            Sink.consume(products)
        }
    }

    /// What saving the dialog costs on each change (D18: the send and the reply of every message
    /// each save it whole): encoding it, and writing it through `FileDialogStore` (a temporary
    /// file, flushed, renamed over the dialog's, the directory flushed).
    private static func saving(store: InMemoryDialogStore, rounds: Int, messages: Int) async {
        guard let data = store.storedData, let encode = DialogStoreBenchmarks.encoder(for: data) else {
            fatalError("the store holds no dialog")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "assistant-bench-dialog-\(getpid())-\(UInt32.random(in: 0...UInt32.max))", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = FileDialogStore(fileURL: directory.appendingPathComponent("dialog.bin"))
        var encoding = Samples()
        var writing = Samples()
        for _ in 0..<rounds {
            encoding.append(Timing.measure { Sink.consume(encode()) })
            do {
                let start = Timing.now
                try file.saveDialog(data)
                writing.append(start.duration(to: Timing.now))
            } catch {
                Report.line("saving: skipped, the file store failed: \(error)")
                return
            }
        }
        let fileSystem = FileSystem.type(of: directory.path) ?? "file system unknown"
        Report.line(
            "saving the \(messages)-message dialog on a change: encoding \(encoding.summary); FileDialogStore in "
                + "\(directory.deletingLastPathComponent().path) (\(fileSystem)): \(writing.summary); twice a "
                + "message (its send, its reply)")
    }

    private static func make(transport: any HTTPTransport, store: any DialogStore) async -> AssistantEngine {
        let engine = AssistantEngine(
            configuration: AssistantEngineConfiguration(apiKey: BenchFixtures.apiKey, section: BenchFixtures.section),
            transport: transport, identityStore: InMemoryIdentityStore(uid: BenchFixtures.uid), dialogStore: store)
        await engine.setAssistantProductBlockBuilder(BenchBuilder())
        await engine.setAssistantActionHandler(BenchHandler())
        return engine
    }

    private static func median(_ values: [Duration]) -> Duration {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
