import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct EngineMachineGravityTests {
    private typealias F = MachineFixtures
    private static let campaign = InAppCampaign(campaignId: "promo-1", trigger: "screenview", priority: nil)

    private static func visitAnswered(
        _ machine: inout EngineMachine, call: CallID, epoch: UInt64 = 1, campaigns: [InAppCampaign] = [campaign]
    ) -> [EngineAction] {
        _ = machine.trackViewCalled(call, page: F.page)
        return machine.gravityAnswered(
            .host(call),
            .campaigns(
                .success(GravityClient.Answer(value: campaigns, user: GravityAnsweredUser(uid: "uid-1", ses: "s-1")))),
            identityEpoch: epoch)
    }

    @Test func trackViewSendsAVisitAsTheCurrentUser() {
        var machine = F.machine()
        #expect(
            F.withoutGravityDeadlines(machine.trackViewCalled(F.call(1), page: F.page))
                == [.sendGravity(.host(F.call(1)), .visit(F.envelope()), identityEpoch: 1)])
    }

    // covers: B6
    @Test func aCampaignIsShownWhenNoLockIsHeldAndTheCallReturnsOnceShown() {
        var machine = F.machine()
        let show = F.nextHostCall(machine)
        let actions = F.withoutGravityDeadlines(Self.visitAnswered(&machine, call: F.call(1)))
        #expect(actions == [.callHost(show, .showInAppCampaign(Self.campaign))])
        #expect(machine.hostCallFinished(show) == [.complete(F.call(1), .done)])
    }

    // Campaigns are one channel: shown one at a time, in order; one that waits its turn while a
    // lock is taken is dropped when its turn comes (B6).
    // covers: B6, O7
    @Test func campaignsAreShownOneAtATimeAndOneWaitingWhenALockIsTakenIsDropped() throws {
        var machine = F.machine()
        let second = InAppCampaign(campaignId: "promo-2", trigger: "screenview", priority: nil)
        let third = InAppCampaign(campaignId: "promo-3", trigger: "screenview", priority: nil)
        let first = F.nextHostCall(machine)
        let actions = Self.visitAnswered(&machine, call: F.call(1), campaigns: [Self.campaign, second, third])
        #expect(F.hostCallKinds(actions) == [.showInAppCampaign(Self.campaign)])
        let next = F.nextHostCall(machine)
        #expect(machine.hostCallFinished(first) == [.callHost(next, .showInAppCampaign(second))])
        _ = machine.appLockChanged(locked: true)
        let last = machine.hostCallFinished(next)
        #expect(F.hostCallKinds(last) == [])
        #expect(F.completions(last) == [.complete(F.call(1), .done)])
        #expect(
            last.contains { if case .log(.info, let line) = $0 { line.contains("promo-3 suppressed") } else { false } })
    }

    // A campaign handler (or any callback) that reports a page view is not made to wait for the
    // campaign shows that this page view brings: they queue behind the one being shown.
    // covers: H1, B6
    @Test func aTrackViewFromInsideAHostCallbackReturnsWithoutWaitingForItsCampaigns() {
        var machine = F.machine()
        _ = Self.visitAnswered(&machine, call: F.call(1))
        let inside = F.callFromInsideAHostCallback(2)
        let actions = Self.visitAnswered(&machine, call: inside)
        #expect(F.completions(actions) == [.complete(inside, .done)])
        #expect(F.hostCallKinds(actions) == [], "its campaign waits for the one being shown")
    }

    // A trackView whose caller is cancelled while its campaign is shown returns at once.
    // covers: H1
    @Test func aCancelledTrackViewReturnsWhileItsCampaignIsShown() {
        var machine = F.machine()
        _ = Self.visitAnswered(&machine, call: F.call(1))
        #expect(machine.callCancelled(F.call(1)) == [.complete(F.call(1), .done)])
        F.finishHostCalls(&machine)
        #expect(machine.held.isEmpty)
    }

    // Mirrors flutter choose_wire_test (gate cases): with no session known, the first Gravity
    // request goes alone; the others wait for its answer and carry the session it brought.
    // covers: B8
    @Test func withNoSessionTheFirstRequestGoesAloneAndTheOthersCarryItsSession() {
        var machine = F.machine(storedUID: nil)
        #expect(
            F.withoutGravityDeadlines(machine.trackViewCalled(F.call(1), page: F.page))
                == [.sendGravity(.host(F.call(1)), .visit(F.envelope(user: GravityUser())), identityEpoch: 1)])
        let waiting = F.contentAlone(&machine, F.call(2), selector: "entry")
        #expect(
            F.withoutLogs(waiting) == [.startTimer(.contentWindow, after: .zero)],
            "the second request waits at the gate once its instant ended (B16)")
        let answered = machine.gravityAnswered(
            .host(F.call(1)),
            .campaigns(.success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "u-9", ses: "s-9")))),
            identityEpoch: 1)
        #expect(
            F.withoutGravityDeadlines(answered).last
                == .sendGravity(
                    .host(F.call(2)),
                    .choose(
                        selector: "entry", settings: GravityContentSettings(),
                        envelope: F.envelope(user: GravityUser(uid: "u-9", ses: "s-9"))),
                    identityEpoch: 1))
        #expect(
            F.withoutGravityDeadlines(F.withoutLogs(machine.trackViewCalled(F.call(3), page: F.page))).count == 1,
            "a session is known now")
    }

    // Mirrors flutter choose_wire_test (a failed first visit): a failed first request releases
    // the gate, and the next request goes alone in its turn.
    // covers: B8
    @Test func aFailedFirstRequestReleasesTheGateAndTheNextGoesAlone() {
        var machine = F.machine(storedUID: nil)
        _ = machine.trackViewCalled(F.call(1), page: F.page)
        F.contentAlone(&machine, F.call(2), selector: "entry")
        F.contentAlone(&machine, F.call(3), selector: "other")
        let failed = machine.gravityAnswered(
            .host(F.call(1)), .campaigns(.failure(F.failure(.network))), identityEpoch: 1)
        let sent = failed.compactMap { action -> RequestID? in
            if case .sendGravity(let id, _, _) = action { return id } else { return nil }
        }
        #expect(sent == [.host(F.call(2))], "only the next one, alone")
        #expect(machine.sessionGate.opener == .host(F.call(2)))
        #expect(machine.sessionGate.waiting.map(\.id) == [.host(F.call(3))])
    }

    // A request given up while it waits at the gate is never sent; a first request given up
    // releases the gate as a failed one does.
    // covers: B8, P2
    @Test func aWithdrawnRequestAtTheGateIsNeverSentAndAWithdrawnFirstOneReleasesTheGate() {
        var machine = F.machine(storedUID: nil)
        _ = machine.trackViewCalled(F.call(1), page: F.page)
        F.prepareAlone(&machine, F.call(2))
        let superseding = F.prepareAlone(&machine, F.call(3))
        #expect(!superseding.contains(.cancelRequest(.configuration(F.preparation(1)))), "it was never sent")
        #expect(machine.sessionGate.waiting.map(\.id) == [.configuration(F.preparation(2))])
        let answered = machine.gravityAnswered(
            .host(F.call(1)),
            .campaigns(.success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "u-9", ses: "s-9")))),
            identityEpoch: 1)
        let sent = answered.compactMap { action -> RequestID? in
            if case .sendGravity(let id, _, _) = action { return id } else { return nil }
        }
        #expect(sent == [.configuration(F.preparation(2))])

        var other = F.machine(storedUID: nil)
        F.prepareAlone(&other, F.call(1))
        F.contentAlone(&other, F.call(2), selector: "entry")
        let released = F.prepareAlone(&other, F.call(3))
        #expect(released.contains(.cancelRequest(.configuration(F.preparation(1)))))
        #expect(
            released.contains { if case .sendGravity(.host(F.call(2)), _, _) = $0 { true } else { false } },
            "the first request let go releases the gate: the next goes alone")
        #expect(other.sessionGate.opener == .host(F.call(2)))
    }

    // An identity change starts the gate again: what waited goes through it as the new identity.
    // covers: B8, B3
    @Test func anIdentityChangeStartsTheGateAgainForTheNewIdentity() {
        var machine = F.machine(storedUID: nil)
        _ = machine.trackViewCalled(F.call(1), page: F.page)
        F.contentAlone(&machine, F.call(2), selector: "entry")
        let reset = machine.resetIdentityCalled(F.call(3))
        #expect(
            reset.contains {
                if case .sendGravity(.host(F.call(2)), _, identityEpoch: 2) = $0 { return true } else { return false }
            })
        #expect(machine.sessionGate.opener == .host(F.call(2)))
    }

    // covers: B6
    @Test func whileTheAppHoldsALockACampaignIsDroppedNotQueued() {
        var machine = F.machine()
        _ = machine.appLockChanged(locked: true)
        let actions = F.withoutGravityDeadlines(Self.visitAnswered(&machine, call: F.call(1)))
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
        #expect(F.hostCallKinds(actions) == [])
        #expect(F.completions(actions) == [.complete(F.call(1), .done)])
        _ = machine.closeCalled(F.call(2))
        let closed = try F.finish(&machine, .dismiss(F.opening(1)))
        #expect(
            !F.hostCallKinds(closed).contains { if case .showInAppCampaign = $0 { return true } else { return false } })
    }

    // covers: B6, O7
    @Test func contentIsFetchedWhileLocked() throws {
        var machine = F.machine()
        _ = machine.appLockChanged(locked: true)
        #expect(
            F.withoutGravityDeadlines(F.contentAlone(&machine, F.call(1), selector: "entry"))
                == [
                    .startTimer(.contentWindow, after: .zero),
                    .sendGravity(
                        .host(F.call(1)),
                        .choose(selector: "entry", settings: GravityContentSettings(), envelope: F.envelope()),
                        identityEpoch: 1),
                ])
    }

    // covers: B7, AN5
    @Test func contentLoadTrackingIsQueuedOnceForEachURL() {
        var machine = F.machine()
        F.contentAlone(&machine, F.call(1), selector: "entry")
        let response = F.content(selector: "entry", loadURLs: ["https://t.example/l", "https://t.example/l"])
        #expect(
            F.withoutGravityDeadlines(
                machine.gravityAnswered(.host(F.call(1)), .content(F.answered(response)), identityEpoch: 1)) == [
                    .track([.url("https://t.example/l", user: GravityUser(uid: "uid-1"))]),
                    .complete(F.call(1), .content(response)),
                ])
    }

    // covers: B5
    @Test func aFailedContentRequestReturnsNilAndIsLogged() {
        var machine = F.machine()
        F.contentAlone(&machine, F.call(1), selector: "entry")
        let actions = F.withoutGravityDeadlines(
            machine.gravityAnswered(.host(F.call(1)), .content(.failure(F.failure(.network))), identityEpoch: 1))
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
            F.withoutGravityDeadlines(
                machine.gravityAnswered(
                    .host(F.call(1)),
                    .campaigns(
                        .success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "uid-2", ses: "s")))),
                    identityEpoch: 1)) == [.persistUID("uid-2"), .complete(F.call(1), .done)])
        #expect(machine.identity.wire == GravityUser(uid: "uid-2", ses: "s"))
        _ = machine.trackViewCalled(F.call(2), page: F.page)
        _ = machine.resetIdentityCalled(F.call(3))
        #expect(
            F.withoutGravityDeadlines(
                machine.gravityAnswered(
                    .host(F.call(2)),
                    .campaigns(
                        .success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "uid-2", ses: nil)))),
                    identityEpoch: 1)) == [.complete(F.call(2), .done)])
        #expect(machine.canonicalUserId == nil)
    }

    // covers: B3
    @Test func aManualUsersIdTravelsAsCustomNeverAsUid() {
        var machine = F.machine()
        _ = machine.setUserCalled(F.call(1), userId: "app-42", sessionId: "s-42")
        #expect(
            F.withoutGravityDeadlines(machine.trackViewCalled(F.call(2), page: F.page))
                == [
                    .sendGravity(
                        .host(F.call(2)), .visit(F.envelope(user: GravityUser(custom: "app-42", ses: "s-42"))),
                        identityEpoch: 2)
                ])
    }
}
