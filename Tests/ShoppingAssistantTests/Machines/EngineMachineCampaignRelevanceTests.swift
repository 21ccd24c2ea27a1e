import Foundation
import Testing

@testable import ShoppingAssistant

/// B15 on the machine: an auto-shown in-app campaign is for the moment and the user its
/// answer came for. Time is data here (`clockNow`, the engine's clock at each event); the
/// deadline of a call is `gravityTimeout` (10 s) after the moment it was sent.
@Suite struct EngineMachineCampaignRelevanceTests {
    private typealias F = MachineFixtures

    private static func campaign(_ id: String, delay: Duration? = nil) -> InAppCampaign {
        InAppCampaign(campaignId: id, trigger: "screenview", priority: nil, delay: delay)
    }

    /// `trackView` as `call` at `sentAt`; its `/visit` answered at `answeredAt` with `campaigns`.
    private static func visit(
        _ machine: inout EngineMachine, call: CallID, sentAt: Duration = .zero, answeredAt: Duration,
        campaigns: [InAppCampaign]
    ) -> [EngineAction] {
        machine.clockNow = sentAt
        let epoch = machine.identity.epoch
        _ = machine.trackViewCalled(call, page: F.page)
        machine.clockNow = answeredAt
        return answer(&machine, call: call, epoch: epoch, campaigns: campaigns)
    }

    private static func answer(
        _ machine: inout EngineMachine, call: CallID, epoch: UInt64, campaigns: [InAppCampaign]
    ) -> [EngineAction] {
        machine.gravityAnswered(
            .host(call),
            .campaigns(
                .success(GravityClient.Answer(value: campaigns, user: GravityAnsweredUser(uid: "uid-1", ses: "s-1")))),
            identityEpoch: epoch)
    }

    /// The campaigns `actions` hand to the host.
    private static func shown(_ actions: [EngineAction]) -> [String] {
        F.hostCallKinds(actions).compactMap { if case .showInAppCampaign(let c) = $0 { c.campaignId } else { nil } }
    }

    private static func logged(_ actions: [EngineAction], _ text: String) -> Bool {
        actions.contains { if case .log(_, let line) = $0 { line.contains(text) } else { false } }
    }

    /// The delay of the campaign that waits now ends at `now`.
    private static func delayEnds(_ machine: inout EngineMachine, at now: Duration, turn: UInt64) -> [EngineAction] {
        machine.clockNow = now
        return machine.timerFired(.campaignDelay(turn))
    }

    // MARK: - The call's deadline

    // An answer that reaches the machine after its call ended at its deadline brings its user
    // (B9), and its campaigns are not shown.
    // covers: B15, B13, B9
    @Test func theCampaignsOfAnAnswerAfterItsCallsDeadlineAreNotShown() {
        var machine = F.machine()
        _ = machine.trackViewCalled(F.call(1), page: F.page)
        machine.clockNow = .seconds(10)
        #expect(F.completions(machine.timerFired(.gravity(.host(F.call(1))))) == [.complete(F.call(1), .done)])
        machine.clockNow = .seconds(12)
        let late = machine.gravityAnswered(
            .host(F.call(1)),
            .campaigns(
                .success(
                    GravityClient.Answer(
                        value: [Self.campaign("late")], user: GravityAnsweredUser(uid: "uid-2", ses: "s-2")))),
            identityEpoch: 1)
        #expect(Self.shown(late) == [])
        #expect(Self.logged(late, "in-app campaigns late dropped: the answer came after its call's deadline"))
        #expect(late.contains(.persistUID("uid-2")), "its user still counts")
        #expect(machine.campaigns.isIdle)
    }

