import Foundation
import ShoppingAssistant
import ShoppingAssistantCurl
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// Ten thousand events through a loopback Gravity that fails 30 % of the requests it gets —
/// refused connections, resets before and after the body is read, 503, 429 with `Retry-After`,
/// stalls the engine's deadline ends, a header cut in the middle, and a 200 whose body is cut
/// after the server has kept the event — over `CurlTransport`, with a file delivery store and
/// the engine's time on a manual clock. Afterwards every event has reached Gravity, nothing was
/// dropped, and the copies Gravity received twice are exactly the events whose 200 was cut:
/// the only failure after which the server had the event (DL5's uncertain outcome).
///
/// Faults are a function of the seed, the request's bytes and how often those bytes were
/// sent, not of the order concurrent requests take; the counts still vary a little from run to
/// run, since a body carries the session the engine knew when it raised the event.
/// `DELIVERY_SOAK_EVENTS=N` and `DELIVERY_SOAK_SEED=N` change the length and the seed.
@Suite(.timeLimit(.minutes(15)))
struct DeliverySoakTests {
    static let environment = ProcessInfo.processInfo.environment
    static let events = Int(environment["DELIVERY_SOAK_EVENTS"] ?? "") ?? 10_000
    static let seed = UInt64(environment["DELIVERY_SOAK_SEED"] ?? "") ?? 20_261_206
    /// Events raised at once, from as many tasks, before time moves.
    static let batch = 100
    static let page = PageContext(type: .homepage, location: "app://home")

    // covers: DL1, DL2, DL3, DL5, AN9
    @Test func tenThousandEventsThroughAGravityFailingThirtyPercentOfRequestsLoseNothing() async throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("delivery-soak-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let gravity = try SoakGravity()
        defer { gravity.stop() }
        let activity = ActivityMonitor()
        let clock = ManualClock(activity: activity)
        let transport = try SoakFaultTransport(seed: Self.seed, activity: activity)
        let errors = Locked<[String]>([])
        var configuration = AssistantEngineConfiguration(
            apiKey: "soak-secret-key", section: "s", gravityBaseURL: gravity.baseURL)
        // Every event must arrive: a queue that overflowed (DL4) would drop by design, which
        // is not what this soak looks for.
        configuration.offlineQueue = OfflineQueueSettings(maxEntries: 1_000_000)
        let engine = AssistantEngine(
            configuration: configuration, transport: transport, clock: clock,
            identityStore: InMemoryIdentityStore(uid: "u-soak"),
            logger: AssistantLogger(level: .error) { _, line in
                if line.contains("delivery") { errors.withLock { $0.append(line) } }
            },
            deliveryStore: FileDeliveryStore(directory: directory),
            // A fixed moment, so that the bytes of a body depend on the run as little as may be.
            wallClock: { Date(timeIntervalSince1970: 1_765_000_000) }, activity: activity)

        /// Waits until nothing can run: what is left waits on the clock (or is a stall, which
        /// the transport counts as waiting on it).
        func settle(_ what: String) async throws {
            let settled = await withinHangGuard("the engine settles: \(what)", seconds: 120) {
                await activity.waitUntilIdle()
            }
            try #require(settled == true, "still running: \(activity.busy)")
        }

        var raised = 0
        var largestQueue = 0
        while raised < Self.events {
            let numbers = raised..<min(raised + Self.batch, Self.events)
            for number in numbers {
                activity.spawn {
                    await engine.triggerEvent(events: [SoakGravity.event(number)], pageContext: Self.page)
                }
            }
            raised = numbers.upperBound
            try await settle("batch ending at \(raised)")
            largestQueue = max(largestQueue, await engine.pendingDeliveries)
            // Ten seconds, a second at a time: retries within the deadline (DL1) end, a stall
            // meets its deadline, and pauses of the drain (DL3) run on.
            for _ in 0..<10 {
                clock.advance(by: .seconds(1))
                try await settle("a second after \(raised)")
            }
            gravity.forgetReceivedRequests()
        }
        // The drain empties the queue on its own, pause after pause.
        var moves = 0
        while await engine.pendingDeliveries > 0, moves < 10_000, clock.advanceToNextDeadline() {
            moves += 1
            try await settle("the drain, move \(moves)")
        }
        let pending = await engine.pendingDeliveries
        if pending > 0 {
            // What a drain that stopped short was waiting for, to tell a stuck lane from a
            // pause nobody scheduled.
            let statuses = Dictionary(grouping: await engine.deliveryQueue, by: \.status.rawValue).mapValues(\.count)
            print(
                "delivery soak: the drain stopped after \(moves) moves with \(pending) pending (\(statuses)); "
                    + "sleepers \(clock.sleeperCount), busy \(activity.busy), live \(activity.liveTasks)")
        }
        _ = await withinHangGuard("the engine shuts down") { await engine.shutdown() }

        let copies = gravity.copies
        let lost = (0..<Self.events).filter { copies[$0] == nil }
        let extra = copies.values.reduce(0) { $0 + $1 - 1 }
        let faults = transport.faults
        print(
            "delivery soak (seed \(Self.seed)): \(Self.events) events, \(transport.requests) requests, "
                + "\(faults.values.reduce(0, +)) faulted (\(faults.values.reduce(0, +) * 100 / max(1, transport.requests)) %): "
                + faults.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
                .joined(separator: ", "))
        print(
            "delivery soak: lost \(lost.count), extra copies \(extra) (cut 200s \(gravity.cutAnswers)), "
                + "largest queue \(largestQueue), virtual time \(clock.now.offset), drops logged "
                + "\(errors.withLock { $0 }.filter { $0.contains("dropped") }.count)")
        #expect(pending == 0, "the store still holds \(pending) record(s)")
        #expect(lost.isEmpty, "never delivered: \(lost.prefix(20))")
        #expect(
            extra == gravity.cutAnswers,
            "a copy more for each 200 cut after the server kept the event, and no other: \(extra) vs \(gravity.cutAnswers)"
        )
        #expect(errors.withLock { $0 }.filter { $0.contains("dropped") }.isEmpty, "nothing dropped")
        let share = Double(faults.values.reduce(0, +)) / Double(max(1, transport.requests))
        #expect(share > 0.25 && share < 0.35, "about 30 % of requests faulted: \(share)")
        #expect(Set(faults.keys) == Set(SoakFault.allCases), "every kind of fault met: \(faults.keys)")
    }
}

