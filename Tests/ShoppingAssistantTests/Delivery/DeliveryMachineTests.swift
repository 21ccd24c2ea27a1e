import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct DeliveryMachineTests {
    private typealias M = DeliveryMachine
    private static let now = Date(timeIntervalSince1970: 1_750_000_000)
    private static let offline = M.Outcome.failed(.transient, reason: "offline")
    private static let unavailable = M.Outcome.failed(.server(retryAfter: nil), reason: "HTTP 503")
    private static let refused = M.Outcome.failed(.final, reason: "HTTP 400")

    private static func record(_ kind: DeliveryRecord.Kind = .event, createdAt: Date = now) -> DeliveryRecord {
        DeliveryRecord(
            id: UUID(), kind: kind, target: kind == .tracking ? "https://t.example/i?p=1" : kind.rawValue,
            body: kind == .tracking ? nil : Data("{}".utf8), createdAt: createdAt, label: "purchase-v1", owner: "u-1")
    }

    private static func machine(_ settings: OfflineQueueSettings = OfflineQueueSettings()) -> DeliveryMachine {
        var machine = DeliveryMachine(settings: settings, seed: 42)
        _ = machine.loaded([], now: now)  // the store was read: an empty one
        return machine
    }

    /// `record` as it is after `attempts` server failures.
    private static func counted(_ record: DeliveryRecord, _ attempts: Int) -> DeliveryRecord {
        var record = record
        record.attempts = attempts
        return record
    }

    /// The pause among `actions`, if any.
    private static func pause(in actions: [M.Action]) -> (lane: M.Lane, duration: Duration, generation: UInt64)? {
        for case .pause(let lane, for: let duration, generation: let generation) in actions {
            return (lane, duration, generation)
        }
        return nil
    }

    private static func withoutPauses(_ actions: [M.Action]) -> [M.Action] {
        actions.filter { action in
            if case .pause = action { return false }
            return true
        }
    }

    /// Whether `duration` is `base` seconds ±20 % (DL3).
    private static func isJittered(_ duration: Duration, around base: Double) -> Bool {
        duration.seconds >= base * 0.8 - 1e-9 && duration.seconds <= base * 1.2 + 1e-9
    }

    /// A machine on which `record` was accepted from the host, persisted, and is on the wire.
    private static func onTheWire(_ record: DeliveryRecord, settings: OfflineQueueSettings = OfflineQueueSettings())
        -> DeliveryMachine
    {
        var machine = machine(settings)
        _ = machine.accepted([record], route: .host, now: now)
        _ = machine.persisted(failure: nil, now: now)
        return machine
    }

    /// A machine on which `record`'s first attempt failed on the network: queued in a pause,
    /// whose generation is returned.
    private static func paused(_ record: DeliveryRecord, settings: OfflineQueueSettings = OfflineQueueSettings())
        -> (DeliveryMachine, UInt64)
    {
        var machine = onTheWire(record, settings: settings)
        let actions = machine.attemptFinished(record.id, offline, now: now)
        return (machine, pause(in: actions)?.generation ?? .max)
    }

    private static func wire(_ status: Int, _ code: AssistantError.Code = .server, retryAfter: Duration? = nil)
        -> WireFailure
    {
        .failed(AssistantError(code: code, message: "x", httpStatus: status, retryAfter: retryAfter), uncertain: true)
    }

    // MARK: - DL2: persisted first, group commit, routes

    // covers: DL2
    @Test func anAcceptedRecordIsPersistedBeforeItsFirstAttempt() {
        var machine = Self.machine()
        let record = Self.record()
        #expect(machine.accepted([record], route: .host, now: Self.now) == [.persist([record])])
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(record, route: .host)])
        #expect(machine.attemptFinished(record.id, .delivered, now: Self.now) == [.remove([record.id]), .sync])
        #expect(machine.snapshot.isEmpty)
    }

    // covers: DL2
    @Test func recordsAcceptedWhileAWriteIsUnderWayShareTheNextBatch() {
        var machine = Self.machine()
        let (first, second, third) = (Self.record(), Self.record(), Self.record())
        #expect(machine.accepted([first], route: .host, now: Self.now) == [.persist([first])])
        #expect(machine.accepted([second], route: .host, now: Self.now) == [])
        #expect(machine.accepted([third], route: .host, now: Self.now) == [])
        #expect(
            machine.persisted(failure: nil, now: Self.now) == [
                .persist([second, third]), .send(first, route: .host),
            ])
        #expect(
            machine.persisted(failure: nil, now: Self.now) == [
                .send(second, route: .host), .send(third, route: .host),
            ])
    }

    // covers: DL2
    @Test func lifecycleRecordsMakeTheirFirstAttemptsOneAtATimeInOrder() {
        var machine = Self.machine()
        let records = [Self.record(), Self.record(), Self.record()]
        #expect(machine.accepted(records, route: .lifecycle, now: Self.now) == [.persist(records)])
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(records[0], route: .lifecycle)])
        #expect(
            machine.attemptFinished(records[0].id, .delivered, now: Self.now) == [
                .remove([records[0].id]), .send(records[1], route: .lifecycle),
            ])
        // A failed first attempt frees the route too; the record waits in the drain's pause.
        let actions = machine.attemptFinished(records[1].id, Self.offline, now: Self.now)
        #expect(Self.withoutPauses(actions) == [.send(records[2], route: .lifecycle)])
        #expect(Self.pause(in: actions)?.lane == .gravity)
    }

    // covers: DL2
    @Test func trackingFirstAttemptsGoFourAtATime() {
        var machine = Self.machine()
        let records = (0..<6).map { _ in Self.record(.tracking) }
        _ = machine.accepted(records, route: .tracking, now: Self.now)
        #expect(machine.persisted(failure: nil, now: Self.now) == records[0..<4].map { .send($0, route: .tracking) })
        #expect(
            machine.attemptFinished(records[2].id, .delivered, now: Self.now) == [
                .remove([records[2].id]), .send(records[4], route: .tracking),
            ])
        #expect(
            machine.attemptFinished(records[0].id, .delivered, now: Self.now) == [
                .remove([records[0].id]), .send(records[5], route: .tracking),
            ])
    }

    // covers: DL2
    @Test func hostFirstAttemptsAllGoAtOnce() {
        var machine = Self.machine()
        let records = (0..<12).map { _ in Self.record() }
        _ = machine.accepted(records, route: .host, now: Self.now)
        #expect(machine.persisted(failure: nil, now: Self.now) == records.map { .send($0, route: .host) })
    }

    // MARK: - DL1: RetrySchedule and failure classes

    // covers: DL1
    @Test func retriesPause1Then2Then4SecondsAndNoneAfterTheThird() {
        let deadline = Duration.seconds(60)
        #expect(RetrySchedule.pause(afterFailed: 1, .transient, elapsed: .zero, deadline: deadline) == .seconds(1))
        #expect(
            RetrySchedule.pause(afterFailed: 2, .transient, elapsed: .seconds(1), deadline: deadline) == .seconds(2))
        #expect(
            RetrySchedule.pause(afterFailed: 3, .server(retryAfter: nil), elapsed: .seconds(3), deadline: deadline)
                == .seconds(4))
        #expect(RetrySchedule.pause(afterFailed: 4, .transient, elapsed: .seconds(7), deadline: deadline) == nil)
        #expect(
            RetrySchedule.pause(
                afterFailed: 4, .server(retryAfter: .seconds(1)), elapsed: .seconds(7), deadline: deadline)
                == nil)
    }

    // covers: DL1
    @Test func noRetryWhenTheNextAttemptWouldStartAfterTheDeadline() {
        let deadline = Duration.seconds(10)
        #expect(
            RetrySchedule.pause(afterFailed: 3, .transient, elapsed: .seconds(5), deadline: deadline) == .seconds(4))
        #expect(RetrySchedule.pause(afterFailed: 3, .transient, elapsed: .seconds(6), deadline: deadline) == nil)
        #expect(
            RetrySchedule.pause(afterFailed: 1, .transient, elapsed: .milliseconds(9_500), deadline: deadline) == nil)
    }

    // covers: DL1
    @Test func aRetryAfterThatFitsReplacesTheStepAndOneThatDoesNotStopsRetrying() {
        let deadline = Duration.seconds(10)
        #expect(
            RetrySchedule.pause(afterFailed: 1, .server(retryAfter: .seconds(3)), elapsed: .zero, deadline: deadline)
                == .seconds(3))
        #expect(
            RetrySchedule.pause(
                afterFailed: 2, .server(retryAfter: .seconds(1)), elapsed: .seconds(1), deadline: deadline)
                == .seconds(1))
        #expect(
            RetrySchedule.pause(afterFailed: 1, .server(retryAfter: .seconds(30)), elapsed: .zero, deadline: deadline)
                == nil)
        #expect(
            RetrySchedule.pause(
                afterFailed: 1, .server(retryAfter: .seconds(9)), elapsed: .seconds(2), deadline: deadline)
                == nil)
    }

    // covers: DL1
    @Test func aFinalFailureIsNeverRetried() {
        for failed in 1...4 {
            #expect(RetrySchedule.pause(afterFailed: failed, .final, elapsed: .zero, deadline: .seconds(60)) == nil)
        }
    }

    // covers: DL1
    @Test func failuresAreSortedIntoTransientServerAndFinal() {
        #expect(FailureClass(.failed(AssistantError(code: .network, message: "x"), uncertain: false)) == .transient)
        #expect(FailureClass(.failed(AssistantError(code: .timeout, message: "x"), uncertain: true)) == .transient)
        for status in [408, 500, 503] {
            #expect(FailureClass(Self.wire(status)) == .server(retryAfter: nil), "HTTP \(status)")
        }
        #expect(
            FailureClass(Self.wire(429, .rateLimited, retryAfter: .seconds(7))) == .server(retryAfter: .seconds(7)))
        #expect(FailureClass(Self.wire(400)) == .final)
        #expect(FailureClass(Self.wire(422)) == .final)
        #expect(FailureClass(Self.wire(401, .unauthorized)) == .final)
        #expect(FailureClass(.failed(AssistantError(code: .invalidResponse, message: "x"), uncertain: false)) == .final)
        #expect(FailureClass(Self.wire(200, .invalidResponse)) == .final)
        #expect(FailureClass(.cancelled) == .final)
    }

    // MARK: - DL3: the drain

    // covers: DL2, DL3
    @Test func aNetworkFailureOfAFirstAttemptQueuesTheRecordAndPausesAbout5Seconds() throws {
        var machine = Self.onTheWire(Self.record())
        let record = machine.snapshot[0].record
        let actions = machine.attemptFinished(record.id, Self.offline, now: Self.now)
        let pause = try #require(Self.pause(in: actions))
        #expect(actions == [.pause(.gravity, for: pause.duration, generation: pause.generation)])
        #expect(Self.isJittered(pause.duration, around: 5))
        #expect(machine.snapshot.map(\.state) == [.queued])
        #expect(machine.pendingCount == 1)
        #expect(
            machine.pauseEnded(.gravity, generation: pause.generation, now: Self.now) == [.send(record, route: nil)])
        #expect(machine.attemptFinished(record.id, .delivered, now: Self.now) == [.remove([record.id]), .sync])
        #expect(machine.pendingCount == 0)
    }

    // covers: DL3
    @Test func aStalePauseEndDoesNothing() {
        let record = Self.record()
        var (machine, generation) = Self.paused(record)
        #expect(machine.pauseEnded(.gravity, generation: generation &+ 1, now: Self.now) == [])
        #expect(machine.pauseEnded(.tracking, generation: generation, now: Self.now) == [])
        #expect(machine.snapshot.map(\.state) == [.queued])
        #expect(machine.pauseEnded(.gravity, generation: generation, now: Self.now) == [.send(record, route: nil)])
        #expect(machine.pauseEnded(.gravity, generation: generation, now: Self.now) == [])
    }

    // covers: DL3
    @Test func pausesGrowFrom5SecondsTo15MinutesEachWithin20Percent() throws {
        let record = Self.record()
        var machine = Self.onTheWire(record)
        var actions = machine.attemptFinished(record.id, Self.offline, now: Self.now)
        var pause = try #require(Self.pause(in: actions))
        #expect(Self.isJittered(pause.duration, around: 5))
        var durations = [pause.duration]
        for base in [15.0, 45, 120, 300, 900, 900] {
            #expect(
                machine.pauseEnded(.gravity, generation: pause.generation, now: Self.now) == [.send(record, route: nil)]
            )
            actions = machine.attemptFinished(record.id, Self.offline, now: Self.now)
            let next = try #require(Self.pause(in: actions))
            #expect(actions == [.pause(.gravity, for: next.duration, generation: next.generation)])
            #expect(next.generation != pause.generation)
            #expect(Self.isJittered(next.duration, around: base), "pause \(durations.count + 1): \(next.duration)")
            pause = next
            durations.append(next.duration)
        }
        // The jitter is random: two pauses of the same step differ.
        #expect(durations[5] != durations[6])
    }

    // covers: DL3
    @Test func serverFailuresCountAttemptsAndTheFifthDropsTheRecord() throws {
        let record = Self.record()
        var machine = Self.onTheWire(record)
        var actions = machine.attemptFinished(record.id, Self.unavailable, now: Self.now)
        #expect(Self.withoutPauses(actions) == [.updateAttempts(record.id, 1)])
        for attempts in 2...4 {
            let pause = try #require(Self.pause(in: actions))
            #expect(
                machine.pauseEnded(.gravity, generation: pause.generation, now: Self.now) == [
                    .send(Self.counted(record, attempts - 1), route: nil)
                ])
            actions = machine.attemptFinished(record.id, Self.unavailable, now: Self.now)
            #expect(Self.withoutPauses(actions) == [.updateAttempts(record.id, attempts)])
            #expect(Self.pause(in: actions) != nil)
        }
        let pause = try #require(Self.pause(in: actions))
        #expect(
            machine.pauseEnded(.gravity, generation: pause.generation, now: Self.now) == [
                .send(Self.counted(record, 4), route: nil)
            ])
        actions = machine.attemptFinished(record.id, Self.unavailable, now: Self.now)
        #expect(
            Self.withoutPauses(actions) == [
                .drop(Self.counted(record, 5), .rejected, detail: "HTTP 503 (5 attempts)", inStore: true), .sync,
            ])
        #expect(machine.snapshot.isEmpty)
        #expect(machine.pendingCount == 0)
    }

    // covers: DL3
    @Test func aFinalFailureDropsTheRecordAtOnce() {
        let record = Self.record()
        var machine = Self.onTheWire(record)
        #expect(
            machine.attemptFinished(record.id, Self.refused, now: Self.now) == [
                .drop(record, .rejected, detail: "HTTP 400", inStore: true), .sync,
            ])
        #expect(machine.snapshot.isEmpty)

        // In the drain too.
        let queued = Self.record()
        var drain = Self.machine()
        #expect(drain.loaded([queued], now: Self.now) == [.send(queued, route: nil)])
        #expect(
            drain.attemptFinished(queued.id, Self.refused, now: Self.now) == [
                .drop(queued, .rejected, detail: "HTTP 400", inStore: true), .sync,
            ])
    }

    // covers: DL3
    @Test func aSuccessElsewhereEndsAPauseAfterANetworkFailureButNotAfterAServerFailure() throws {
        let record = Self.record()
        var (network, generation) = Self.paused(record)
        #expect(network.requestSucceeded(now: Self.now) == [.send(record, route: nil)])
        #expect(network.pauseEnded(.gravity, generation: generation, now: Self.now) == [])

        var server = Self.onTheWire(record)
        let actions = server.attemptFinished(record.id, Self.unavailable, now: Self.now)
        let pause = try #require(Self.pause(in: actions))
        #expect(server.requestSucceeded(now: Self.now) == [])
        #expect(server.snapshot.map(\.state) == [.queued])
        #expect(
            server.pauseEnded(.gravity, generation: pause.generation, now: Self.now) == [
                .send(Self.counted(record, 1), route: nil)
            ])
    }

    // covers: DL2, DL3
    @Test func theDrainIsOldestFirstAndOneAtATimePerLane() {
        var machine = Self.machine()
        let (first, second, third) = (Self.record(), Self.record(.visit), Self.record())
        let (click, impression) = (Self.record(.tracking), Self.record(.tracking))
        #expect(
            machine.loaded([first, click, second, impression, third], now: Self.now) == [
                .send(first, route: nil), .send(click, route: nil),
            ])
        #expect(
            machine.attemptFinished(first.id, .delivered, now: Self.now) == [
                .remove([first.id]), .send(second, route: nil),
            ])
        #expect(
            machine.attemptFinished(click.id, .delivered, now: Self.now) == [
                .remove([click.id]), .send(impression, route: nil),
            ])
        #expect(
            machine.attemptFinished(second.id, .delivered, now: Self.now) == [
                .remove([second.id]), .send(third, route: nil),
            ])
    }

    /// The store is read while the engine already raises events: what it held is older than
    /// anything raised since, so it is drained first and dropped first, wherever it lands in
    /// the machine's events.
    // covers: DL3, DL4
    @Test func recordsHeldByTheStoreGoBeforeThoseRaisedWhileItWasRead() throws {
        var machine = DeliveryMachine(settings: OfflineQueueSettings(maxEntries: 3), seed: 42)
        let purchase = Self.record()
        _ = machine.accepted([purchase], route: .host, now: Self.now)
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(purchase, route: .host)])
        let pause = try #require(Self.pause(in: machine.attemptFinished(purchase.id, Self.offline, now: Self.now)))
        let held = (0..<3).map { _ in Self.record(createdAt: Self.now.addingTimeInterval(-3600)) }
        #expect(
            machine.loaded(held, now: Self.now) == [
                .drop(held[0], .overflow, detail: "over 3 records", inStore: true), .sync,
            ])
        #expect(machine.snapshot.map(\.record) == [held[1], held[2], purchase])
        #expect(
            machine.pauseEnded(.gravity, generation: pause.generation, now: Self.now) == [.send(held[1], route: nil)])
        #expect(
            machine.attemptFinished(held[1].id, .delivered, now: Self.now) == [
                .remove([held[1].id]), .send(held[2], route: nil),
            ])
        #expect(
            machine.attemptFinished(held[2].id, .delivered, now: Self.now) == [
                .remove([held[2].id]), .send(purchase, route: nil),
            ])
    }

    /// A purchase raised at launch is still being written when the store has been read: the
    /// overflow drops the oldest record the store held, never the purchase.
    // covers: DL4
    @Test func aPurchaseBeingWrittenAsTheStoreIsReadIsNotDroppedForTheRecordsItHeld() {
        var machine = DeliveryMachine(settings: OfflineQueueSettings(maxEntries: 3), seed: 42)
        let purchase = Self.record()
        #expect(machine.accepted([purchase], route: .host, now: Self.now) == [.persist([purchase])])
        let held = (0..<3).map { _ in Self.record(createdAt: Self.now.addingTimeInterval(-3600)) }
        #expect(
            machine.loaded(held, now: Self.now) == [
                .drop(held[0], .overflow, detail: "over 3 records", inStore: true), .send(held[1], route: nil),
            ])
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(purchase, route: .host)])
        #expect(machine.snapshot.map(\.record) == [held[1], held[2], purchase])
    }

    // The walk that starts records stops once nothing further can start: expired records
    // before the first fresh one are still dropped, and a tracking record waiting for its
    // route still starts behind a long queue whose lane is draining.
    // covers: DL2, DL4
    @Test func aLongQueueStartsWhatCanStartWhereverItStands() {
        var machine = Self.machine()
        let expired = (0..<2).map { _ in Self.record(createdAt: Self.now.addingTimeInterval(-8 * 24 * 3600)) }
        let queued = (0..<300).map { _ in Self.record() }
        let maxAge = OfflineQueueSettings().maxAge
        #expect(
            machine.loaded(expired + queued, now: Self.now)
                == expired.map { .drop($0, .expired, detail: "older than \(maxAge)", inStore: true) }
                + [.send(queued[0], route: nil)])
        let tracking = (0..<5).map { _ in Self.record(.tracking) }
        _ = machine.accepted(tracking, route: .tracking, now: Self.now)
        #expect(machine.persisted(failure: nil, now: Self.now) == tracking[0..<4].map { .send($0, route: .tracking) })
        #expect(
            machine.attemptFinished(tracking[1].id, .delivered, now: Self.now) == [
                .remove([tracking[1].id]), .send(tracking[4], route: .tracking),
            ])
        #expect(
            machine.attemptFinished(queued[0].id, .delivered, now: Self.now) == [
                .remove([queued[0].id]), .send(queued[1], route: nil),
            ])
        #expect(machine.pendingCount == 299 + 4)
    }

    // covers: DL3
    @Test func aGravityLaneFailureDoesNotPauseTheTrackingLane() throws {
        var machine = Self.machine()
        let event = Self.record()
        let (click, impression) = (Self.record(.tracking), Self.record(.tracking))
        #expect(
            machine.loaded([event, click, impression], now: Self.now) == [
                .send(event, route: nil), .send(click, route: nil),
            ])
        let actions = machine.attemptFinished(event.id, Self.unavailable, now: Self.now)
        #expect(Self.withoutPauses(actions) == [.updateAttempts(event.id, 1)])
        #expect(Self.pause(in: actions)?.lane == .gravity)
        #expect(
            machine.attemptFinished(click.id, .delivered, now: Self.now) == [
                .remove([click.id]), .send(impression, route: nil),
            ])
        // The tracking lane's first pause is its own first step.
        let trackingPause = try #require(
            Self.pause(in: machine.attemptFinished(impression.id, Self.offline, now: Self.now)))
        #expect(trackingPause.lane == .tracking)
        #expect(Self.isJittered(trackingPause.duration, around: 5))
    }

    // MARK: - DL5: removals flushed in groups

    /// A drain's removals are written one by one and flushed together: after every 64 while
    /// the drain goes on, and once it stops, so a drain of many records pays few flushes and
    /// a power cut sends at most 64 delivered records again.
    // covers: DL5
    @Test func aDrainFlushesItsRemovalsEverySixtyFourAndOnceItStops() {
        var machine = Self.machine()
        let records = (0..<150).map { _ in Self.record() }
        #expect(machine.loaded(records, now: Self.now) == [.send(records[0], route: nil)])
        var syncedAfter: [Int] = []
        for (index, record) in records.enumerated() {
            let actions = machine.attemptFinished(record.id, .delivered, now: Self.now)
            let next = index + 1 < records.count ? [M.Action.send(records[index + 1], route: nil)] : []
            let sync = actions.contains(.sync)
            if sync { syncedAfter.append(index + 1) }
            #expect(actions == [.remove([record.id])] + next + (sync ? [.sync] : []))
        }
        #expect(syncedAfter == [64, 128, 150])
    }

    /// A record delivered on its own leaves nothing on the way: its removal is flushed at once.
    /// One delivered while another is on the wire waits; dropped records count as removals too.
    // covers: DL5
    @Test func removalsAreFlushedWhenNothingElseIsOnItsWay() {
        let record = Self.record()
        var machine = Self.onTheWire(record)
        #expect(machine.attemptFinished(record.id, .delivered, now: Self.now) == [.remove([record.id]), .sync])

        let (first, second) = (Self.record(), Self.record())
        _ = machine.accepted([first, second], route: .host, now: Self.now)
        #expect(
            machine.persisted(failure: nil, now: Self.now) == [
                .send(first, route: .host), .send(second, route: .host),
            ])
        #expect(machine.attemptFinished(first.id, .delivered, now: Self.now) == [.remove([first.id])])
        #expect(
            machine.attemptFinished(second.id, Self.refused, now: Self.now) == [
                .drop(second, .rejected, detail: "HTTP 400", inStore: true), .sync,
            ])
    }

    /// A write asked after removals flushes them with its own frame, so the count towards the
    /// next flush starts over there: 63 removals, a write, then one more are not 64.
    // covers: DL5
    @Test func aWriteAskedAfterRemovalsCarriesThemAndTheCountStartsOver() {
        var machine = Self.machine()
        let onTheWire = Self.record()
        _ = machine.accepted([onTheWire], route: .host, now: Self.now)
        _ = machine.persisted(failure: nil, now: Self.now)  // keeps the deliveries under way
        let queued = (0..<63).map { _ in Self.record() }
        _ = machine.loaded(queued, now: Self.now)
        for record in queued {
            #expect(!machine.attemptFinished(record.id, .delivered, now: Self.now).contains(.sync))
        }
        let accepted = Self.record()
        #expect(machine.accepted([accepted], route: .host, now: Self.now) == [.persist([accepted])])
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(accepted, route: .host)])
        #expect(machine.attemptFinished(accepted.id, .delivered, now: Self.now) == [.remove([accepted.id])])
        #expect(machine.attemptFinished(onTheWire.id, .delivered, now: Self.now) == [.remove([onTheWire.id]), .sync])
    }

    /// A removal still unflushed when the engine stops is flushed before the store closes;
    /// records the shutdown writes carry it in their own flush.
    // covers: DL5, DL8
    @Test func theShutdownFlushesTheRemovalsLeft() {
        var machine = Self.machine()
        let (first, second, third, fourth) = (Self.record(), Self.record(), Self.record(), Self.record())
        #expect(machine.loaded([first, second], now: Self.now) == [.send(first, route: nil)])
        #expect(
            machine.attemptFinished(first.id, .delivered, now: Self.now) == [
                .remove([first.id]), .send(second, route: nil),
            ])
        #expect(machine.stopped() == [.sync])
        #expect(machine.stopped() == [])

        var writing = Self.machine()
        #expect(writing.loaded([first], now: Self.now) == [.send(first, route: nil)])
        #expect(writing.accepted([third], route: .host, now: Self.now) == [.persist([third])])
        #expect(writing.attemptFinished(first.id, .delivered, now: Self.now) == [.remove([first.id])])
        #expect(writing.accepted([fourth], route: .host, now: Self.now) == [])
        #expect(writing.stopped() == [.persist([fourth])])
    }

    // MARK: - DL4: limits

    // covers: DL4
    @Test func overMaxEntriesTheOldestQueuedRecordIsDropped() {
        var machine = Self.machine(OfflineQueueSettings(maxEntries: 2))
        let (first, second, third) = (Self.record(), Self.record(), Self.record())
        #expect(
            machine.loaded([first, second, third], now: Self.now) == [
                .drop(first, .overflow, detail: "over 2 records", inStore: true), .send(second, route: nil),
            ])
        _ = machine.attemptFinished(second.id, Self.offline, now: Self.now)
        // A newly accepted record pushes out the oldest queued one, never the one being written.
        let fourth = Self.record()
        #expect(
            machine.accepted([fourth], route: .host, now: Self.now) == [
                .drop(second, .overflow, detail: "over 2 records", inStore: true), .persist([fourth]),
            ])
        #expect(machine.snapshot.map(\.record) == [third, fourth])
    }

    /// A burst larger than the queue (the impressions of every reply that landed while the
    /// chat was closed) is trimmed before it is written: the store never takes what DL4 drops
    /// at once. One that arrives during a write waits for it, then loses its oldest with the
    /// oldest of what was written.
    // covers: DL4
    @Test func aBurstOverMaxEntriesIsTrimmedBeforeItIsWritten() {
        var machine = Self.machine(OfflineQueueSettings(maxEntries: 3))
        _ = machine.loaded([], now: Self.now)
        let over = "over 3 records"
        let burst = (0..<5).map { _ in Self.record(.tracking) }
        #expect(
            machine.accepted(burst, route: .tracking, now: Self.now) == [
                .drop(burst[0], .overflow, detail: over, inStore: false),
                .drop(burst[1], .overflow, detail: over, inStore: false),
                .persist(Array(burst[2...])),
            ])
        let next = (0..<3).map { _ in Self.record(.tracking) }
        #expect(machine.accepted(next, route: .tracking, now: Self.now) == [])
        let written = machine.persisted(failure: nil, now: Self.now)
        #expect(
            Array(written.prefix(4)) == [
                .drop(burst[2], .overflow, detail: over, inStore: true),
                .drop(burst[3], .overflow, detail: over, inStore: true),
                .drop(burst[4], .overflow, detail: over, inStore: true),
                .persist(next),
            ])
        #expect(machine.snapshot.map(\.record) == next)
    }

    /// While a write is under way, a record accepted after it is not dropped in place of the
    /// older one being written: the overflow waits for the write, then drops the oldest.
    // covers: DL4
    @Test func aRecordAcceptedDuringAWriteIsNotDroppedInPlaceOfAnOlderOne() {
        var machine = Self.machine(OfflineQueueSettings(maxEntries: 1))
        _ = machine.loaded([], now: Self.now)
        let older = Self.record(.tracking)
        let purchase = Self.record(.event)
        #expect(machine.accepted([older], route: .tracking, now: Self.now) == [.persist([older])])
        #expect(machine.accepted([purchase], route: .host, now: Self.now) == [])
        #expect(
            machine.persisted(failure: nil, now: Self.now) == [
                .drop(older, .overflow, detail: "over 1 records", inStore: true), .persist([purchase]),
            ])
    }

    /// A purchase raised while a burst trimmed to the limit is being written is kept; the
    /// burst's oldest go once the write is over.
    // covers: DL4
    @Test func aPurchaseRaisedWhileATrimmedBurstIsWrittenIsKept() {
        var machine = Self.machine(OfflineQueueSettings(maxEntries: 3))
        _ = machine.loaded([], now: Self.now)
        let burst = (0..<5).map { _ in Self.record(.tracking) }
        #expect(machine.accepted(burst, route: .tracking, now: Self.now).last == .persist(Array(burst[2...])))
        let purchase = Self.record(.event)
        #expect(machine.accepted([purchase], route: .host, now: Self.now) == [])
        let written = machine.persisted(failure: nil, now: Self.now)
        #expect(written.first == .drop(burst[2], .overflow, detail: "over 3 records", inStore: true))
        #expect(written.contains(.persist([purchase])))
        #expect(machine.snapshot.map(\.record) == Array(burst[3...]) + [purchase])
    }

    // A queue long enough that forgetting records compacts the machine's order in the middle
    // of an overflow: every queued record is still dropped, oldest first, and the one on the
    // wire is kept.
    // covers: DL4
    @Test func anOverflowThatCompactsTheQueueAsItDropsStillDropsEveryRecordItShould() {
        let records = (0..<200).map { _ in Self.record() }
        var machine = Self.machine()
        _ = machine.loaded(records, now: Self.now)
        // Delivered one at a time, oldest first, until 101 are left (the 100th on the wire).
        for record in records.prefix(99) {
            _ = machine.attemptFinished(record.id, .delivered, now: Self.now)
        }
        #expect(machine.pendingCount == 101)
        let actions = machine.settingsChanged(OfflineQueueSettings(maxEntries: 1), now: Self.now)
        let dropped = actions.compactMap { action -> UUID? in
            guard case .drop(let record, .overflow, _, _) = action else { return nil }
            return record.id
        }
        #expect(dropped == records[100...].map(\.id), "every queued record, oldest first")
        #expect(machine.snapshot.map(\.record.id) == [records[99].id])
        #expect(machine.snapshot.map(\.state) == [.draining])
    }

    // Thousands of random events on a small queue: after each, what the machine counts agrees
    // with its entries as they are, no route or lane has more under way than it may, each
    // drain attempt is its lane's oldest queued record, the store never holds more than
    // `maxEntries` while something could be dropped, an overflow drops the oldest it may, and
    // what the machine keeps to find those stays as small as the queue.
    // covers: DL2, DL3, DL4, B13
    @Test func countsCapacitiesAndOldestFirstHoldUnderRandomEvents() {
        var random = SplitMix64(seed: 7)
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let settings = OfflineQueueSettings(maxEntries: 12)
        var machine = Self.machine(settings)
        var onTheWire: [UUID] = []
        var persisting = false
        var pauses: [(M.Lane, UInt64)] = []
        var flushes: UInt64 = 0
        let kinds: [DeliveryRecord.Kind] = [.event, .visit, .tracking]
        let routes: [M.Route] = [.host, .lifecycle, .tracking]
        let outcomes: [M.Outcome] = [.delivered, Self.offline, Self.unavailable, Self.refused, .abandoned]
        var acceptedOrder: [UUID: Int] = [:]
        for step in 0..<5_000 {
            var actions: [M.Action]
            switch pick(7) {
            case 0, 1:
                let records = (0..<(1 + pick(3))).map { _ in Self.record(kinds[pick(3)]) }
                for record in records { acceptedOrder[record.id] = acceptedOrder.count }
                actions = machine.accepted(records, route: routes[pick(3)], now: Self.now)
            case 2 where persisting:
                actions = machine.persisted(failure: pick(10) == 0 ? "disk full" : nil, now: Self.now)
                persisting = false
            case 3 where !onTheWire.isEmpty:
                let id = onTheWire.remove(at: pick(onTheWire.count))
                actions = machine.attemptFinished(id, outcomes[pick(outcomes.count)], now: Self.now)
            case 4 where !pauses.isEmpty:
                let (lane, generation) = pauses.remove(at: pick(pauses.count))
                actions = machine.pauseEnded(lane, generation: generation, now: Self.now)
            case 5:
                flushes += 1
                actions = machine.flushRequested(flushes, kind: pick(2) == 0 ? .queue : .firstAttempts, now: Self.now)
            default:
                actions = machine.requestSucceeded(now: Self.now)
            }
            let entries = machine.snapshot
            for action in actions {
                switch action {
                case .persist: persisting = true
                case .send(let record, let route):
                    onTheWire.append(record.id)
                    if route == nil {
                        // Nothing still queued in its lane is older than the record it drains.
                        let position = entries.firstIndex { $0.record.id == record.id } ?? -1
                        let older = entries.prefix(max(position, 0)).contains {
                            $0.lane == M.Lane(record.kind) && $0.state == .queued
                        }
                        #expect(position >= 0 && !older, "step \(step): the drain takes its lane's oldest")
                    }
                case .pause(let lane, _, let generation): pauses.append((lane, generation))
                default: break
                }
            }
            #expect(
                machine.pendingCount == entries.filter { !$0.unprotected && !Self.isPersisting($0.state) }.count,
                "step \(step)")
            for route in routes {
                let busy = entries.filter { $0.state == .firstAttempt(route) }.count
                #expect(busy <= route.capacity, "step \(step): \(route) has \(busy) under way")
            }
            for lane in [M.Lane.gravity, .tracking] {
                #expect(entries.filter { $0.lane == lane && $0.state == .draining }.count <= 1, "step \(step)")
            }
            let kept = entries.filter { !$0.unprotected }.count
            let droppable = entries.filter { !$0.unprotected && ($0.state == .queued || Self.isWaiting($0.state)) }
            #expect(kept <= settings.maxEntries || droppable.isEmpty, "step \(step): \(kept) kept")
            let overflowed = actions.compactMap { action -> Int? in
                guard case .drop(let record, .overflow, _, _) = action else { return nil }
                return acceptedOrder[record.id]
            }
            if let newestDropped = overflowed.max(),
                let oldestLeft = droppable.compactMap({ acceptedOrder[$0.record.id] }).min()
            {
                #expect(newestDropped < oldestLeft, "step \(step): an overflow drops the oldest first")
            }
            #expect(machine.droppableOrderCount <= 100, "step \(step): \(machine.droppableOrderCount) filed")
            #expect(Set(onTheWire).count == onTheWire.count)
        }
    }

    private static func isPersisting(_ state: M.EntryState) -> Bool {
        if case .persisting = state { return true }
        return false
    }

    private static func isWaiting(_ state: M.EntryState) -> Bool {
        if case .waiting = state { return true }
        return false
    }

    // A queue that never fills keeps no trace of the records that went through it: each was
    // droppable while it waited for its first attempt, and the order an overflow would drop
    // from stays as short as the queue, not as long as the engine's life.
    // covers: DL4
    @Test func recordsDeliveredBeforeAnyOverflowLeaveNothingBehindInItsOrder() {
        var machine = Self.machine()
        _ = machine.loaded([], now: Self.now)
        for _ in 0..<1_000 {
            let record = Self.record(.tracking)
            _ = machine.accepted([record], route: .tracking, now: Self.now)
            _ = machine.persisted(failure: nil, now: Self.now)
            _ = machine.attemptFinished(record.id, .delivered, now: Self.now)
        }
        #expect(machine.pendingCount == 0)
        #expect(machine.droppableOrderCount <= 64)
    }

    // covers: DL4
    @Test func aLowerMaxEntriesAtRunTimeDropsTheOldestNow() {
        let (first, second) = (Self.record(), Self.record())
        var machine = Self.machine()
        _ = machine.loaded([first, second], now: Self.now)
        _ = machine.attemptFinished(first.id, Self.offline, now: Self.now)
        #expect(
            machine.settingsChanged(OfflineQueueSettings(maxEntries: 1), now: Self.now) == [
                .drop(first, .overflow, detail: "over 1 records", inStore: true), .sync,
            ])
        #expect(machine.pendingCount == 1)
    }

    // covers: DL4
    @Test func aRecordOlderThanMaxAgeIsDroppedInsteadOfSent() {
        let old = Self.record(createdAt: Self.now.addingTimeInterval(-8 * 24 * 3600))
        let fresh = Self.record(createdAt: Self.now.addingTimeInterval(-6 * 24 * 3600))
        var machine = Self.machine()
        #expect(
            machine.loaded([old, fresh], now: Self.now) == [
                .drop(old, .expired, detail: "older than \(OfflineQueueSettings().maxAge)", inStore: true),
                .send(fresh, route: nil),
            ])
    }

    // covers: DL4
    @Test func aRecordThatAgesDuringAPauseIsDroppedWhenItsTurnComes() {
        let record = Self.record()
        var (machine, generation) = Self.paused(record, settings: OfflineQueueSettings(maxAge: .seconds(60)))
        #expect(
            machine.pauseEnded(.gravity, generation: generation, now: Self.now.addingTimeInterval(120)) == [
                .drop(record, .expired, detail: "older than \(Duration.seconds(60))", inStore: true), .sync,
            ])
        #expect(machine.pendingCount == 0)
    }

    // covers: DL4
    @Test func withTheQueueOffARecordIsSentOnceAndDroppedWhenItFails() {
        var machine = Self.machine(OfflineQueueSettings(enabled: false))
        let (failing, delivered) = (Self.record(), Self.record())
        #expect(
            machine.accepted([failing, delivered], route: .host, now: Self.now) == [
                .send(failing, route: .host), .send(delivered, route: .host),
            ])
        #expect(machine.pendingCount == 0)
        #expect(
            machine.attemptFinished(failing.id, Self.offline, now: Self.now) == [
                .drop(failing, .rejected, detail: "offline", inStore: false)
            ])
        #expect(machine.attemptFinished(delivered.id, .delivered, now: Self.now) == [])
        #expect(machine.snapshot.isEmpty)
    }

    // covers: DL4
    @Test func recordsLoadedWhileTheQueueIsOffWaitUntilItIsOn() {
        var machine = Self.machine(OfflineQueueSettings(enabled: false))
        let record = Self.record()
        #expect(machine.loaded([record], now: Self.now) == [])
        #expect(machine.requestSucceeded(now: Self.now) == [])
        #expect(machine.flushRequested(1, kind: .queue, now: Self.now) == [.finishFlushes([1])])
        #expect(machine.pendingCount == 1)
        #expect(
            machine.settingsChanged(OfflineQueueSettings(enabled: true), now: Self.now) == [.send(record, route: nil)])
    }

    /// A record persisted while the queue was on is in the store; if the queue is turned off
    /// before its first attempt fails, the machine must not claim it never reached the store:
    /// either it waits on disk for the queue (DL4) or it is dropped from the store.
    // covers: DL4
    @Test func aPersistedRecordWhoseFirstAttemptFailsAfterTheQueueIsTurnedOffStaysConsistentWithTheStore() {
        let record = Self.record()
        var machine = Self.onTheWire(record)
        #expect(machine.settingsChanged(OfflineQueueSettings(enabled: false), now: Self.now) == [])
        let actions = machine.attemptFinished(record.id, Self.offline, now: Self.now)
        let waits = actions == [] && machine.pendingCount == 1
        let dropped =
            actions == [.drop(record, .rejected, detail: "offline", inStore: true)] && machine.pendingCount == 0
        #expect(waits || dropped, "actions: \(actions), pendingCount: \(machine.pendingCount)")
    }

    // MARK: - DL8: queue controls

    // covers: DL8
    @Test func aFlushDuringAPauseSendsAtOnceAndIsOverWhenTheRecordIsDelivered() {
        let record = Self.record()
        var (machine, generation) = Self.paused(record)
        #expect(machine.flushRequested(7, kind: .queue, now: Self.now) == [.send(record, route: nil)])
        #expect(
            machine.attemptFinished(record.id, .delivered, now: Self.now) == [
                .remove([record.id]), .sync, .finishFlushes([7]),
            ])
        #expect(machine.pauseEnded(.gravity, generation: generation, now: Self.now) == [])
    }

    /// A first attempt waiting for its next try within the deadline (DL1) tries no more once
    /// the queue is cleared or the engine stopped: nothing cleared reaches the wire (DL8).
    // covers: DL8
    @Test func aClearedOrStoppedRecordIsNotTriedAgainWithinItsDeadline() {
        let record = Self.record()
        var machine = Self.onTheWire(record)
        #expect(machine.mayRetry(record.id))
        _ = machine.cleared(now: Self.now)
        #expect(!machine.mayRetry(record.id))
        var stopped = Self.onTheWire(record)
        _ = stopped.stopped()
        #expect(!stopped.mayRetry(record.id))
    }

    /// Records accepted while a write was under way wait for the next one; a shutdown then
    /// writes them before the store closes, and sends nothing once they are written.
    // covers: DL8, DL5
    @Test func recordsWaitingForTheNextWriteAreWrittenByTheShutdown() {
        var machine = Self.machine()
        let (first, second) = (Self.record(), Self.record())
        #expect(machine.accepted([first], route: .lifecycle, now: Self.now) == [.persist([first])])
        #expect(machine.accepted([second], route: .lifecycle, now: Self.now) == [])
        #expect(machine.stopped() == [.persist([second])])
        #expect(machine.persisted(failure: nil, now: Self.now) == [])
        #expect(machine.persisted(failure: nil, now: Self.now) == [])
        #expect(machine.pendingCount == 2)
    }

    /// A send cut short by the shutdown fails as it ends: the record stays for the next
    /// engine and no pause starts, for nothing of a stopped engine may sleep on.
    // covers: DL8, H2
    @Test func aFailureAfterTheShutdownStartsNoPauseAndKeepsTheRecord() {
        let record = Self.record()
        var machine = Self.onTheWire(record)
        _ = machine.stopped()
        #expect(machine.attemptFinished(record.id, Self.offline, now: Self.now) == [])
        #expect(machine.pendingCount == 1)
    }

    /// A server failure that lands after the shutdown is the next engine's to judge: the store,
    /// closed by then, is asked for nothing, and the record stays as it was.
    // covers: DL8, H2
    @Test func aServerFailureAfterTheShutdownAsksTheClosedStoreForNothing() {
        let record = Self.record()
        var machine = Self.onTheWire(record)
        _ = machine.stopped()
        #expect(machine.attemptFinished(record.id, Self.unavailable, now: Self.now) == [])
        #expect(machine.snapshot.first?.record.attempts == 0)
        #expect(machine.pendingCount == 1)
    }

    /// A flush ends the pause under way but does not start the ladder over: an app that
    /// flushes into a network still down meets the next pause (15 s), not the first again.
    // covers: DL3, DL8
    @Test func aFlushIntoANetworkStillDownIsFollowedByTheNextLongerPause() throws {
        let record = Self.record()
        var (machine, _) = Self.paused(record)
        #expect(machine.flushRequested(7, kind: .queue, now: Self.now) == [.send(record, route: nil)])
        let pause = try #require(Self.pause(in: machine.attemptFinished(record.id, Self.offline, now: Self.now)))
        #expect(Self.isJittered(pause.duration, around: 15), "the second pause, got \(pause.duration)")
    }

    // covers: DL8
    @Test func aFlushIsOverWhenTheDrainFailsAgain() throws {
        let record = Self.record()
        var (machine, _) = Self.paused(record)
        #expect(machine.flushRequested(7, kind: .queue, now: Self.now) == [.send(record, route: nil)])
        let actions = machine.attemptFinished(record.id, Self.offline, now: Self.now)
        let pause = try #require(Self.pause(in: actions))
        #expect(actions == [.pause(.gravity, for: pause.duration, generation: pause.generation), .finishFlushes([7])])
        #expect(machine.pendingCount == 1)
    }

    // covers: DL8
    @Test func aFlushWithNothingQueuedIsOverAtOnce() {
        var machine = Self.machine()
        #expect(machine.flushRequested(1, kind: .queue, now: Self.now) == [.finishFlushes([1])])
        #expect(machine.flushRequested(2, kind: .firstAttempts, now: Self.now) == [.finishFlushes([2])])
    }

    // covers: DL8
    @Test func clearingForgetsEverythingAndARecordOnTheWireIsNotQueuedAgain() throws {
        let (queued, onWire) = (Self.record(), Self.record())
        var machine = Self.machine()
        _ = machine.loaded([queued], now: Self.now)
        let pause = try #require(Self.pause(in: machine.attemptFinished(queued.id, Self.offline, now: Self.now)))
        _ = machine.accepted([onWire], route: .host, now: Self.now)
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(onWire, route: .host)])
        #expect(machine.pendingCount == 2)

        #expect(machine.cleared(now: Self.now) == [.removeAll])
        #expect(machine.pendingCount == 0)
        #expect(machine.snapshot.isEmpty)
        #expect(machine.attemptFinished(onWire.id, Self.offline, now: Self.now) == [])
        #expect(machine.pauseEnded(.gravity, generation: pause.generation, now: Self.now) == [])
        #expect(machine.requestSucceeded(now: Self.now) == [])
        #expect(machine.flushRequested(1, kind: .queue, now: Self.now) == [.finishFlushes([1])])
        #expect(machine.pendingCount == 0)
    }

    // covers: DL8
    @Test func clearedRecordsWaitingForTheirRouteOrForTheirWriteNeverReachTheWire() {
        let (first, second, third) = (Self.record(), Self.record(), Self.record())
        var machine = Self.machine()
        _ = machine.accepted([first, second], route: .lifecycle, now: Self.now)
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(first, route: .lifecycle)])
        #expect(machine.accepted([third], route: .lifecycle, now: Self.now) == [.persist([third])])
        #expect(machine.cleared(now: Self.now) == [.removeAll])
        #expect(machine.persisted(failure: nil, now: Self.now) == [])
        #expect(machine.attemptFinished(first.id, .delivered, now: Self.now) == [])
        #expect(machine.snapshot.isEmpty)
    }

    // covers: DL8
    @Test func pendingCountCountsTheRecordsInTheStore() {
        var machine = Self.machine()
        let (first, second) = (Self.record(), Self.record())
        _ = machine.accepted([first, second], route: .host, now: Self.now)
        #expect(machine.pendingCount == 0)  // not written yet
        _ = machine.persisted(failure: nil, now: Self.now)
        #expect(machine.pendingCount == 2)
        _ = machine.attemptFinished(first.id, .delivered, now: Self.now)
        #expect(machine.pendingCount == 1)
        _ = machine.attemptFinished(second.id, Self.offline, now: Self.now)
        #expect(machine.pendingCount == 1)
        _ = machine.loaded([Self.record()], now: Self.now)
        #expect(machine.pendingCount == 2)
    }

    // covers: DL8
    @Test func stoppingFinishesEveryFlushAndNothingStartsAfter() {
        let record = Self.record()
        var (machine, generation) = Self.paused(record)
        #expect(machine.flushRequested(3, kind: .queue, now: Self.now) == [.send(record, route: nil)])
        #expect(machine.stopped() == [.finishFlushes([3])])
        #expect(machine.isStopped)
        #expect(machine.attemptFinished(record.id, .abandoned, now: Self.now) == [])
        #expect(machine.accepted([Self.record()], route: .host, now: Self.now) == [])
        #expect(machine.loaded([Self.record()], now: Self.now) == [])
        #expect(machine.pauseEnded(.gravity, generation: generation, now: Self.now) == [])
        #expect(machine.requestSucceeded(now: Self.now) == [])
        #expect(machine.settingsChanged(OfflineQueueSettings(), now: Self.now) == [])
        #expect(machine.pendingCount >= 1)  // what is kept stays for the next engine
    }

    /// `stopped()` ends every flush; one asked for afterwards (`flushTracking()` after
    /// `shutdown`) must not wait for a drain that will never run.
    // covers: DL8
    @Test func aFlushRequestedAfterStoppingIsOverAtOnce() {
        var (machine, _) = Self.paused(Self.record())
        _ = machine.stopped()
        #expect(machine.flushRequested(9, kind: .queue, now: Self.now) == [.finishFlushes([9])])
        #expect(machine.flushRequested(10, kind: .firstAttempts, now: Self.now) == [.finishFlushes([10])])
    }

    // MARK: - DL5: a store that cannot be written

    // covers: DL5
    @Test func aStoreThatCannotBeWrittenIsLoggedAndTheRecordsAreStillSentOnce() {
        var machine = Self.machine()
        let (failing, delivered) = (Self.record(), Self.record())
        #expect(
            machine.accepted([failing, delivered], route: .host, now: Self.now) == [.persist([failing, delivered])])
        #expect(
            machine.persisted(failure: "disk full", now: Self.now) == [
                .log(.error, "delivery store: 2 record(s) not kept (disk full); sending them once"),
                .send(failing, route: .host), .send(delivered, route: .host),
            ])
        #expect(machine.pendingCount == 0)
        #expect(
            machine.attemptFinished(failing.id, Self.offline, now: Self.now) == [
                .drop(failing, .rejected, detail: "offline", inStore: false)
            ])
        #expect(machine.attemptFinished(delivered.id, .delivered, now: Self.now) == [])
        #expect(machine.snapshot.isEmpty)
    }
}

extension DeliveryMachine.Action {
    /// Whether this drops the record `id`.
    fileprivate func drops(_ id: UUID) -> Bool {
        if case .drop(let record, _, _, _) = self { return record.id == id }
        return false
    }
}