    // The rule does not lean on which event comes first: an answer decided at a moment past its
    // call's deadline, before the deadline's own event, shows nothing either; one at the
    // deadline itself is in time.
    // covers: B15, B13
    @Test func anAnswerDecidedPastItsDeadlineShowsNothingAndOneAtTheDeadlineIsInTime() {
        var machine = F.machine()
        let past = Self.visit(
            &machine, call: F.call(1), answeredAt: .seconds(10) + .milliseconds(1), campaigns: [Self.campaign("past")])
        #expect(Self.shown(past) == [])
        #expect(F.completions(past) == [.complete(F.call(1), .done)], "the call returns with its answer")
        #expect(Self.logged(past, "in-app campaigns past dropped: the answer came after its call's deadline"))

        var onTime = F.machine()
        let atDeadline = Self.visit(&onTime, call: F.call(1), answeredAt: .seconds(10), campaigns: [Self.campaign("c")])
        #expect(Self.shown(atDeadline) == ["c"])
    }

    // A campaign's delay runs once its turn has come: behind a campaign with a longer delay it
    // starts late. When it ends, the campaign is checked again, against its call's deadline
    // plus its own delay: sent at 0, answered at 4 s, A's 6 s delay ends at 10 s; B's 1 s delay
    // then ends at 11 s, the deadline plus its delay, and B is shown. With A's delay a
    // millisecond longer, B's ends past that and B is dropped; its call returns all the same.
    // covers: B15
    @Test(arguments: [(Duration.seconds(6), true), (.seconds(6) + .milliseconds(1), false)])
    func aDelayedCampaignIsCheckedAgainAgainstItsCallsDeadlinePlusItsDelay(first: Duration, secondShown: Bool) throws {
        var machine = F.machine()
        let arrived = Self.visit(
            &machine, call: F.call(1), answeredAt: .seconds(4),
            campaigns: [Self.campaign("A", delay: first), Self.campaign("B", delay: .seconds(1))])
        #expect(arrived.contains(.startTimer(.campaignDelay(1), after: first)))
        let a = Self.delayEnds(&machine, at: .seconds(4) + first, turn: 1)
        #expect(Self.shown(a) == ["A"], "A: within the deadline plus its own delay")
        let next = machine.hostCallFinished(try #require(F.hostCalls(a).first?.id))
        #expect(next.contains(.startTimer(.campaignDelay(2), after: .seconds(1))), "B's delay starts now")
        let b = Self.delayEnds(&machine, at: .seconds(5) + first, turn: 2)
        if secondShown {
            #expect(Self.shown(b) == ["B"])
            #expect(
                F.completions(machine.hostCallFinished(try #require(F.hostCalls(b).first?.id))) == [
                    .complete(F.call(1), .done)
                ])
        } else {
            #expect(Self.shown(b) == [])
            #expect(
                Self.logged(b, "in-app campaign B dropped: its delay ended after its call's deadline plus the delay"))
            #expect(F.completions(b) == [.complete(F.call(1), .done)])
        }
        #expect(machine.campaigns.isIdle)
    }

    // MARK: - The identity

    /// What may happen to the identity while a campaign is on its way or waits.
    enum Change: String, CaseIterable, CustomTestStringConvertible {
        case anotherUser, reset, restoredUID, sameUserAgain, sameUIDRestored

        var testDescription: String { rawValue }

        /// Another user, a reset and a restored uid are identity changes; the same user or
        /// uid again is not (B3, B14).
        var isIdentityChange: Bool {
            switch self {
            case .anotherUser, .reset, .restoredUID: true
            case .sameUserAgain, .sameUIDRestored: false
            }
        }

        /// The machine as the test starts: a user set for the user cases, else SDK-managed.
        func machine() -> EngineMachine {
            var machine = F.machine()
            if self == .anotherUser || self == .sameUserAgain {
                _ = machine.setUserCalled(F.call(90), userId: "alice", sessionId: "s-alice")
            }
            return machine
        }

        func apply(_ machine: inout EngineMachine) -> [EngineAction] {
            switch self {
            case .anotherUser: machine.setUserCalled(F.call(91), userId: "bob", sessionId: "s-bob")
            case .reset: machine.resetIdentityCalled(F.call(91))
            case .restoredUID: machine.userIdRestoreCalled(F.call(91), uid: "kept-uid")
            case .sameUserAgain: machine.setUserCalled(F.call(91), userId: "alice", sessionId: "s-alice")
            case .sameUIDRestored: machine.userIdRestoreCalled(F.call(91), uid: "uid-1")
            }
        }
    }

