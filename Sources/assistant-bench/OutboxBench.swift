import Foundation
import ShoppingAssistant
import ShoppingAssistantCurl
import ShoppingAssistantTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 10: what the delivery outbox costs, on a `FileDeliveryStore` in a temporary
/// directory.
///
/// 10a: one `triggerEvent` (a purchase of two lines) on an engine whose transport answers at
/// once, against one bare append of the same bytes: open a file in the same directory, write
/// the frame the journal wrote for the event, `fsync`. `triggerEvent` returns once its event
/// is durable, so the append is the floor of the call. A third side, the same call on an
/// `InMemoryDeliveryStore`, is the engine's own part. The sides alternate iteration by
/// iteration, each starting with the store idle: the previous event delivered and its removal
/// written.
///
/// 10b: 1,000 `triggerEvent` calls from 100 tasks at once, against 1,000 made one after
/// another, on one engine: events that arrive while a write is under way share the next one.
///
/// 10c: draining 500 queued events to a loopback HTTP server through `CurlTransport`
/// (`flushQueue()` until `pendingDeliveries` is 0), against 500 bare libcurl POSTs of the same
/// bodies one after another (`curl_easy_perform` on the calling thread, one reused handle).
/// The queue fills while the transport refuses to connect.
enum OutboxBench {
    static let appendGoal = 1.3
    static let concurrencyGoal = 10.0
    static let drainGoal = 2.0

    static func run(_ options: BenchOptions) async -> Verdict {
        Report.heading(10, "Delivery outbox on a file store: triggerEvent, concurrent events, draining the queue")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "assistant-bench-outbox-\(getpid())-\(UInt32.random(in: 0...UInt32.max))", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        } catch {
            Report.line("skipped: cannot create \(root.path): \(error)")
            return Verdict(figure: 10, name: "delivery outbox", value: "skipped", goal: nil, met: nil)
        }
        defer { try? FileManager.default.removeItem(at: root) }
        Report.line("stores in \(root.path) (\(FileSystem.type(of: root.path) ?? "file system unknown"))")

