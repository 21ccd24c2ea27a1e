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

    // The call goes through the gate with the session it brought: the new bytes are kept, the
    // held ones leave the store only then, and the new ones go at once.
    // covers: B8, DL2, DL5
    @Test func aReleasedRecordReplacesTheHeldOneOnceItIsInTheStore() {
        let (held, released) = (Self.record(), Self.record())
        var machine = Self.held(held)
        #expect(machine.released(held.id, as: released, now: Self.now) == [.persist([released])])
        #expect(machine.pendingCount == 0, "the held record is replaced; the new one is being written")
        #expect(
            machine.persisted(failure: nil, now: Self.now) == [.send(released, route: .host), .remove([held.id])])
        #expect(machine.attemptFinished(released.id, .delivered, now: Self.now) == [.remove([released.id])])
        #expect(machine.pendingCount == 0)
    }

    // The gate opened before the held record's write was over: the held record is written
    // all the same, and leaves once its replacement is in the store.
    // covers: DL5
    @Test func aRecordReleasedDuringItsOwnWriteLeavesAfterItsReplacementIsWritten() {
        let (held, released) = (Self.record(), Self.record())
        var machine = Self.machine()
        _ = machine.heldAtGate(held, now: Self.now)  // in the write under way
        #expect(machine.released(held.id, as: released, now: Self.now).isEmpty, "waits for the write under way")
        #expect(machine.persisted(failure: nil, now: Self.now) == [.persist([released])])
        #expect(
            machine.persisted(failure: nil, now: Self.now) == [.send(released, route: .host), .remove([held.id])])
    }

    // Released before it was in any write: it is never written, so nothing is removed.
    // covers: DL2
    @Test func aRecordReleasedBeforeItsWriteIsNeverWritten() {
        let (other, held, released) = (Self.record(), Self.record(), Self.record())
        var machine = Self.machine()
        _ = machine.accepted([other], route: .host, now: Self.now)  // the write under way
        _ = machine.heldAtGate(held, now: Self.now)
        _ = machine.released(held.id, as: released, now: Self.now)
        #expect(machine.persisted(failure: nil, now: Self.now) == [.persist([released]), .send(other, route: .host)])
        #expect(machine.persisted(failure: nil, now: Self.now) == [.send(released, route: .host)])
    }

    // The store refused the replacement: the held bytes stay until the replacement's one
    // unprotected attempt is over, so a crash meanwhile keeps the event (DL5).
    // covers: DL5
    @Test func aReplacementTheStoreRefusedKeepsTheHeldRecordUntilItIsOver() {
        let (held, released) = (Self.record(), Self.record())
        var machine = Self.held(held)
        _ = machine.released(held.id, as: released, now: Self.now)
        let refused = machine.persisted(failure: "disk full", now: Self.now)
        #expect(refused.contains(.send(released, route: .host)))
        #expect(!refused.contains(.remove([held.id])))
        #expect(machine.attemptFinished(released.id, .delivered, now: Self.now) == [.remove([held.id])])
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
        #expect(machine.heldWithdrawn(held.id, now: Self.now) == [.remove([held.id])])
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
        #expect(machine.released(held.id, as: released, now: Self.now) == [.send(released, route: .host)])
    }
}
