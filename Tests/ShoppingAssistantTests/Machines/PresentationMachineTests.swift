import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct PresentationMachineTests {
    private typealias F = MachineFixtures
    private static let opener = CallID(value: 1)
    private static let first = OpeningID(value: 1)
    private static let url = AssistantAction.followUrl(URL(fileURLWithPath: "/delivery"))

    private static func open() -> PresentationMachine {
        var machine = PresentationMachine()
        _ = machine.openCalled(opener, isReady: true, presenter: .available)
        _ = machine.presentFinished(first)
        return machine
    }

    // covers: O5
    @Test func theAssistantsLockIsTakenBeforeThePresenterIsCalled() {
        var machine = PresentationMachine()
        #expect(
            machine.openCalled(Self.opener, isReady: true, presenter: .available)
                == .opening([.notifyLocks(PresentationLocks(assistant: true)), .present(Self.first)]))
        #expect(machine.presentFinished(Self.first) == [.opened(Self.first, callers: [Self.opener])])
        #expect(machine.isOpen)
    }

    // covers: O2, O3, O4
    @Test func openingIsRefusedWhenNotReadyWithABadPresenterOrWhenAlreadyOpen() {
        var machine = PresentationMachine()
        #expect(machine.openCalled(Self.opener, isReady: false, presenter: .available) == .refused(.notReady))
        for presenter in [AssistantPresenterAvailability.closed, .notVisible, .busy] {
            #expect(machine.openCalled(Self.opener, isReady: true, presenter: presenter) == .refused(.invalidPresenter))
        }
        #expect(machine.locks == PresentationLocks())
        var open = Self.open()
        #expect(open.openCalled(CallID(value: 2), isReady: true, presenter: .available) == .refused(.alreadyOpen))
    }

    // covers: O5, O6
    @Test func theLockIsReleasedOnlyOnceDismissedAndTheAppsLockStays() {
        var machine = Self.open()
        #expect(machine.lockedByApp() == [.notifyLocks(PresentationLocks(app: true, assistant: true))])
        let waiter = CloseWaiter(call: CallID(value: 3), result: .done)
        #expect(machine.closeRequested(by: waiter) == [.dismiss(Self.first)])
        #expect(machine.locks == PresentationLocks(app: true, assistant: true))
        #expect(
            machine.dismissed(Self.first)
                == [.notifyLocks(PresentationLocks(app: true)), .closed(Self.first), .closeFinished([waiter])])
    }

    // covers: O5
    @Test func aPresenterThatDismissesByItselfReleasesTheLock() {
        var machine = Self.open()
        #expect(machine.dismissed(nil) == [.notifyLocks(PresentationLocks()), .closed(Self.first)])
        #expect(machine.isClosed)
    }

    @Test func anOlderPresentationsDismissalIsIgnored() {
        var machine = Self.open()
        _ = machine.dismissed(nil)
        _ = machine.openCalled(CallID(value: 2), isReady: true, presenter: .available)
        #expect(machine.dismissed(Self.first) == [])
        #expect(machine.currentOpening == OpeningID(value: 2))
    }

    // covers: PR10, AC5
    @Test func navigationIsHandedOverOnlyAfterTheCloseAndTheCallerReturnsAfterIt() {
        var machine = Self.open()
        let waiter = CloseWaiter(call: CallID(value: 3), result: .interaction(.accepted))
        #expect(machine.closeRequested(by: waiter, thenHandOver: Self.url) == [.dismiss(Self.first)])
        #expect(
            machine.dismissed(Self.first)
                == [.notifyLocks(PresentationLocks()), .closed(Self.first), .handOver([Self.url])])
        #expect(machine.handOverFinished() == [.closeFinished([waiter])])
    }

    // covers: B6
    @Test func theAppsLockIsIdempotentNotCounted() {
        var machine = PresentationMachine()
        #expect(machine.lockedByApp() == [.notifyLocks(PresentationLocks(app: true))])
        #expect(machine.lockedByApp() == [])
        #expect(machine.unlockedByApp() == [.notifyLocks(PresentationLocks())])
        #expect(machine.unlockedByApp() == [])
    }

    @Test func snapshotsWaitForTheCallUnderWayAndOnlyTheNewestIsDelivered() {
        var machine = PresentationMachine()
        _ = machine.openCalled(Self.opener, isReady: true, presenter: .available)
        #expect(machine.snapshotChanged() == [])  // still presenting
        #expect(
            machine.presentFinished(Self.first) == [.opened(Self.first, callers: [Self.opener]), .update(Self.first)])
        #expect(machine.snapshotChanged() == [])
        #expect(machine.snapshotChanged() == [])
        #expect(machine.updateFinished(Self.first, revision: 4) == [.delivered(revision: 4), .update(Self.first)])
        #expect(machine.updateFinished(Self.first, revision: 6) == [.delivered(revision: 6)])
    }
}