/// The soak's faults, each marked on its request for the server to play.
enum SoakFault: String, CaseIterable, Sendable {
    case refused, resetBeforeBody, hangUpAfterBody, status503, status429, stall, cutHeader, cutAnswer

    static let header = "X-Soak-Fault"
}

/// `CurlTransport` to the loopback Gravity, deciding a fault for 30 % of requests: by a hash
/// of the seed, the request's bytes and how often those bytes were sent. A stalled request
/// is counted as waiting (as a manual clock counts a sleeper), so that the soak can tell when
/// nothing but the clock can end what is left; its cancellation counts it runnable again.
final class SoakFaultTransport: HTTPTransport, Sendable {
    /// Connections enough for every request of a batch at once: a request queued behind a
    /// stalled one would be runnable work that only the clock can free.
    private let inner = CurlTransport(proxy: .none, maximumConnectionsPerHost: 4 * DeliverySoakTests.batch)
    private let refusing: LoopbackHTTPServer.RefusingPort
    private let seed: UInt64
    private let activity: ActivityMonitor
    private struct State {
        var sent: [UInt64: Int] = [:]
        var requests = 0
        var faults: [SoakFault: Int] = [:]
    }
    private let state = Locked(State())

    init(seed: UInt64, activity: ActivityMonitor) throws {
        self.seed = seed
        self.activity = activity
        refusing = try LoopbackHTTPServer.RefusingPort()
    }

