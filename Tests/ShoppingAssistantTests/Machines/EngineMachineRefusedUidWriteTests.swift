import Foundation
import Testing

@testable import ShoppingAssistant

/// B14 on the machine: an identity store that refuses a write costs no identity. The machine
/// asks for a write with `.persistUID`; the actor reports a refusal as `uidSaveRefused`.
@Suite struct EngineMachineRefusedUidWriteTests {
    private typealias F = MachineFixtures

    /// A `trackView` as `call`, answered with `uid`; what the machine returned, as `receive`
    /// returns it (the listener's report included).
    private static func visitAnswered(_ machine: inout EngineMachine, call: CallID, uid: String) -> [EngineAction] {
        let epoch = machine.identity.epoch
        _ = machine.receive { $0.trackViewCalled(call, page: F.page) }
        return machine.receive {
            $0.gravityAnswered(
                .host(call),
                .campaigns(.success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: uid, ses: "s-1")))),
                identityEpoch: epoch)
        }
    }

    private static func writes(_ actions: [EngineAction]) -> [String?] {
        actions.compactMap { if case .persistUID(let uid) = $0 { uid } else { nil } }
    }

    private static func reports(_ actions: [EngineAction]) -> [String?] {
        actions.compactMap { if case .notifyUserId(let uid) = $0 { uid } else { nil } }
    }

    // Mirrors flutter's session_reset_failure_test ("a uid the disk refused does not fail the
    // delivered request and is written again", "a uid known only in memory is still reported
    // by getUserId and the listener"): the uid stays the identity in memory, and the next
    // answer that brings it writes it again; once a write is taken, answers write nothing.
    // covers: B14, B3
    @Test func aRefusedUidStaysTheIdentityAndIsWrittenAgainWhenAnAnswerBringsItBack() {
        var machine = F.machine(storedUID: nil)
        let first = Self.visitAnswered(&machine, call: F.call(1), uid: "server-uid")
        #expect(Self.writes(first) == ["server-uid"])
        #expect(Self.reports(first) == ["server-uid"])
        #expect(F.completions(first) == [.complete(F.call(1), .done)], "the delivered answer is no failure")

        let refused = machine.receive { $0.uidSaveRefused("server-uid") }
        #expect(F.withoutLogs(refused) == [], "nothing else changes: no second report, no retry of its own")
        #expect(machine.canonicalUserId == "server-uid")
        #expect(machine.identity.wire == GravityUser(uid: "server-uid", ses: "s-1"), "requests carry it")
        #expect(
            Self.writes(F.withoutGravityDeadlines(machine.receive { $0.trackViewCalled(F.call(2), page: F.page) }))
                == [],
            "a request is not its coming back; only an answer is")
        #expect(machine.userIdRequested(F.call(3)) == [.complete(F.call(3), .userId("server-uid"))])

        let back = machine.receive {
            $0.gravityAnswered(
                .host(F.call(2)),
                .campaigns(
                    .success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "server-uid", ses: "s-1")))),
                identityEpoch: 1)
        }
        #expect(Self.writes(back) == ["server-uid"], "written again")
        #expect(Self.reports(back) == [], "the write landing later is not a second change")

        let taken = Self.visitAnswered(&machine, call: F.call(4), uid: "server-uid")
        #expect(Self.writes(taken) == [], "taken: nothing more to write")
    }

    // A store that keeps refusing is asked once per answer that brings the uid, never more:
    // no timer, no loop.
    // covers: B14
    @Test func aStoreThatKeepsRefusingIsAskedOncePerAnswerThatBringsTheUid() {
        var machine = F.machine(storedUID: nil)
        var asked: [String?] = []
        for call in 1...3 {
            let actions = Self.visitAnswered(&machine, call: F.call(UInt64(call)), uid: "u-9")
            asked += Self.writes(actions)
            for uid in Self.writes(actions) { _ = machine.receive { $0.uidSaveRefused(uid) } }
        }
        #expect(asked == ["u-9", "u-9", "u-9"])
    }

    // A restored uid the store refuses is the identity all the same (our spec; flutter's
    // newest restoreUserId throws and stays on the uid the device has, see the conformance
    // article): requests carry it, and the answer that brings it back writes it again. A
    // restore of that same uid is it coming back too.
    // covers: B14
    @Test func aRefusedRestoredUidIsTheIdentityAndIsWrittenAgainWhenItComesBack() {
        var machine = F.machine(storedUID: "uid-a")
        let restored = machine.receive { $0.userIdRestoreCalled(F.call(1), uid: "uid-b") }
        #expect(Self.writes(restored) == ["uid-b"])
        #expect(Self.reports(restored) == ["uid-b"])
        _ = machine.receive { $0.uidSaveRefused("uid-b") }
        #expect(machine.canonicalUserId == "uid-b")
        #expect(machine.identity.wire == GravityUser(uid: "uid-b"))

        let again = machine.receive { $0.userIdRestoreCalled(F.call(2), uid: "uid-b") }
        #expect(again == [.persistUID("uid-b"), .complete(F.call(2), .done)], "no change, but written again")
        #expect(machine.receive { $0.userIdRestoreCalled(F.call(3), uid: "uid-b") } == [.complete(F.call(3), .done)])

        _ = machine.receive { $0.uidSaveRefused("uid-b") }
        let back = Self.visitAnswered(&machine, call: F.call(4), uid: "uid-b")
        #expect(Self.writes(back) == ["uid-b"])
    }

    // Mirrors flutter's session_reset_failure_test ("resetUser whose removal the platform
    // refuses"): the identity is gone from memory whatever the store did — the listener hears
    // `nil`, requests carry no uid — and the next uid Gravity gives is written over the old one.
    // covers: B14
    @Test func aRefusedResetStillForgetsTheUidAndTheNextUidIsWrittenOverTheOldOne() {
        var machine = F.machine(storedUID: "uid-a")
        let reset = machine.receive { $0.resetIdentityCalled(F.call(1)) }
        #expect(Self.writes(reset) == [nil])
        #expect(Self.reports(reset) == [nil])
        let refused = machine.receive { $0.uidSaveRefused(nil) }
        #expect(
            refused == [
                .log(
                    .info,
                    "the identity store refused to forget the uid; the next uid Gravity answers with is written over it"
                )
            ])
        #expect(machine.canonicalUserId == nil)
        #expect(machine.identity.wire == GravityUser())
        #expect(Self.writes(Self.visitAnswered(&machine, call: F.call(2), uid: "uid-new")) == ["uid-new"])
    }

    // A refusal that comes after another identity replaced the refused uid changes nothing.
    // covers: B14
    @Test func aRefusalOfAUidThatIsNoLongerTheIdentityChangesNothing() {
        var machine = F.machine(storedUID: "uid-a")
        _ = machine.receive { $0.resetIdentityCalled(F.call(1)) }
        _ = machine.receive { $0.uidSaveRefused("uid-a") }
        #expect(!machine.identity.unsaved)
    }
}
