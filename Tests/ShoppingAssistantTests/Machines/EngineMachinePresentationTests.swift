import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct EngineMachinePresentationTests {
    private typealias F = MachineFixtures
    private static let one = F.opening(1)

    // covers: O2
    @Test func openingBeforeTheLatestPreparationIsReadyIsNotReady() {
        var machine = F.machine()
        #expect(
            F.completions(machine.openCalled(F.call(1), presenter: .available, presenterAlive: true))
                == [.complete(F.call(1), .open(.notReady))])
        F.prepareReady(&machine)
        F.prepareAlone(&machine, F.call(2))
        #expect(
            F.completions(machine.openCalled(F.call(3), presenter: .available, presenterAlive: true))
                == [.complete(F.call(3), .open(.notReady))])
        #expect(machine.locks == PresentationLocks())
    }

    // covers: O1, O5, O9, AN1
    @Test func openingTakesTheLockPresentsTheStartScreenAndReturnsOnceShown() {
        var machine = F.readyMachine()
        let present = F.nextHostCall(machine)
        let actions = machine.openCalled(F.call(1), presenter: .available, presenterAlive: true)
        let snapshot = machine.snapshot()
        #expect(snapshot.title == "Helper")
        #expect(snapshot.suggests == ["Gift ideas", "Cheaper"])
        #expect(
            F.withoutLogs(actions) == [
                .notifyLocks(PresentationLocks(assistant: true)),
                .callHost(
                    present, .present(Self.one, snapshot, revision: machine.snapshotRevision, presenter: F.call(1))),
            ])
        #expect(
            machine.hostCallFinished(present) == [
                F.event("chat_dialog_open", ["selector": F.selector, "campaignId": "c-1"]),
                .complete(F.call(1), .open(.opened)),
            ])
    }

    // A callback that opens the chat (a hand-over that navigates back into the chat) is given
    // its result at once: the presenter cannot show the chat before the callback returns.
    // covers: H1, O1
    @Test func anOpenFromInsideAHostCallbackReturnsOpenedWithoutWaitingForThePresenter() {
        var machine = F.readyMachine()
        let call = F.callFromInsideAHostCallback(1)
        let actions = machine.openCalled(call, presenter: .available, presenterAlive: true)
        #expect(F.completions(actions) == [.complete(call, .open(.opened))])
        #expect(F.hostCallKinds(actions).count == 1, "the present still goes to the presenter")
        #expect(machine.held.isEmpty)
    }

    // covers: O4
    @Test func openingAgainWhileOpenIsAlreadyOpenAndPresentsNothing() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        let actions = machine.openCalled(F.call(2), presenter: .available, presenterAlive: true)
        #expect(F.hostCallKinds(actions) == [])
        #expect(F.completions(actions) == [.complete(F.call(2), .open(.alreadyOpen))])
    }

    // covers: O5
    @Test func aChatWhosePresenterWentAwayIsClosedBeforeOpeningAgain() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        let actions = machine.openCalled(F.call(2), presenter: .available, presenterAlive: false)
        #expect(
            F.withoutLogs(actions).prefix(3) == [
                .notifyLocks(PresentationLocks()), F.event("chat_dialog_close", [:]),
                .notifyLocks(PresentationLocks(assistant: true)),
            ])
        let presented = F.hostCallKinds(actions).compactMap { call -> OpeningID? in
            if case .present(let id, _, _, _) = call { return id }
            return nil
        }
        #expect(presented == [F.opening(2)])
        #expect(F.completions(actions) == [])
    }

    // covers: O5
    @Test func aPresenterFoundGoneClosesTheChatAndReleasesTheLock() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        _ = try F.sendWithItsUpdate(&machine)
        let update = try F.presenterCall(machine)
        #expect(
            machine.presenterGone(update) == [
                .log(.info, "the presenter went away: closing the chat"),
                .log(.info, "presentation lock: \(PresentationLocks())"), .notifyLocks(PresentationLocks()),
                F.event("chat_dialog_close", ["threadId": "thread-1"]),
                .complete(F.call(300), .send(.success("m-1"))),
            ])
        #expect(!machine.isAssistantOpen)
        #expect(machine.hostCallFinished(update) == [], "a call reported gone returns nothing later")
    }

    // covers: O5, O6
    @Test func closeReturnsOnceDismissedAndLeavesTheAppsLock() throws {
        var machine = F.readyMachine()
        _ = machine.appLockChanged(locked: true)
        try F.open(&machine)
        let dismiss = F.nextHostCall(machine)
        #expect(F.withoutLogs(machine.closeCalled(F.call(5))) == [.callHost(dismiss, .dismiss(Self.one))])
        #expect(machine.locks == PresentationLocks(app: true, assistant: true))
        #expect(
            F.withoutLogs(machine.hostCallFinished(dismiss)) == [
                .notifyLocks(PresentationLocks(app: true)), F.event("chat_dialog_close", [:]),
                .complete(F.call(5), .done),
            ])
        #expect(machine.closeCalled(F.call(6)) == [.complete(F.call(6), .done)])
    }

    // A close asked for while an update is on its way waits for it: the presenter sees its
    // calls one at a time and in order; the caller returns once the chat is closed.
    // covers: O5
    @Test func aCloseDuringAnUpdateDismissesAfterItAndReturnsOnceClosed() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        let (_, update) = try F.sendWithItsUpdate(&machine)
        let close = machine.closeCalled(F.call(5))
        #expect(F.hostCallKinds(close) == [])
        #expect(F.completions(close) == [])
        let dismiss = F.nextHostCall(machine)
        let updated = machine.hostCallFinished(update)
        #expect(F.hostCalls(updated).map(\.id) == [dismiss])
        #expect(F.completions(machine.hostCallFinished(dismiss)).contains(.complete(F.call(5), .done)))
    }

    // covers: H1, O5
    @Test func aCloseFromInsideTheUpdateItWaitsBehindReturnsAtOnce() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        _ = try F.sendWithItsUpdate(&machine)
        let call = F.callFromInsideAHostCallback(5)
        #expect(F.completions(machine.closeCalled(call)) == [.complete(call, .done)])
        #expect(machine.isAssistantOpen, "the dismissal follows once the update returns")
    }

    // A parked caller whose task is cancelled returns at once with what was decided for it;
    // the close goes on.
    // covers: H1
    @Test func aCancelledCloseReturnsAtOnceAndTheCloseGoesOn() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        _ = machine.closeCalled(F.call(5))
        #expect(machine.callCancelled(F.call(5)) == [.complete(F.call(5), .done)])
        #expect(machine.callCancelled(F.call(5)) == [], "completed once")
        #expect(F.completions(try F.finish(&machine, .dismiss(Self.one))) == [])
        #expect(machine.isAssistantOpen == false)
    }

    // covers: AN3, B3
    @Test func anIdentityChangeWhileOpenWaitsForTheCloseWhichIsTheOldUsers() throws {
        var machine = F.readyMachine()
        try F.open(&machine)
        try F.sendAndReply(&machine)
        F.finishHostCalls(&machine)
        let dismiss = F.nextHostCall(machine)
        let change = machine.setUserCalled(F.call(8), userId: "app-user-2", sessionId: nil)
        #expect(F.withoutLogs(change).first == .callHost(dismiss, .dismiss(Self.one)))
        #expect(F.completions(change) == [])
        #expect(machine.identity.epoch == 1)
        let old = GravityUser(uid: "uid-1")
        #expect(
            F.withoutLogs(machine.hostCallFinished(dismiss)) == [
                .notifyLocks(PresentationLocks()), F.event("chat_dialog_close", ["threadId": "thread-1"], user: old),
                F.event(
                    "chat_dialog_end", ["threadId": "thread-1", "reason": "identity_change"], user: old,
                    identityEpoch: 0),
                .complete(F.call(8), .done),
            ])
        #expect(machine.identity.epoch == 2)
        #expect(machine.identity.wire == GravityUser(custom: "app-user-2"))
        #expect(machine.canonicalUserId == nil)
        #expect(machine.preparationState == .idle)
    }

    // covers: D17
    @Test func afterAnIdentityChangeNoOldMessageIsShown() throws {
        var machine = F.readyMachine()
        try F.sendAndReply(&machine)
        let actions = machine.resetIdentityCalled(F.call(8))
        #expect(actions.contains(.persistUID(nil)))
        #expect(actions.last == .complete(F.call(8), .done))
        #expect(machine.snapshot().messages.isEmpty)
        #expect(machine.currentThreadId == nil)
    }

    @Test func theSameUserWithAnotherSessionIsNoIdentityChange() {
        var machine = F.readyMachine()
        _ = machine.setUserCalled(F.call(1), userId: "app-user", sessionId: "s-1")
        let epoch = machine.identity.epoch
        #expect(machine.setUserCalled(F.call(2), userId: "app-user", sessionId: "s-2") == [.complete(F.call(2), .done)])
        #expect(machine.identity.epoch == epoch)
        #expect(machine.identity.wire == GravityUser(custom: "app-user", ses: "s-2"))
    }

    // covers: AN7
    @Test func aReplyOnScreenReportsItsImpressionOnceWhenPresented() throws {
        var machine = F.readyMachine()
        try F.sendAndReply(&machine)
        let presented = try F.open(&machine, call: F.call(1))
        #expect(presented.contains(.track([.url("https://t.example/ri", user: GravityUser(uid: "uid-1"))])))
        _ = machine.closeCalled(F.call(2))
        _ = try F.finish(&machine, .dismiss(Self.one))
        let reopened = try F.open(&machine, call: F.call(3))
        #expect(F.trackedURLs(reopened) == [])
    }
}