    var requests: Int { state.withLock { $0.requests } }
    var faults: [SoakFault: Int] { state.withLock { $0.faults } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ seed
        for byte in (request.body ?? Data()) + Data(request.url.absoluteString.utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        let fault = state.withLock { state -> SoakFault? in
            state.requests += 1
            let occurrence = state.sent[hash, default: 0]
            state.sent[hash] = occurrence + 1
            var mixed = SplitMix64(seed: hash &+ UInt64(occurrence))
            guard mixed.next() % 100 < 30 else { return nil }
            let fault = SoakFault.allCases[Int(mixed.next() % UInt64(SoakFault.allCases.count))]
            state.faults[fault, default: 0] += 1
            return fault
        }
        guard let fault else { return try await inner.send(request) }
        var marked = request
        marked.headers[SoakFault.header] = fault.rawValue
        if fault == .refused {
            var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
            components?.port = Int(refusing.port)
            marked.url = components?.url ?? request.url
        }
        guard fault == .stall else { return try await inner.send(marked) }
        let runnable = Locked(false)
        let activity = self.activity
        let becomeRunnable: @Sendable () -> Void = {
            let first = runnable.withLock { was in
                defer { was = true }
                return !was
            }
            if first { activity.begin() }
        }
        activity.end()
        defer { becomeRunnable() }
        return try await withTaskCancellationHandler {
            try await inner.send(marked)
        } onCancel: {
            becomeRunnable()
        }
    }
}

/// Gravity on a loopback server that plays the fault marked on each request and counts, per
/// event number, the copies it kept: each answered 200, and each whose 200 it cut.
final class SoakGravity: Sendable {
    private struct State {
        var copies: [Int: Int] = [:]
        var cutAnswers = 0
    }

    private let server: LoopbackHTTPServer
    private let state = Locked(State())
    static let answer = Data(#"{"user":{"uid":"u-soak","ses":"s-1"},"campaigns":[]}"#.utf8)

    init() throws {
        server = try LoopbackHTTPServer()
        server.setResponder { [state] head in
            let fault = head.header(SoakFault.header).flatMap(SoakFault.init(rawValue:))
            if fault == .resetBeforeBody { return .resetBeforeBody }
            return .respond { request in
                let kept: @Sendable () -> Void = {
                    let numbers = Self.eventNumbers(in: request.body)
                    state.withLock { state in
                        for number in numbers { state.copies[number, default: 0] += 1 }
                    }
                }
                switch fault {
                case .hangUpAfterBody?: return .script([.reset])
                case .status503?: return .answer(status: 503, text: "unavailable")
                case .status429?: return .answer(status: 429, headers: ["Retry-After": "1"], text: "slow down")
                case .stall?: return .script([.waitForHangUp])
                case .cutHeader?: return .script([.send(Data("HTTP/1.1 200 OK\r\nContent-Ty".utf8)), .close])
                case .cutAnswer?:
                    kept()
                    state.withLock { $0.cutAnswers += 1 }
                    let head =
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(Self.answer.count)\r\n\r\n"
                    return .script([.send(Data(head.utf8) + Self.answer.prefix(10)), .close])
                case .refused?, .resetBeforeBody?, nil:
                    kept()
                    return .answer(status: 200, headers: ["Content-Type": "application/json"], body: Self.answer)
                }
            }
        }
    }

    var baseURL: URL { server.baseURL }
    func stop() { server.stop() }
    /// The server keeps every request it read; the soak needs only the counts.
    func forgetReceivedRequests() { server.discardReceivedRequests() }
    var copies: [Int: Int] { state.withLock { $0.copies } }
    var cutAnswers: Int { state.withLock { $0.cutAnswers } }

    static func event(_ number: Int) -> CustomEvent {
        CustomEvent(type: "soak-v1", name: "Soak", customProps: ["n": "\(number)"])
    }

    /// The `n` of every `soak-v1` item in an `/event` body.
    static func eventNumbers(in body: Data) -> [Int] {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let items = object["data"] as? [[String: Any]]
        else { return [] }
        return items.compactMap { item in
            guard item["type"] as? String == "soak-v1", let properties = item["customProps"] as? [String: Any]
            else { return nil }
            return (properties["n"] as? String).flatMap { Int($0) }
        }
    }
}
