import Foundation
import ShoppingAssistant
import ShoppingAssistantCurl
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

/// An event whose `triggerEvent` returned survives a SIGKILL at any moment: the next engine on
/// the same delivery store delivers it, at least once (DL5, AN4).
@Suite(.timeLimit(.minutes(5)))
struct DeliveryCrashTests {
    static let kills = 20
    /// Each child numbers its events from `round * numbersPerRound`, so numbers never repeat.
    static let numbersPerRound = 1_000_000
    /// The number of the event the last engine raises itself.
    static let lastNumber = 99_000_000

    /// A child process raises events in a loop against a flaky Gravity (resets, dropped
    /// connections, 503s) and prints `accepted n` after each `triggerEvent` returns; it is
    /// killed with SIGKILL at a random moment, and a new child starts on the same store,
    /// twenty times. Then Gravity heals and an engine in this process drains the store: every
    /// accepted event has reached Gravity. Copies are allowed (an outcome left uncertain by a
    /// kill), and counted.
    @Test func everyEventWhoseTriggerEventReturnedArrivesAfterAKillAtAnyMoment() async throws {
        // covers: DL5, AN4
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("outbox-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let gravity = try FlakyGravity()
        defer { gravity.stop() }
        var random = SeededRandom(seed: 0xD15_0005)

        var accepted: Set<Int> = []
        var storeWarnings: [String] = []
        var delays: [Int] = []
        for round in 0..<Self.kills {
            let child = try ChildProcess(
                role: DeliveryWriterRole.role, filter: "ChildProcessRoles",
                environment: [
                    DeliveryWriterRole.directoryVariable: directory.path,
                    DeliveryWriterRole.urlVariable: gravity.baseURL.absoluteString,
                    DeliveryWriterRole.firstNumberVariable: "\(round * Self.numbersPerRound)",
                ])
            let started = await withinHangGuard(
                "child \(round) opens its engine", seconds: childProcessGuardSeconds
            ) {
                await child.line(containing: "started")
            }
            // From 3 ms to 400 ms after the engine exists, spread evenly on a log scale, so
            // that some kills land while the first events are being written and others after
            // many deliveries.
            let delay = Int(exp(Double.random(in: log(3.0)...log(400.0), using: &random)).rounded())
            delays.append(delay)
            if started != nil { await wallClockWait(.milliseconds(delay), for: "the moment of kill \(round)") }
            child.kill()
            let ended =
                await withinHangGuard("child \(round) ends", seconds: childProcessGuardSeconds) {
                    await child.exit()
                } ?? nil
            #expect(ended?.signaled == true, "round \(round): killed, not exited: \(String(describing: ended))")
            // Under the thread sanitizer, with other suites starting children at the same moment,
            // the first child's output has been seen to stay open after its death (something
            // else holds the pipe; not yet understood). What it wrote is read either way, and an
            // event it reported and that is missing below still fails the test.
            await withKnownIssue("a killed child's output stays open", isIntermittent: true) {
                _ = await withinHangGuard("child \(round)'s output closes") { await child.outputClosed() }
            }
            try #require(started != nil)
            let lines = child.lines
            accepted.formUnion(lines.compactMap(DeliveryWriterRole.acceptedNumber(in:)))
            storeWarnings += lines.filter { $0.hasPrefix(DeliveryWriterRole.warningPrefix) }
        }

        gravity.heal()
        let warnings = Locked<[String]>([])
        let store = FileDeliveryStore(directory: directory)
        store.setWarningHandler { warning in warnings.withLock { $0.append(warning) } }
        let engine = AssistantEngine(
            configuration: DeliveryWriterRole.configuration(gravity: gravity.baseURL),
            transport: CurlTransport(proxy: .none), deliveryStore: store)
        // The store opens on the engine's store queue, before this event is written there:
        // once it is accepted, what the killed children left is loaded too.
        await engine.triggerEvent(
            events: [DeliveryWriterRole.event(Self.lastNumber)], pageContext: DeliveryWriterRole.page)
        accepted.insert(Self.lastNumber)
        // `triggerEvent` returns once its event is stored, maybe before its first attempt
        // ends, and `flushQueue()` does not wait for first attempts: wait for those first.
        let drained = await withinHangGuard("the store drains", seconds: 90) {
            for _ in 0..<20 {
                await engine.flushTracking()
                await engine.flushQueue()
                if await engine.pendingDeliveries == 0 { return true }
            }
            return false
        }
        let pending = await engine.pendingDeliveries
        _ = await withinHangGuard("the engine shuts down") { await engine.shutdown() }

        let delivered = gravity.deliveredCounts
        let lost = accepted.subtracting(delivered.keys).sorted()
        let duplicates = delivered.filter { accepted.contains($0.key) && $0.value > 1 }
        let unknown = Set(delivered.keys).subtracting(accepted)
        print(
            "delivery crash: kills \(Self.kills), accepted \(accepted.count), "
                + "delivered \(accepted.count - lost.count), lost \(lost.count), "
                + "duplicates \(duplicates.count) (\(duplicates.values.reduce(0) { $0 + $1 - 1 }) extra copies), "
                + "delivered but not seen accepted \(unknown.count), /event requests \(gravity.eventRequests), "
                + "store warnings \(storeWarnings.count + warnings.withLock { $0 }.count)")
        print("delivery crash: kill delays (ms) \(delays)")
        #expect(drained == true, "the store still holds \(pending) record(s)")
        #expect(lost.isEmpty, "accepted and never delivered: \(lost.prefix(20))")
        #expect(accepted.count > Self.kills, "the children accepted events: \(accepted.count)")
        let corrupt = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".corrupt") }
        #expect(corrupt.isEmpty, "a kill damages at most the last frame of a journal: \(corrupt)")
    }
}

