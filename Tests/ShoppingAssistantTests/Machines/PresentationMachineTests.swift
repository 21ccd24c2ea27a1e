import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct PresentationMachineTests {
    private static let first = OpeningID(value: 1)
    private static let second = OpeningID(value: 2)
    private static let url = AssistantAction.followUrl(URL(fileURLWithPath: "/delivery"))
    private static let support = AssistantAction.openSupportChat(payload: ["topic": "gifts"])

    private static func open() -> PresentationMachine {
        var machine = PresentationMachine()
        _ = machine.openCalled(isReady: true, presenter: .available)
        _ = machine.presentFinished(first, revision: 0)
        return machine
    }

    // covers: O5
    @Test func theAssistantsLockIsTakenBeforeThePresenterIsCalled() {
        var machine = PresentationMachine()
        #expect(
            machine.openCalled(isReady: true, presenter: .available)
                == .opening(Self.first, [.notifyLocks(PresentationLocks(assistant: true)), .present(Self.first)]))
        #expect(machine.presentFinished(Self.first, revision: 3) == [.presented(Self.first), .delivered(revision: 3)])
        #expect(machine.isOpen)
    }

    // covers: O2, O3, O4
    @Test func openingIsRefusedWhenNotReadyWithABadPresenterOrWhenAlreadyOpen() {
        var machine = PresentationMachine()
        #expect(machine.openCalled(isReady: false, presenter: .available) == .refused(.notReady))
        for presenter in [AssistantPresenterAvailability.closed, .notVisible, .busy] {
            #expect(machine.openCalled(isReady: true, presenter: presenter) == .refused(.invalidPresenter))
        }
        #expect(machine.locks == PresentationLocks())
        var open = Self.open()
        #expect(open.openCalled(isReady: true, presenter: .available) == .refused(.alreadyOpen))
    }

    // covers: O5, O6
    @Test func theLockIsReleasedOnlyOnceDismissedAndTheAppsLockStays() {
        var machine = Self.open()
        #expect(machine.lockedByApp() == [.notifyLocks(PresentationLocks(app: true, assistant: true))])
        #expect(machine.closeRequested() == [.dismiss(Self.first)])
        #expect(machine.locks == PresentationLocks(app: true, assistant: true))
        #expect(
            machine.dismissFinished(Self.first)
                == [.notifyLocks(PresentationLocks(app: true)), .closed(Self.first), .handedOver])
    }

    // covers: O5
    @Test func aPresenterThatDismissesByItselfReleasesTheLock() {
        var machine = Self.open()
        #expect(machine.dismissed(nil) == [.notifyLocks(PresentationLocks()), .closed(Self.first), .handedOver])
        #expect(machine.isClosed)
    }

    @Test func anOlderPresentationsDismissalIsIgnored() {
        var machine = Self.open()
        _ = machine.dismissed(nil)
        _ = machine.openCalled(isReady: true, presenter: .available)
        #expect(machine.dismissed(Self.first) == [])
        #expect(machine.dismissFinished(Self.first) == [])
        #expect(machine.currentOpening == Self.second)
    }

    // The presenter of an opening it dismissed by itself may still return from an update: that
    // return is no delivery to the next opening, and does not free its presenter channel.
    // covers: O1, D2
    @Test func anUpdateReturningForAnEarlierOpeningChangesNothing() {
        var machine = Self.open()
        #expect(machine.snapshotChanged() == [.update(Self.first)])
        _ = machine.dismissed(nil)  // the presenter's own "Back", with the update under way
        _ = machine.openCalled(isReady: true, presenter: .available)
        #expect(machine.updateFinished(Self.first, revision: 9) == [])
        #expect(machine.presentFinished(Self.first, revision: 9) == [])
        #expect(machine.snapshotChanged() == [], "the second opening is still presenting")
        #expect(
            machine.presentFinished(Self.second, revision: 10)
                == [.presented(Self.second), .delivered(revision: 10), .update(Self.second)])
    }

    // covers: PR10, AC5
    @Test func navigationIsHandedOverOnlyAfterTheCloseOneAtATime() {
        var machine = Self.open()
        #expect(machine.closeRequested(thenHandOver: Self.url) == [.dismiss(Self.first)])
        #expect(machine.closeRequested(thenHandOver: Self.support) == [])
        #expect(
            machine.dismissFinished(Self.first)
                == [.notifyLocks(PresentationLocks()), .closed(Self.first), .handOver(Self.url)])
        #expect(machine.handOversPending)
        #expect(machine.handOverFinished() == [.handOver(Self.support)])
        #expect(machine.handOverFinished() == [.handedOver])
        #expect(!machine.handOversPending)
        #expect(machine.closesHandedOver == 1)
    }

    // The presenter sees its calls in order: a close asked for while an update is under way
    // dismisses right after that update returns, never beside it.
    // covers: O5
    @Test func aCloseDuringAnUpdateDismissesOnceTheUpdateReturned() {
        var machine = Self.open()
        #expect(machine.snapshotChanged() == [.update(Self.first)])
        #expect(machine.closeRequested() == [])
        #expect(machine.snapshotChanged() == [], "no update once closing")
        #expect(machine.updateFinished(Self.first, revision: 2) == [.delivered(revision: 2), .dismiss(Self.first)])
        #expect(
            machine.dismissFinished(Self.first) == [
                .notifyLocks(PresentationLocks()), .closed(Self.first), .handedOver,
            ])
    }

    // covers: O1, O5
    @Test func aCloseWhilePresentingDismissesOnceThePresentReturned() {
        var machine = PresentationMachine()
        _ = machine.openCalled(isReady: true, presenter: .available)
        #expect(machine.closeRequested() == [])
        #expect(machine.presentFinished(Self.first, revision: 1) == [.delivered(revision: 1), .dismiss(Self.first)])
        #expect(machine.dismissFinished(Self.first).contains(.closed(Self.first)))
    }

    // covers: O1
    @Test func aPresenterThatDismissesItselfWhilePresentingStillCountsAsPresented() {
        var machine = PresentationMachine()
        _ = machine.openCalled(isReady: true, presenter: .available)
        #expect(
            machine.dismissed(nil)
                == [.presented(Self.first), .notifyLocks(PresentationLocks()), .closed(Self.first), .handedOver])
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
        _ = machine.openCalled(isReady: true, presenter: .available)
        #expect(machine.snapshotChanged() == [])  // still presenting
        #expect(
            machine.presentFinished(Self.first, revision: 1)
                == [.presented(Self.first), .delivered(revision: 1), .update(Self.first)])
        #expect(machine.snapshotChanged() == [])
        #expect(machine.snapshotChanged() == [])
        #expect(machine.updateFinished(Self.first, revision: 4) == [.delivered(revision: 4), .update(Self.first)])
        #expect(machine.updateFinished(Self.first, revision: 6) == [.delivered(revision: 6)])
    }
}