        _ = await triggerEventVersusAppend(options, root: root.appendingPathComponent("10a", isDirectory: true))
        _ = await concurrentEvents(options, root: root.appendingPathComponent("10b", isDirectory: true))
        return await drain(options, root: root.appendingPathComponent("10c", isDirectory: true))
    }

    // MARK: - 10a

    private static func triggerEventVersusAppend(_ options: BenchOptions, root: URL) async -> Verdict {
        let warmup = options.size(quick: 5, full: 20)
        let iterations = options.size(quick: 30, full: 200)
        let name = "one triggerEvent on a file store vs one fsync'ed append of the same bytes (10a)"
        Report.line(
            "10a. inputs: a purchase of 2 lines, instant transport, \(iterations) iterations per side after "
                + "\(warmup) warm-up, alternating, the store idle before each")
        let outbox = root.appendingPathComponent("outbox", isDirectory: true)
        let baselinePath = root.appendingPathComponent("baseline.log").path
        let fileTransport = InstantTransport()
        let memoryTransport = InstantTransport()
        let fileEngine = await BenchEngine.make(
            transport: fileTransport, deliveryStore: FileDeliveryStore(directory: outbox))
        let memoryEngine = await BenchEngine.make(transport: memoryTransport)

        var onFile = Samples()
        var inMemory = Samples()
        var bare = Samples()
        var frame: [UInt8] = []
        for iteration in 0..<(warmup + iterations) {
            let measured = iteration >= warmup
            for (engine, side) in [(fileEngine, 0), (memoryEngine, 1)] {
                let time = await Timing.measure { await Events.purchase(engine, number: iteration) }
                await settle(engine)
                guard measured else { continue }
                if side == 0 { onFile.append(time) } else { inMemory.append(time) }
            }
            // The frame the journal wrote for the latest event; a compaction may have just
            // rewritten it away, so it is looked for until found.
            if frame.isEmpty { frame = JournalFile.lastAddFrame(in: outbox.path) ?? [] }
            guard !frame.isEmpty else { continue }
            guard let time = BareAppend.measure(frame, to: baselinePath) else {
                Report.line("stopped: the bare append to \(baselinePath) failed (errno \(errno))")
                return Verdict(figure: 10, name: name, value: "failed", goal: nil, met: nil)
            }
            if measured { bare.append(time) }
        }
        let delivered = fileTransport.counts.events
        let pending = await fileEngine.pendingDeliveries
        await fileEngine.shutdown()
        await memoryEngine.shutdown()
        guard !frame.isEmpty, bare.count > 0 else {
            Report.line("stopped: the journal in \(outbox.path) showed no event's frame")
            return Verdict(figure: 10, name: name, value: "failed", goal: nil, met: nil)
        }

        let ratio = onFile.median / bare.median
        Report.line("triggerEvent, engine on FileDeliveryStore: \(onFile.summary)")
        Report.line("bare append: open, write \(Format.bytes(Double(frame.count))), fsync, close: \(bare.summary)")
        Report.line("triggerEvent, engine on InMemoryDeliveryStore (the engine without the disk): \(inMemory.summary)")
        Report.line(
            "ratio triggerEvent on a file store / bare append: \(Format.ratio(ratio)); the call adds "
                + "\(Format.seconds(onFile.median - bare.median)) to the append; events delivered \(delivered), "
                + "left in the store \(pending)")
        let verdict = Verdict(
            figure: 10, name: name, value: Format.ratio(ratio), goal: "≤ \(Format.ratio(appendGoal))",
            met: ratio <= appendGoal)
        Report.verdict(verdict)
        return verdict
    }

    // MARK: - 10b

    private static func concurrentEvents(_ options: BenchOptions, root: URL) async -> Verdict {
        let count = options.size(quick: 200, full: 1_000)
        let tasks = 100
        let name = "\(Format.count(count)) triggerEvent calls from \(tasks) tasks at once vs one after another (10b)"
        Report.line(
            "10b. inputs: \(Format.count(count)) purchases of 2 lines on one engine on FileDeliveryStore, instant "
                + "transport; \(tasks) tasks at once vs one after another, the store idle before each")
        let transport = InstantTransport()
        let engine = await BenchEngine.make(
            transport: transport, deliveryStore: FileDeliveryStore(directory: root.appendingPathComponent("outbox")))
        for number in 0..<10 { await Events.purchase(engine, number: number) }
        await settle(engine)

        let sequential = await Timing.measure {
            for number in 0..<count { await Events.purchase(engine, number: 1_000_000 + number) }
        }
        await settle(engine)
        let perTask = (count + tasks - 1) / tasks
        let concurrent = await Timing.measure {
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        for number in (task * perTask)..<min(count, (task + 1) * perTask) {
                            await Events.purchase(engine, number: 2_000_000 + number)
                        }
                    }
                }
            }
        }
        await settle(engine)
        let delivered = transport.counts.events
        let pending = await engine.pendingDeliveries
        await engine.shutdown()

        let sequentialRate = Double(count) / sequential.seconds
        let concurrentRate = Double(count) / concurrent.seconds
        let ratio = concurrentRate / sequentialRate
        Report.line(
            "one after another: \(sequential.short) → \(Format.rate(sequentialRate)) events "
                + "(\(Format.seconds(sequential.seconds / Double(count))) each)")
        Report.line(
            "\(tasks) tasks at once: \(concurrent.short) → \(Format.rate(concurrentRate)) events; ratio "
                + "\(Format.ratio(ratio)); events delivered \(delivered), left in the store \(pending)")
        let verdict = Verdict(
            figure: 10, name: name, value: "\(Format.ratio(ratio)) the events per second",
            goal: "≥ \(Format.ratio(concurrencyGoal))", met: ratio >= concurrencyGoal)
        Report.verdict(verdict)
        return verdict
    }

    // MARK: - 10c

    private static func drain(_ options: BenchOptions, root: URL) async -> Verdict {
        let count = options.size(quick: 100, full: 500)
        let repetitions = options.size(quick: 1, full: 3)
        let name = "draining \(count) queued events over loopback HTTP vs \(count) bare libcurl POSTs (10c)"
        Report.line(
            "10c. inputs: \(count) purchases queued while the transport refused to connect, then flushQueue() "
                + "through CurlTransport until none is pending; \(repetitions) rounds after a warm-up of 20, "
                + "alternating with the bare POSTs")
        let server: LoopbackHTTPServer
        do {
            server = try LoopbackHTTPServer()
        } catch {
            Report.line("skipped: cannot start the loopback server: \(error)")
            return Verdict(figure: 10, name: name, value: "skipped", goal: nil, met: nil)
        }
        defer { server.stop() }
        let answer = LoopbackHTTPServer.Reply.answer(
            status: 200, headers: ["Content-Type": "application/json"], body: BenchFixtures.eventBody)
        server.setResponder { _ in answer }

        let transport = SwitchedTransport(inner: CurlTransport(proxy: .none))
        // A first attempt that fails is not retried within a 1 s deadline, so the queue fills
        // without waiting for the retries' pauses.
        let engine = await BenchEngine.make(
            transport: transport,
            gravityBaseURL: server.baseURL, gravityTimeout: .seconds(1),
            deliveryStore: FileDeliveryStore(directory: root.appendingPathComponent("outbox")))
        // Online first: the answers bring the session, so no event waits at the session gate.
        for number in 0..<5 { await Events.purchase(engine, number: number) }
        await settle(engine)

        var drains = Samples()
        var bareTimes = Samples()
        var eachPost = Samples()
        var client: CurlBareClient?
        var base = 1_000
        for round in 0...repetitions {
            let measured = round > 0
            let size = measured ? count : 20
            server.discardReceivedRequests()
            transport.setOffline(true)
            // From 20 tasks, so that the events share the journal's writes and the queue
            // fills quickly.
            let first = base
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<20 {
                    group.addTask {
                        for index in stride(from: task, to: size, by: 20) {
                            await Events.purchase(engine, number: first + index)
                        }
                    }
                }
            }
            base += size
            await engine.flushTracking()
            let queued = await engine.pendingDeliveries
            guard queued == size else {
                Report.line("stopped: \(queued) events queued instead of \(size)")
                await engine.shutdown()
                return Verdict(figure: 10, name: name, value: "failed", goal: nil, met: nil)
            }

            transport.setOffline(false)
            let start = Timing.now
            await engine.flushQueue()
            let drained = start.duration(to: Timing.now)
            let left = await engine.pendingDeliveries
            await settle(engine)
            let posts = server.receivedRequests.filter { $0.method == "POST" }
            guard left == 0, posts.count == size, let url = URL(string: server.baseURL.absoluteString + posts[0].path)
            else {
                Report.line("stopped: the drain left \(left) of \(size) pending, the server had \(posts.count) POSTs")
                await engine.shutdown()
                return Verdict(figure: 10, name: name, value: "failed", goal: nil, met: nil)
            }

            let bare = client ?? CurlBareClient(url: url)
            client = bare
            let bodies = posts.map(\.body)
            var failed = 0
            var each = Samples()
            let bareTime = Timing.measure {
                for body in bodies {
                    let start = Timing.now
                    if bare.post(body)?.status != 200 { failed += 1 }
                    each.append(start.duration(to: Timing.now))
                }
            }
            guard failed == 0 else {
                Report.line("stopped: \(failed) of \(size) bare libcurl POSTs failed")
                await engine.shutdown()
                return Verdict(figure: 10, name: name, value: "failed", goal: nil, met: nil)
            }
            if measured {
                drains.append(drained)
                bareTimes.append(bareTime)
                for seconds in each.values { eachPost.append(seconds: seconds) }
            }
        }
        await engine.shutdown()

        let ratio = drains.median / bareTimes.median
        Report.line(
            "flushQueue() through CurlTransport: \(drains.summary), \(Format.seconds(drains.median / Double(count))) "
                + "an event")
        Report.line(
            "bare libcurl POSTs one after another: \(bareTimes.summary), "
                + "\(Format.seconds(bareTimes.median / Double(count))) a POST")
        Report.line("each bare POST: \(eachPost.summary)")
        Report.line("ratio drain / bare libcurl: \(Format.ratio(ratio))")
        let verdict = Verdict(
            figure: 10, name: name, value: Format.ratio(ratio), goal: "≤ \(Format.ratio(drainGoal))",
            met: ratio <= drainGoal)
        Report.verdict(verdict)
        return verdict
    }

    // MARK: - Helpers

    /// Waits until everything accepted so far is delivered and the store has written all it
    /// was asked to: `clearQueue()` returns once the store has run every write asked before
    /// it, and with the queue delivered it writes nothing itself.
    private static func settle(_ engine: AssistantEngine) async {
        await engine.flushTracking()
        await engine.clearQueue()
    }
}

