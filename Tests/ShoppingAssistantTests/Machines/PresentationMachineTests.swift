import Testing

@testable import ShoppingAssistant

@Suite(.timeLimit(.minutes(2))) struct PresentationMachineTests {
    private func opening(_ value: UInt64) -> OpeningID { OpeningID(value: value) }

    private func openMachine() -> PresentationMachine {
        var machine = PresentationMachine()
        _ = machine.open(isReady: true, presenter: .available)
        return machine
    }

    // covers: O1, O5
    @Test func openTakesTheAssistantLockBeforePresenting() {
        var machine = PresentationMachine()
        let (result, actions) = machine.open(isReady: true, presenter: .available)
        #expect(result == .opened)
        #expect(actions == [.notifyLocks(PresentationLocks(app: false, assistant: true)), .present(opening(1))])
        #expect(machine.currentOpening == opening(1))
        #expect(machine.locks.isLocked)
    }

    // covers: O2
    @Test func openIsNotReadyWithoutAReadyPreparation() {
        var machine = PresentationMachine()
        let (result, actions) = machine.open(isReady: false, presenter: .available)
        #expect(result == .notReady)
        #expect(actions.isEmpty)
        #expect(machine.state == .closed)
        #expect(machine.locks == PresentationLocks())
    }

    // covers: O3
    @Test(arguments: [AssistantPresenterAvailability.closed, .notVisible, .busy])
    func openRefusesAnUnavailablePresenter(_ availability: AssistantPresenterAvailability) {
        var machine = PresentationMachine()
        let (result, actions) = machine.open(isReady: true, presenter: availability)
        #expect(result == .invalidPresenter)
        #expect(actions.isEmpty)
        #expect(machine.state == .closed)
        #expect(!machine.locks.assistant)
    }

    // covers: O4
    @Test func openingAgainWhileOpenOrClosingIsAlreadyOpen() {
        var machine = openMachine()
        let again = machine.open(isReady: true, presenter: .available)
        #expect(again.0 == .alreadyOpen)
        #expect(again.1.isEmpty)
        // O4 comes before O2 and O3: the open chat is reported, not the new preparation or presenter.
        #expect(machine.open(isReady: false, presenter: .busy).0 == .alreadyOpen)
        _ = machine.close()
        let whileClosing = machine.open(isReady: true, presenter: .available)
        #expect(whileClosing.0 == .alreadyOpen)
        #expect(whileClosing.1.isEmpty)
    }

    // covers: O5
    @Test func closeKeepsTheLockUntilTheChatIsDismissed() {
        var machine = openMachine()
        #expect(machine.close() == [.dismiss(opening(1))])
        #expect(machine.state == .closing(opening(1)))
        #expect(machine.locks.assistant)
        #expect(machine.currentOpening == nil)
        #expect(machine.dismissed() == [.notifyLocks(PresentationLocks()), .closed(opening(1))])
        #expect(machine.state == .closed)
        #expect(machine.close() == [])
        #expect(machine.dismissed() == [])
    }

    // covers: O5
    @Test func presenterDismissingByItselfReleasesTheLock() {
        var machine = openMachine()
        #expect(machine.dismissed() == [.notifyLocks(PresentationLocks()), .closed(opening(1))])
        #expect(!machine.locks.isLocked)
    }

    // covers: PR6
    @Test func everyOpeningHasANewID() {
        var machine = openMachine()
        _ = machine.dismissed()
        let (result, actions) = machine.open(isReady: true, presenter: .available)
        #expect(result == .opened)
        #expect(actions.last == .present(opening(2)))
    }

    // covers: B6
    @Test func appLockIsIdempotentAndNotCounted() {
        var machine = PresentationMachine()
        #expect(machine.lockByApp() == [.notifyLocks(PresentationLocks(app: true, assistant: false))])
        #expect(machine.lockByApp() == [])
        #expect(machine.locks.isLocked)
        #expect(machine.unlockByApp() == [.notifyLocks(PresentationLocks())])
        #expect(machine.unlockByApp() == [])
        #expect(!machine.locks.isLocked)
    }

    // covers: O6, B6
    @Test func assistantReleasesOnlyItsOwnLock() {
        var machine = PresentationMachine()
        _ = machine.lockByApp()
        let (result, actions) = machine.open(isReady: true, presenter: .available)
        #expect(result == .opened)
        #expect(actions.first == .notifyLocks(PresentationLocks(app: true, assistant: true)))
        _ = machine.close()
        #expect(machine.dismissed().first == .notifyLocks(PresentationLocks(app: true, assistant: false)))
        #expect(machine.locks == PresentationLocks(app: true, assistant: false))
    }

    // covers: O6
    @Test func failedOpenLeavesTheAppLockInPlace() {
        var machine = PresentationMachine()
        _ = machine.lockByApp()
        #expect(machine.open(isReady: false, presenter: .available).0 == .notReady)
        #expect(machine.open(isReady: true, presenter: .busy).0 == .invalidPresenter)
        #expect(machine.locks == PresentationLocks(app: true, assistant: false))
    }

    // covers: O6
    @Test func appUnlockWhileOpenKeepsTheAssistantLock() {
        var machine = openMachine()
        _ = machine.lockByApp()
        #expect(machine.unlockByApp() == [.notifyLocks(PresentationLocks(app: false, assistant: true))])
        #expect(machine.locks.isLocked)
    }
}
