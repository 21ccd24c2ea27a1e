import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct EngineMachineGravityTests {
    private typealias F = MachineFixtures
    private static let campaign = InAppCampaign(campaignId: "promo-1", trigger: "screenview", priority: nil)

    private static func visitAnswered(_ machine: inout EngineMachine, call: CallID, epoch: UInt64 = 1)
        -> [EngineAction]
    {
        _ = machine.trackViewCalled(call, page: F.page)
        return machine.gravityAnswered(
            .host(call), .campaigns(.success(GravityClient.Answer(value: [campaign], user: nil))),
            identityEpoch: epoch)
    }

    @Test func trackViewSendsAVisitAsTheCurrentUser() {
        var machine = F.machine()
        #expect(
            machine.trackViewCalled(F.call(1), page: F.page)
                == [.sendGravity(.host(F.call(1)), .visit(F.envelope()), identityEpoch: 1)])
    }

    // covers: B6
    @Test func aCampaignIsShownWhenNoLockIsHeldAndTheCallReturnsOnceShown() {
        var machine = F.machine()
        let actions = Self.visitAnswered(&machine, call: F.call(1))
        #expect(actions == [.callHost(.showInAppCampaign(Self.campaign, for: F.call(1)))])
        #expect(
            machine.hostCallFinished(.showInAppCampaign(Self.campaign, for: F.call(1)))
                == [.complete(F.call(1), .done)])
    }

    // covers: B6
    @Test func whileTheAppHoldsALockACampaignIsDroppedNotQueued() {
        var machine = F.machine()
        _ = machine.appLockChanged(locked: true)
        let actions = Self.visitAnswered(&machine, call: F.call(1))
        #expect(
            actions == [
                .log(
                    .info, "in-app campaign promo-1 suppressed: presentation locked by \(PresentationLocks(app: true))"),
                .complete(F.call(1), .done),
            ])
        #expect(F.withoutLogs(machine.appLockChanged(locked: false)) == [.notifyLocks(PresentationLocks())])
    }

    // covers: O7
    @Test func whileTheAssistantIsPresentedCampaignsAreSuppressedAndNotReplayedAfterClose() throws {
        var machine = F.machine()
        F.prepareReady(&machine)
        try F.open(&machine)
        let actions = Self.visitAnswered(&machine, call: F.call(1))
        #expect(F.hostCalls(actions) == [])
        #expect(F.completions(actions) == [.complete(F.call(1), .done)])
        _ = machine.closeCalled(F.call(2))
        let closed = machine.hostCallFinished(.dismiss(F.opening(1)))
        #expect(!F.hostCalls(closed).contains { if case .showInAppCampaign = $0 { return true } else { return false } })
    }

    // covers: B6, O7
    @Test func contentIsFetchedWhileLocked() throws {
        var machine = F.machine()
        _ = machine.appLockChanged(locked: true)
        #expect(
            machine.contentCalled(F.call(1), selector: "entry", page: F.page)
                == [
                    .sendGravity(
                        .host(F.call(1)),
                        .choose(selector: "entry", settings: GravityContentSettings(), envelope: F.envelope()),
                        identityEpoch: 1)
                ])
    }

    // covers: B7, AN5
    @Test func contentLoadTrackingIsQueuedOnceForEachURL() {
        var machine = F.machine()
        _ = machine.contentCalled(F.call(1), selector: "entry", page: F.page)
        let response = F.content(selector: "entry", loadURLs: ["https://t.example/l", "https://t.example/l"])
        #expect(
            machine.gravityAnswered(.host(F.call(1)), .content(F.answered(response)), identityEpoch: 1) == [
                .track([.url("https://t.example/l", user: GravityUser(uid: "uid-1"))]),
                .complete(F.call(1), .content(response)),
            ])
    }

    // covers: B5
    @Test func aFailedContentRequestReturnsNilAndIsLogged() {
        var machine = F.machine()
        _ = machine.contentCalled(F.call(1), selector: "entry", page: F.page)
        let actions = machine.gravityAnswered(
            .host(F.call(1)), .content(.failure(F.failure(.network))), identityEpoch: 1)
        #expect(actions.count == 2)
        #expect(actions.last == .complete(F.call(1), .content(nil)))
        guard case .log(.error, _) = actions.first else {
            Issue.record("not logged as an error: \(actions)")
            return
        }
    }

    // covers: B3
    @Test func aNewUidFromAnAnswerIsPersistedButALateAnswerOfAReplacedIdentityIsIgnored() {
        var machine = F.machine()
        _ = machine.trackViewCalled(F.call(1), page: F.page)
        #expect(
            machine.gravityAnswered(
                .host(F.call(1)),
                .campaigns(
                    .success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "uid-2", ses: "s")))),
                identityEpoch: 1) == [.persistUID("uid-2"), .complete(F.call(1), .done)])
        #expect(machine.identity.wire == GravityUser(uid: "uid-2", ses: "s"))
        _ = machine.trackViewCalled(F.call(2), page: F.page)
        _ = machine.resetIdentityCalled(F.call(3))
        #expect(
            machine.gravityAnswered(
                .host(F.call(2)),
                .campaigns(
                    .success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "uid-2", ses: nil)))),
                identityEpoch: 1) == [.complete(F.call(2), .done)])
        #expect(machine.canonicalUserId == nil)
    }

    // covers: B3
    @Test func aManualUsersIdTravelsAsCustomNeverAsUid() {
        var machine = F.machine()
        _ = machine.setUserCalled(F.call(1), userId: "app-42", sessionId: "s-42")
        #expect(
            machine.trackViewCalled(F.call(2), page: F.page)
                == [
                    .sendGravity(
                        .host(F.call(2)), .visit(F.envelope(user: GravityUser(custom: "app-42", ses: "s-42"))),
                        identityEpoch: 2)
                ])
    }
}
