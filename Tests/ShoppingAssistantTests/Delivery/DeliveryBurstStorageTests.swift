import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// A burst of records (the impressions of every reply that landed while the chat was closed,
/// a host's batch of events) grows the delivery side's collections to its size; once the
/// records are delivered that storage is given back, however large the burst was, instead of
/// staying for as long as the engine lives.
@Suite struct DeliveryBurstStorageTests {
    private static let now = Date(timeIntervalSince1970: 1_750_000_000)
    private static let burst = 2_000
    /// Far below what a burst's records take, above what a few leftover slots take.
    private static let drained = 512

    private static func record(_ kind: DeliveryRecord.Kind = .tracking) -> DeliveryRecord {
        DeliveryRecord(
            id: UUID(), kind: kind, target: kind == .tracking ? "https://t.example/i?p=1" : kind.rawValue,
            body: kind == .tracking ? nil : Data("{}".utf8), createdAt: now, label: "impression", owner: "u-1")
    }

    // A burst whose first attempts all fail fills the route's heap, then the lane's, then
    // drains one at a time.
    // covers: DL2, DL3
    @Test func theMachineGivesBackWhatABurstGrewOnceItIsDelivered() {
        var machine = DeliveryMachine(settings: OfflineQueueSettings(maxEntries: 10_000), seed: 42)
        _ = machine.loaded([], now: Self.now)
        _ = machine.accepted((0..<Self.burst).map { _ in Self.record() }, route: .tracking, now: Self.now)
        var actions = machine.persisted(failure: nil, now: Self.now)
        var pauses: [(lane: DeliveryMachine.Lane, generation: UInt64)] = []
        var delivered = 0
        while true {
            if actions.isEmpty, let pause = pauses.popLast() {
                actions = machine.pauseEnded(pause.lane, generation: pause.generation, now: Self.now)
            }
            guard !actions.isEmpty else { break }
            switch actions.removeFirst() {
            case .send(let record, let route):
                // First attempts meet a network that is down; the drain meets it back up.
                let outcome: DeliveryMachine.Outcome =
                    route == nil ? .delivered : .failed(.transient, reason: "offline")
                if route == nil { delivered += 1 }
                actions += machine.attemptFinished(record.id, outcome, now: Self.now)
            case .pause(let lane, for: _, generation: let generation):
                pauses.append((lane, generation))
            default:
                break
            }
        }
        #expect(delivered == Self.burst)
        #expect(machine.snapshot.isEmpty)
        #expect(machine.storageCapacity < Self.drained, "room for \(machine.storageCapacity) records")
    }

    // covers: DL2
    @Test func theOutboxGivesBackWhatABurstGrewOnceItIsDelivered() async {
        let store = InMemoryDeliveryStore()
        let outbox = Self.outbox(store: store)
        outbox.open()
        let user = GravityUser(uid: "u-1")
        let records = (0..<Self.burst).map { _ in
            (
                Self.record(),
                Outbox.Detail(
                    kind: .url, name: "impression", user: user, properties: [:], eventTime: nil, identityEpoch: nil)
            )
        }
        outbox.accept(records, route: .tracking)
        await outbox.flushFirstAttempts()
        #expect(outbox.log.count == Self.burst)
        #expect(outbox.detailCount == 0)
        #expect(outbox.storageCapacity < Self.drained, "room for \(outbox.storageCapacity) records")
        await outbox.stop()  // every removal asked of the store has been made
        #expect(store.records.isEmpty)
        #expect(store.storageCapacity < Self.drained, "room for \(store.storageCapacity) records")
    }

    // With the queue off nothing is written, so nothing signals a host call's persistence: the
    // call's bookkeeping goes with its attempt, not with a write that never comes.
    // covers: DL4
    @Test func hostCallsWithTheQueueOffLeaveNothingBehind() async {
        let outbox = Self.outbox(store: InMemoryDeliveryStore(), settings: OfflineQueueSettings(enabled: false))
        outbox.open()
        let detail = Outbox.Detail(
            kind: .event, name: "purchase-v1", user: GravityUser(uid: "u-1"), properties: [:], eventTime: nil,
            identityEpoch: nil)
        for _ in 0..<Self.burst {
            let result = await outbox.deliver(Self.record(.event), detail: detail, persisted: {})
            guard case .success = result else {
                Issue.record("an attempt failed: \(result)")
                return
            }
        }
        #expect(outbox.detailCount == 0)
        #expect(outbox.storageCapacity < Self.drained, "room for \(outbox.storageCapacity) records")
        await outbox.stop()
    }

    // covers: DL2
    @Test func theInMemoryStoreGivesBackWhatABurstGrewOnceItIsRemoved() throws {
        let store = InMemoryDeliveryStore()
        let records = (0..<Self.burst).map { _ in Self.record() }
        try store.append(records)
        for start in stride(from: 0, to: records.count, by: 10) {
            try store.remove(records[start..<(start + 10)].map(\.id))
        }
        #expect(store.records.isEmpty)
        #expect(store.storageCapacity < Self.drained, "room for \(store.storageCapacity) records")
    }

    // covers: DL2
    @Test func aJournalsLiveRecordsGiveBackWhatABurstGrewOnceTheyAreRemoved() {
        var live = DeliveryJournal.LiveRecords()
        let records = (0..<Self.burst).map { _ in Self.record(.event) }
        live.apply(.add(records))
        for start in stride(from: 0, to: records.count - 1, by: 10) {
            live.apply(.remove(records[start..<min(start + 10, records.count - 1)].map(\.id)))
        }
        #expect(live.ordered.map(\.id) == [records[records.count - 1].id], "the last record stays")
        #expect(live.storageCapacity < Self.drained, "room for \(live.storageCapacity) records")
    }

    /// An outbox whose every request is answered at once, on a clock that never moves.
    private static func outbox(
        store: InMemoryDeliveryStore, settings: OfflineQueueSettings = OfflineQueueSettings(maxEntries: 10_000)
    ) -> Outbox {
        let call = WireCall(transport: Answering(), logger: AssistantLogger(), service: "tracking", userAgent: "tests")
        return Outbox(
            store: store, settings: settings,
            wiring: Outbox.Wiring(
                call: call, gravityCall: call, gravityBaseURL: URL(string: "https://gravity.example")!,
                apiKey: "key", clock: ManualClock(), wallClock: { now }, activity: nil, eventTimeout: .seconds(10),
                urlTimeout: .seconds(10), logCapacity: 10_000, seed: 42, letsWatcherRunOut: false),
            logger: AssistantLogger())
    }

    /// Answers every request with an empty 204.
    private struct Answering: HTTPTransport {
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { HTTPResponse(status: 204) }
    }
}