/// The event of the figure: a purchase of two lines, as an app reports a finished order.
private enum Events {
    static let page = PageContext(type: .cart, data: ["KIT-1001", "ELC-2001"], location: "app://checkout/done")
    static let lines = [
        CartItem(productId: "KIT-1001", quantity: 2, itemPrice: 1990),
        CartItem(productId: "ELC-2001", quantity: 1, itemPrice: 4990),
    ]

    static func purchase(_ engine: AssistantEngine, number: Int) async {
        await engine.triggerEvent(
            events: [
                PurchaseEvent(
                    uniqueTransactionId: "ORDER-\(100_000_000 + number)", value: 8970, cart: lines, currency: "RUB")
            ],
            pageContext: page)
    }
}

/// A transport that refuses to connect while it is off, as with no network at all.
private final class SwitchedTransport: HTTPTransport, Sendable {
    private let inner: any HTTPTransport
    private let offline = Locked(false)

    init(inner: any HTTPTransport) { self.inner = inner }

    func setOffline(_ value: Bool) { offline.withLock { $0 = value } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard !offline.withLock({ $0 }) else { throw HTTPTransportError.cannotConnect("offline") }
        return try await inner.send(request)
    }
}

/// The floor of a durable event: append its bytes to a file and flush them.
private enum BareAppend {
    /// Opens `path` for appending, writes `bytes`, fsyncs and closes it; the time it took,
    /// or `nil` if a call failed.
    static func measure(_ bytes: [UInt8], to path: String) -> Duration? {
        var failed = false
        let time = Timing.measure {
            let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                failed = true
                return
            }
            defer { close(fd) }
            let written = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { write(fd, $0, buffer.count) } ?? 0
            }
            failed = written != bytes.count || fsync(fd) != 0
        }
        return failed ? nil : time
    }
}

/// Reads a `FileDeliveryStore` journal as the bench needs it.
private enum JournalFile {
    /// The bytes of the last frame in the journal under `directory` that adds one record.
    static func lastAddFrame(in directory: String) -> [UInt8]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory),
            let name = names.first(where: { $0.hasPrefix("journal-") && $0.hasSuffix(".log") }),
            let data = FileManager.default.contents(atPath: directory + "/" + name)
        else { return nil }
        let bytes = [UInt8](data)
        let header = DeliveryJournal.header
        guard bytes.count >= header.count, bytes.prefix(header.count).elementsEqual(header) else { return nil }
        var found: [UInt8]?
        var offset = header.count
        while offset + DeliveryJournal.frameHeaderBytes <= bytes.count {
            let length = (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
            let end = offset + DeliveryJournal.frameHeaderBytes + length
            guard length > 0, end <= bytes.count else { break }
            let payload = bytes[(offset + DeliveryJournal.frameHeaderBytes)..<end]
            if case .add(let records)? = try? DeliveryJournal.decode(payload), records.count == 1 {
                found = Array(bytes[offset..<end])
            }
            offset = end
        }
        return found
    }
}