/// What the children of `DeliveryCrashTests` do: raise numbered events in a loop until killed.
enum DeliveryWriterRole {
    static let role = "delivery-writer"
    static let directoryVariable = "DELIVERY_CRASH_DIRECTORY"
    static let urlVariable = "DELIVERY_CRASH_GRAVITY_URL"
    static let firstNumberVariable = "DELIVERY_CRASH_FIRST_NUMBER"
    static let warningPrefix = "store warning: "
    static let page = PageContext(type: .homepage, location: "app://home")

    static func configuration(gravity: URL) -> AssistantEngineConfiguration {
        // A short deadline, so that retries within a call (DL1) end quickly. A child raises
        // thousands of events in its first few hundred milliseconds, most of them still on their
        // first attempt when it is killed: the limit is raised so that no entry is dropped as an
        // overflow (DL4), which would be a loss this test does not look for.
        var configuration = AssistantEngineConfiguration(
            apiKey: "k", section: "s", gravityBaseURL: gravity, gravityTimeout: .seconds(2))
        configuration.offlineQueue = OfflineQueueSettings(maxEntries: 1_000_000)
        return configuration
    }

    static func event(_ number: Int) -> CustomEvent {
        CustomEvent(type: "crash-test-v1", name: "Crash test", customProps: ["n": "\(number)"])
    }

    static func acceptedNumber(in line: String) -> Int? {
        guard line.hasPrefix("accepted ") else { return nil }
        return Int(line.dropFirst("accepted ".count))
    }

    static func run() async {
        let environment = ProcessInfo.processInfo.environment
        guard let directory = environment[directoryVariable],
            let url = environment[urlVariable].flatMap(URL.init(string:)),
            let first = environment[firstNumberVariable].flatMap({ Int($0) })
        else { return }
        let store = FileDeliveryStore(directory: URL(fileURLWithPath: directory, isDirectory: true))
        store.setWarningHandler { warning in ChildProcess.report(warningPrefix + warning) }
        let engine = AssistantEngine(
            configuration: configuration(gravity: url), transport: CurlTransport(proxy: .none), deliveryStore: store)
        ChildProcess.report("started")
        // Until killed; a child whose parent is gone stops by itself.
        let parent = getppid()
        var number = first
        while getppid() == parent {
            await engine.triggerEvent(events: [event(number)], pageContext: page)
            // One write(2) to the pipe: the line is the parent's once the call returns.
            ChildProcess.report("accepted \(number)")
            number += 1
        }
    }
}

/// Gravity on a loopback server: every `/event` body is recorded, and it answers 200 with a
/// user and no campaigns. Until `heal()`, it is flaky: of every 20 `/event` requests, 4 are
/// reset before their body is read, 2 answered 503 and 1 read and dropped unanswered.
private final class FlakyGravity: Sendable {
    private struct State {
        var healthy = false
        var eventRequests = 0
        /// Per event number, how many requests carrying it were answered 200.
        var delivered: [Int: Int] = [:]
    }

    private let server: LoopbackHTTPServer
    private let state = Locked(State())
    static let answer = #"{"user":{"uid":"u-1","ses":"s-1"},"campaigns":[]}"#

    init() throws {
        server = try LoopbackHTTPServer()
        server.setResponder { [state] head in
            let success = Reply.respond { request in
                if request.path.hasSuffix("/event") {
                    let numbers = Self.eventNumbers(in: request.body)
                    state.withLock { state in
                        for number in numbers { state.delivered[number, default: 0] += 1 }
                    }
                }
                return .answer(status: 200, headers: ["Content-Type": "application/json"], text: Self.answer)
            }
            guard head.path.hasSuffix("/event") else { return success }
            let (healthy, index) = state.withLock { state in
                defer { state.eventRequests += 1 }
                return (state.healthy, state.eventRequests)
            }
            if healthy { return success }
            switch index % 20 {
            case 2, 7, 12, 17: return .resetBeforeBody
            case 4, 14: return .answer(status: 503, text: "down")
            case 9: return .drop
            default: return success
            }
        }
    }

    typealias Reply = LoopbackHTTPServer.Reply

    var baseURL: URL { server.baseURL }
    func heal() { state.withLock { $0.healthy = true } }
    func stop() { server.stop() }
    var deliveredCounts: [Int: Int] { state.withLock { $0.delivered } }
    var eventRequests: Int { state.withLock { $0.eventRequests } }

    /// The `n` of every `crash-test-v1` item in an `/event` body.
    static func eventNumbers(in body: Data) -> [Int] {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let items = object["data"] as? [[String: Any]]
        else { return [] }
        return items.compactMap { item in
            guard item["type"] as? String == "crash-test-v1",
                let properties = item["customProps"] as? [String: Any]
            else { return nil }
            return (properties["n"] as? String).flatMap { Int($0) }
        }
    }
}

/// SplitMix64: the kill moments are the same on every run.
private struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
