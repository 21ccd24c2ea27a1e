import Foundation
import Testing

@testable import ShoppingAssistant

/// A host call's record while the call waits at the session gate (B8): kept before the gate
/// opens, never sent from the queue, replaced by the record that goes when it opens.
@Suite struct DeliveryMachineGateTests {
    private typealias M = DeliveryMachine
    private static let now = Date(timeIntervalSince1970: 1_750_000_000)

    private static func record(_ label: String = "purchase-v1") -> DeliveryRecord {
        DeliveryRecord(
            id: UUID(), kind: .event, target: "event", body: Data(#"{"user":{"uid":"u-1"}}"#.utf8), createdAt: now,
            label: label, owner: "u-1")
    }

    private static func machine(_ settings: OfflineQueueSettings = OfflineQueueSettings()) -> DeliveryMachine {
        var machine = DeliveryMachine(settings: settings, seed: 7)
        _ = machine.loaded([], now: now)
        return machine
    }

    /// A machine holding `record` at the gate, in the store.
    private static func held(_ record: DeliveryRecord) -> DeliveryMachine {
        var machine = machine()
        _ = machine.heldAtGate(record, now: now)
        _ = machine.persisted(failure: nil, now: now)
        return machine
    }

    // covers: B8, DL2, DL5
    @Test func aRecordHeldAtTheGateIsKeptAndNeverSentFromTheQueue() {
        let record = Self.record()
        var machine = Self.machine()
        #expect(machine.heldAtGate(record, now: Self.now) == [.persist([record])])
        #expect(machine.persisted(failure: nil, now: Self.now).isEmpty, "kept, not sent")
        #expect(machine.pendingCount == 1, "pendingDeliveries counts it")
        #expect(machine.flushRequested(1, kind: .queue, now: Self.now) == [.finishFlushes([1])], "a flush sends none")
        #expect(machine.flushRequested(2, kind: .firstAttempts, now: Self.now) == [.finishFlushes([2])])
        #expect(machine.requestSucceeded(now: Self.now).isEmpty)
        #expect(machine.snapshot.map(\.state) == [.held])
    }

    /// `released`'s bytes as the machine keeps them: under the held id, with the held time.
    private static func replacing(_ held: DeliveryRecord, with released: DeliveryRecord) -> DeliveryRecord {
        DeliveryRecord(
            id: held.id, kind: released.kind, target: released.target, body: released.body, createdAt: held.createdAt,
            label: released.label, owner: released.owner)
    }

    private static func sessionRecord() -> DeliveryRecord {
        DeliveryRecord(
            id: UUID(), kind: .event, target: "event", body: Data(#"{"user":{"ses":"s-1","uid":"u-1"}}"#.utf8),
            createdAt: now.addingTimeInterval(7), label: "purchase-v1", owner: "u-1")
    }

    // The call goes through the gate with the session it brought: its bytes are written over
    // the held ones, under the same id and in one write, so a crash keeps one or the other,
    // never both; then they go at once.
    // covers: B8, DL2, DL5
    @Test func aReleasedRecordIsWrittenOverTheHeldOneThenSent() {
        let (held, released) = (Self.record(), Self.sessionRecord())
        let kept = Self.replacing(held, with: released)
        var machine = Self.held(held)
        #expect(machine.released(held.id, as: released, now: Self.now) == [.persist([kept])])
        #expect(machine.pendingCount == 1, "still in the store, in the bytes it was held as")
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(kept, route: .host)])
        #expect(machine.attemptFinished(held.id, .delivered, now: Self.now) == [.remove([held.id]), .sync])
        #expect(machine.pendingCount == 0)
    }