    // Mirrors flutter's presentation_relevance_wire_test ("drops it when another user is set
    // while loading", "shows it when the same user is set again"): the identity changes while
    // the answer is on its way.
    // covers: B15, B9
    @Test(arguments: Change.allCases)
    func aCampaignWhoseAnswerWasOnItsWayWhenTheIdentityChangedIsDropped(change: Change) {
        var machine = change.machine()
        let epoch = machine.identity.epoch
        _ = machine.trackViewCalled(F.call(1), page: F.page)
        _ = change.apply(&machine)
        let answered = Self.answer(&machine, call: F.call(1), epoch: epoch, campaigns: [Self.campaign("c")])
        #expect(Self.shown(answered) == (change.isIdentityChange ? [] : ["c"]))
        if change.isIdentityChange {
            #expect(Self.logged(answered, "in-app campaigns c dropped: the identity changed meanwhile"))
            #expect(F.completions(answered) == [.complete(F.call(1), .done)])
        }
    }

    // Mirrors flutter's presentation_relevance_wire_test ("drops it when the user is reset
    // during the campaign delay"): the identity changes while the campaign waits for its delay,
    // and for its turn behind it. Both are dropped, the delay's timer stops, the call returns.
    // covers: B15
    @Test(arguments: Change.allCases)
    func campaignsWaitingForTheirDelayOrTurnWhenTheIdentityChangesAreDropped(change: Change) {
        var machine = change.machine()
        let arrived = Self.visit(
            &machine, call: F.call(1), answeredAt: .seconds(1),
            campaigns: [Self.campaign("delayed", delay: .seconds(2)), Self.campaign("next")])
        #expect(Self.shown(arrived) == [])
        machine.clockNow = .seconds(2)
        let changed = change.apply(&machine)
        if change.isIdentityChange {
            #expect(changed.contains(.cancelTimer(.campaignDelay(1))))
            #expect(Self.logged(changed, "in-app campaign delayed dropped: the identity changed while it waited"))
            #expect(Self.logged(changed, "in-app campaign next dropped: the identity changed while it waited"))
            #expect(F.completions(changed).contains(.complete(F.call(1), .done)), "nothing left to show for it")
            #expect(machine.campaigns.isIdle)
            #expect(Self.shown(Self.delayEnds(&machine, at: .seconds(3), turn: 1)) == [], "a stray timer shows nothing")
        } else {
            #expect(!changed.contains(.cancelTimer(.campaignDelay(1))))
            let shown = Self.delayEnds(&machine, at: .seconds(3), turn: 1)
            #expect(Self.shown(shown) == ["delayed"])
        }
    }

    // The campaign the host is showing when the identity changes cannot be taken back: it
    // stays until the host returns, and the new user's campaigns wait for it, one at a time.
    // covers: B15, B6
    @Test func theCampaignBeingShownWhenTheIdentityChangesFinishesBeforeTheNextUsersFirst() throws {
        var machine = F.machine()
        let first = Self.visit(
            &machine, call: F.call(1), answeredAt: .seconds(1),
            campaigns: [Self.campaign("shown"), Self.campaign("queued")])
        let showing = try #require(F.hostCalls(first).first?.id)
        let reset = machine.resetIdentityCalled(F.call(2))
        #expect(Self.logged(reset, "in-app campaign queued dropped: the identity changed while it waited"))
        #expect(!F.completions(reset).contains(.complete(F.call(1), .done)), "its call waits for the shown one")
        let newUser = Self.visit(&machine, call: F.call(3), answeredAt: .seconds(2), campaigns: [Self.campaign("new")])
        #expect(Self.shown(newUser) == [], "one at a time")
        let returned = machine.hostCallFinished(showing)
        #expect(Self.shown(returned) == ["new"])
        #expect(F.completions(returned) == [.complete(F.call(1), .done)])
    }
}
