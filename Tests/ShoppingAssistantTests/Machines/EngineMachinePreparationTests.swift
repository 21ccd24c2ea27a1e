import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct EngineMachinePreparationTests {
    private typealias F = MachineFixtures

    @Test func aPrepareCallFetchesTheConfigurationAsTheCurrentUser() {
        var machine = F.machine()
        let id = F.preparation(1)
        #expect(
            machine.prepareCalled(F.call(1), selector: F.selector, page: F.page, timeout: .seconds(10))
                == [.startTimer(.preparation(id), after: .seconds(10)), .startTimer(.contentWindow, after: .zero)])
        #expect(
            machine.timerFired(.contentWindow)  // B16: its instant ends with no other content call
                == [
                    .sendGravity(
                        .configuration(id),
                        .choose(selector: F.selector, settings: GravityContentSettings(), envelope: F.envelope()),
                        identityEpoch: 1),
                    .startTimer(.gravity(.configuration(id)), after: .seconds(10)),  // B13
                ])
        #expect(
            F.withoutLogs(
                F.withoutGravityDeadlines(
                    machine.gravityAnswered(.configuration(id), .content(F.answered(F.content())), identityEpoch: 1)))
                == [
                    .cancelTimer(.preparation(id)), .cancelRequest(.configuration(id)),
                    .complete(F.call(1), .prepare(.ready)),
                ])
        #expect(machine.preparationState == .ready)
    }

    // covers: G1
    @Test func withoutAHandlerPreparingFailsAndSendsNothing() {
        var machine = EngineMachine(settings: F.settings, storedUID: "uid-1")
        _ = machine.builderRegistered()
        let actions = machine.prepareCalled(F.call(1), selector: F.selector, page: F.page, timeout: .seconds(10))
        #expect(!actions.contains { if case .sendGravity = $0 { return true } else { return false } })
        guard case .complete(F.call(1), .prepare(.failure(let error))) = actions.last else {
            Issue.record("not a failure: \(actions)")
            return
        }
        #expect(error.code == .invalidConfiguration)
    }

    // covers: P2
    @Test func aLateAnswerOfASupersededCallIsDroppedAndSaysSoInTheLog() {
        var machine = F.machine()
        F.prepareAlone(&machine, F.call(1))
        let second = F.prepareAlone(&machine, F.call(2))
        #expect(second.contains(.complete(F.call(1), .prepare(.superseded))))
        #expect(
            F.withoutGravityDeadlines(
                machine.gravityAnswered(
                    .configuration(F.preparation(1)), .content(F.answered(F.content())), identityEpoch: 1))
                == [.log(.debug, "stale /choose answer of prep#1 dropped")])
        #expect(machine.preparationState == .preparing)
    }

    // covers: P8, D13
    @Test func readyForAnotherSelectorIsAnAssistantChangeThatEndsTheDialog() throws {
        var machine = F.machine()
        F.prepareReady(&machine)
        try F.sendAndReply(&machine)
        let epoch = machine.dialog.epoch
        let actions = F.prepareReady(&machine, call: F.call(2), selector: "other-assistant", page: F.otherPage)
        let id = F.preparation(2)
        #expect(
            F.withoutGravityDeadlines(F.withoutLogs(actions)) == [
                .cancelTimer(.preparation(id)), .cancelRequest(.configuration(id)),
                F.event("chat_dialog_end", ["threadId": "thread-1", "reason": "assistant_change"], page: F.page),
                .complete(F.call(2), .prepare(.ready)),
            ])
        #expect(machine.dialog.epoch == epoch + 1)
        #expect(machine.currentThreadId == nil)
    }

    // covers: P8
    @Test func readyForTheSameSelectorOnAnotherPageKeepsTheDialog() throws {
        var machine = F.machine()
        F.prepareReady(&machine)
        try F.sendAndReply(&machine)
        let actions = F.prepareReady(&machine, call: F.call(2), page: F.otherPage)
        #expect(!actions.contains { if case .track = $0 { return true } else { return false } })
        #expect(machine.currentThreadId == "thread-1")
    }

    // covers: P6
    @Test func aFailedRePreparationKeepsTheDialogAndTheOpenChat() throws {
        var machine = F.machine()
        F.prepareReady(&machine)
        try F.open(&machine)
        try F.sendAndReply(&machine)
        F.prepareAlone(&machine, F.call(2), selector: "other-assistant", page: F.otherPage)
        let actions = machine.gravityAnswered(
            .configuration(F.preparation(2)), .content(.failure(F.failure(.server))), identityEpoch: 1)
        #expect(F.hostCallKinds(actions) == [])
        #expect(machine.currentThreadId == "thread-1")
        #expect(machine.isAssistantOpen)
    }

    // covers: S4
    @Test func readyWaitsForTheCanonicalUidFromAnyAnswer() {
        var machine = F.machine(storedUID: nil)
        F.prepareAlone(&machine, F.call(1))
        let configuration = machine.gravityAnswered(
            .configuration(F.preparation(1)), .content(F.answered(F.content(), uid: nil)), identityEpoch: 1)
        #expect(F.completions(configuration) == [])
        _ = machine.trackViewCalled(F.call(2), page: F.page)
        let visit = machine.gravityAnswered(
            .host(F.call(2)),
            .campaigns(.success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "uid-9", ses: nil)))),
            identityEpoch: 1)
        #expect(
            F.withoutGravityDeadlines(F.withoutLogs(visit)) == [
                .persistUID("uid-9"), .cancelTimer(.preparation(F.preparation(1))),
                .cancelRequest(.configuration(F.preparation(1))), .complete(F.call(1), .prepare(.ready)),
                .complete(F.call(2), .done),
            ])
        #expect(machine.canonicalUserId == "uid-9")
    }

    // covers: P4
    @Test func aCancelledCallerEndsItsPreparationCancelled() {
        var machine = F.machine()
        F.prepareAlone(&machine, F.call(1))
        #expect(
            F.withoutGravityDeadlines(F.withoutLogs(machine.callCancelled(F.call(1)))) == [
                .cancelTimer(.preparation(F.preparation(1))), .cancelRequest(.configuration(F.preparation(1))),
                .complete(F.call(1), .prepare(.cancelled)),
            ])
        #expect(machine.callCancelled(F.call(1)) == [])
    }

    // covers: B7
    @Test func theConfigurationsLoadTrackingIsQueuedAsTheCurrentUser() {
        var machine = F.machine()
        F.prepareAlone(&machine, F.call(1))
        let actions = machine.gravityAnswered(
            .configuration(F.preparation(1)),
            .content(F.answered(F.content(loadURLs: ["https://t.example/l", "https://t.example/l"]))), identityEpoch: 1)
        #expect(
            F.withoutGravityDeadlines(actions).first
                == .track([.url("https://t.example/l", user: GravityUser(uid: "uid-1"))]))
    }
}