    // The gate opened before the held record's write was over: the new bytes are written once
    // that write ends, and only then sent.
    // covers: DL5
    @Test func aRecordReleasedDuringItsOwnWriteIsWrittenAgainOnceThatWriteEnds() {
        let (held, released) = (Self.record(), Self.sessionRecord())
        let kept = Self.replacing(held, with: released)
        var machine = Self.machine()
        _ = machine.heldAtGate(held, now: Self.now)  // in the write under way
        #expect(machine.released(held.id, as: released, now: Self.now) == [], "waits for the write under way")
        #expect(machine.persisted(failure: nil, now: Self.now) == [.persist([kept])])
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(kept, route: .host)])
    }

    // Released before it was in any write: only the new bytes are ever written.
    // covers: DL2
    @Test func aRecordReleasedBeforeItsWriteIsWrittenOnlyWithItsNewBytes() {
        let (other, held, released) = (Self.record(), Self.record(), Self.sessionRecord())
        let kept = Self.replacing(held, with: released)
        var machine = Self.machine()
        _ = machine.accepted([other], route: .host, now: Self.now)  // the write under way
        _ = machine.heldAtGate(held, now: Self.now)
        _ = machine.released(held.id, as: released, now: Self.now)
        #expect(machine.persisted(failure: nil, now: Self.now) == [.persist([kept]), .send(other, route: .host)])
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(kept, route: .host)])
    }

    // The store refused the new bytes: the held ones are still there under the id, so the
    // record stays kept — sent, queued on failure, removed once delivered (DL5).
    // covers: DL5
    @Test func aReleasedRecordTheStoreRefusedIsStillKeptInItsHeldBytes() {
        let (held, released) = (Self.record(), Self.sessionRecord())
        let kept = Self.replacing(held, with: released)
        var machine = Self.held(held)
        _ = machine.released(held.id, as: released, now: Self.now)
        let refused = machine.persisted(failure: "disk full", now: Self.now)
        #expect(refused.contains(.send(kept, route: .host)))
        let failed = machine.attemptFinished(held.id, .failed(.transient, reason: "offline"), now: Self.now)
        #expect(!failed.contains { if case .drop = $0 { return true } else { return false } }, "not dropped")
        #expect(machine.snapshot.map(\.state) == [.queued])
        #expect(machine.pendingCount == 1)
    }

    // A release finds nothing held: the queue was cleared meanwhile, and it is not sent (DL8).
    // covers: DL8
    @Test func aReleaseAfterAClearSendsNothing() {
        let held = Self.record()
        var machine = Self.held(held)
        _ = machine.cleared(now: Self.now)
        #expect(machine.released(held.id, as: Self.sessionRecord(), now: Self.now) == nil)
        #expect(machine.pendingCount == 0)
    }

    // Released records keep their place and time: the overflow drops older records first, and
    // never a released one before it is on the wire.
    // covers: DL4
    @Test func anOverflowAtTheReleaseNeverDropsTheReleasedRecord() {
        var machine = Self.machine(OfflineQueueSettings(maxEntries: 2))
        let held = (0..<3).map { _ in Self.record() }
        for record in held {
            _ = machine.heldAtGate(record, now: Self.now)
            _ = machine.persisted(failure: nil, now: Self.now)
        }
        let released = Self.sessionRecord()
        var actions = machine.released(held[0].id, as: released, now: Self.now) ?? []
        actions += machine.persisted(failure: nil, now: Self.now)
        #expect(!actions.contains { if case .drop = $0 { return true } else { return false } }, "\(actions)")
        #expect(actions.contains(.send(Self.replacing(held[0], with: released), route: .host)))
        #expect(held.allSatisfy { machine.holds($0.id) })
    }

    // A flush asked while a record is held waits for its first attempt once it is let
    // through, and ends when the drain stops, neither before nor never.
    // covers: DL8
    @Test func aFlushAskedWhileARecordIsHeldEndsOnceItsFirstAttemptIsOver() {
        let (draining, held, released) = (Self.record(), Self.record(), Self.sessionRecord())
        var machine = DeliveryMachine(settings: OfflineQueueSettings(), seed: 7)
        _ = machine.loaded([draining], now: Self.now)  // on the wire from the drain
        _ = machine.heldAtGate(held, now: Self.now)
        _ = machine.persisted(failure: nil, now: Self.now)
        #expect(machine.flushRequested(1, kind: .queue, now: Self.now).isEmpty)
        _ = machine.released(held.id, as: released, now: Self.now)
        _ = machine.persisted(failure: nil, now: Self.now)
        #expect(machine.attemptFinished(draining.id, .delivered, now: Self.now) == [.remove([draining.id])])
        #expect(
            machine.attemptFinished(held.id, .delivered, now: Self.now) == [
                .remove([held.id]), .sync, .finishFlushes([1]),
            ])
    }

    // The queue was turned off while the held record was being written: the release still
    // writes its bytes over it, so the store forgets it once delivered (DL5).
    // covers: DL4, DL5
    @Test func aReleaseAfterTheQueueWasTurnedOffDuringTheHeldWriteStillKeepsIt() {
        let (held, released) = (Self.record(), Self.sessionRecord())
        let kept = Self.replacing(held, with: released)
        var machine = Self.machine()
        _ = machine.heldAtGate(held, now: Self.now)  // in the write under way
        _ = machine.settingsChanged(OfflineQueueSettings(enabled: false), now: Self.now)
        #expect(machine.released(held.id, as: released, now: Self.now) == [])
        #expect(machine.persisted(failure: nil, now: Self.now) == [.persist([kept])])
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(kept, route: .host)])
        #expect(machine.attemptFinished(held.id, .delivered, now: Self.now) == [.remove([held.id]), .sync])
    }

    // covers: DL4
    @Test func anOverflowNeverDropsARecordHeldAtTheGate() {
        let held = Self.record()
        var machine = Self.machine(OfflineQueueSettings(maxEntries: 1))
        _ = machine.heldAtGate(held, now: Self.now)
        _ = machine.persisted(failure: nil, now: Self.now)
        let queued = Self.record()
        _ = machine.accepted([queued], route: .host, now: Self.now)
        let actions = machine.persisted(failure: nil, now: Self.now)
        #expect(!actions.contains { if case .drop(held, _, _, _) = $0 { return true } else { return false } })
        #expect(machine.holds(held.id))
    }

    // A call withdrawn from the gate (its caller cancelled, the queue cleared) is forgotten,
    // in the store too.
    // covers: DL8
    @Test func aRecordWithdrawnFromTheGateLeavesTheStore() {
        let held = Self.record()
        var machine = Self.held(held)
        #expect(machine.heldWithdrawn(held.id, now: Self.now) == [.remove([held.id]), .sync])
        #expect(machine.pendingCount == 0)
        #expect(machine.heldWithdrawn(held.id, now: Self.now).isEmpty, "once")
    }

    // The next engine finds the held record in the store and drains it as any kept record.
    // covers: DL5, B8
    @Test func aHeldRecordLeftInTheStoreIsDrainedByTheNextEngine() {
        let held = Self.record()
        var machine = DeliveryMachine(settings: OfflineQueueSettings(), seed: 7)
        #expect(machine.loaded([held], now: Self.now) == [.send(held, route: nil)])
    }

    // With the queue off, a held record is kept nowhere and sent once when the gate opens.
    // covers: DL4
    @Test func withTheQueueOffAHeldRecordIsKeptNowhere() {
        let (held, released) = (Self.record(), Self.record())
        var machine = Self.machine(OfflineQueueSettings(enabled: false))
        #expect(machine.heldAtGate(held, now: Self.now).isEmpty)
        #expect(machine.pendingCount == 0)
        #expect(
            machine.released(held.id, as: released, now: Self.now) == [
                .send(Self.replacing(held, with: released), route: .host)
            ])
    }
}
