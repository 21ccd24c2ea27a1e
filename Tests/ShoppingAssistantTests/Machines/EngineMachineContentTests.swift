import Foundation
import Testing

@testable import ShoppingAssistant

/// Content calls made together (B16) on the engine machine: they leave as one `/choose` at the
/// end of their instant, and each caller — a host's `getContentBySelector` or a preparation —
/// is answered exactly as by a request of its own.
@Suite struct EngineMachineContentTests {
    private typealias F = MachineFixtures

    private static let uid = GravityUser(uid: "uid-1")

    private static func item(_ selector: String) -> GravitySelectorRequest {
        GravitySelectorRequest(selector: selector, options: GravityContentSettings())
    }

    /// One answer holding the entries of several `/choose` answers, in order.
    private static func merged(_ responses: ContentResponse...) -> ContentResponse {
        ContentResponse(data: responses.flatMap(\.data))
    }

    // covers: B16, B5, B7
    @Test func callsMadeTogetherLeaveAsOneChooseAndEachCallerGetsTheEntriesOfItsOwnSelector() {
        var machine = F.machine()
        #expect(
            machine.contentCalled(F.call(1), selector: "recommendations", page: F.page)
                == [.startTimer(.contentWindow, after: .zero)])
        #expect(machine.contentCalled(F.call(2), selector: "entry", page: F.page) == [])
        #expect(machine.contentCalled(F.call(3), selector: "gone", page: F.page) == [])
        #expect(
            F.withoutLogs(machine.timerFired(.contentWindow)) == [
                .sendGravity(
                    .contents(1),
                    .chooseTogether(
                        [Self.item("entry"), Self.item("gone"), Self.item("recommendations")], envelope: F.envelope()),
                    identityEpoch: 1),
                .startTimer(.gravity(.contents(1)), after: .seconds(10)),
            ])

        let entry = F.content(selector: "entry", loadURLs: ["https://t.example/l-entry"])
        let widget = F.content(selector: "recommendations", loadURLs: ["https://t.example/l-widget"])
        let actions = machine.gravityAnswered(
            .contents(1), .content(F.answered(Self.merged(widget, entry))), identityEpoch: 1)
        #expect(
            actions == [
                .cancelTimer(.gravity(.contents(1))),
                .track([.url("https://t.example/l-entry", user: Self.uid)]),  // B7, as a call of its own
                .complete(F.call(2), .content(entry)),
                .complete(F.call(3), .content(ContentResponse(data: []))),  // none in the answer: empty
                .track([.url("https://t.example/l-widget", user: Self.uid)]),
                .complete(F.call(1), .content(widget)),
            ])
        #expect(machine.hostRequests.isEmpty && machine.contentBatcher.merged.isEmpty)
    }

    // A call alone waits for no time at all: its window ends with its instant, and it leaves as
    // the request it always was.
    // covers: B16, B5
    @Test func aCallAloneLeavesAtTheEndOfItsInstantAsARequestOfItsOwn() {
        var machine = F.machine()
        #expect(
            F.withoutGravityDeadlines(F.contentAlone(&machine, F.call(1), selector: "entry")) == [
                .startTimer(.contentWindow, after: .zero),
                .sendGravity(
                    .host(F.call(1)),
                    .choose(selector: "entry", settings: GravityContentSettings(), envelope: F.envelope()),
                    identityEpoch: 1),
            ])
    }

    // Mirrors flutter choose_wire_test "identical concurrent calls are deduplicated into one POST
    // and share one response": one item, and each caller its answer and its load tracking.
    // covers: B16, B7
    @Test func identicalCallsShareOneItemAndOneAnswer() {
        var machine = F.machine()
        _ = machine.contentCalled(F.call(1), selector: "dup", page: F.page)
        _ = machine.contentCalled(F.call(2), selector: "dup", page: F.page)
        #expect(
            F.withoutLogs(F.withoutGravityDeadlines(machine.timerFired(.contentWindow))) == [
                .sendGravity(
                    .contents(1), .chooseTogether([Self.item("dup")], envelope: F.envelope()), identityEpoch: 1)
            ])
        let answer = F.content(selector: "dup", loadURLs: ["https://t.example/l"])
        let actions = machine.gravityAnswered(.contents(1), .content(F.answered(answer)), identityEpoch: 1)
        #expect(
            F.completions(actions) == [.complete(F.call(1), .content(answer)), .complete(F.call(2), .content(answer))])
        #expect(F.trackedURLs(actions) == ["https://t.example/l", "https://t.example/l"])
    }

    // The preparation's configuration merged with a host's call is judged exactly as alone: two
    // different configurations of its selector are invalid (C4), even in two entries of the
    // answer, and the host's call still gets its own entry.
    // covers: B16, C4
    @Test func aPreparationMergedWithAContentCallStillSeesEveryConfigurationOfItsSelector() throws {
        var machine = F.machine()
        let prepared = machine.prepareCalled(F.call(1), selector: F.selector, page: F.page, timeout: .seconds(10))
        #expect(prepared.contains(.startTimer(.contentWindow, after: .zero)))
        _ = machine.contentCalled(F.call(2), selector: "entry", page: F.page)
        #expect(
            F.withoutLogs(F.withoutGravityDeadlines(machine.timerFired(.contentWindow))) == [
                .sendGravity(
                    .contents(1), .chooseTogether([Self.item(F.selector), Self.item("entry")], envelope: F.envelope()),
                    identityEpoch: 1)
            ])
        let entry = F.content(selector: "entry")
        let other = F.content([#"{"enabled":true,"title":"Other"}"#])
        let actions = machine.gravityAnswered(
            .contents(1), .content(F.answered(Self.merged(F.content(), entry, other))), identityEpoch: 1)
        let failure = try #require(
            F.completions(actions).first {
                if case .complete(F.call(1), .prepare(.failure)) = $0 { true } else { false }
            })
        guard case .complete(_, .prepare(.failure(let error))) = failure else { return }
        #expect(error.code == .invalidConfiguration)
        #expect(F.completions(actions).contains(.complete(F.call(2), .content(entry))))
    }

    // Mirrors flutter choose_wire_test "a failed merged POST propagates to every caller": each
    // caller gets what a failed call of its own gets (B5: nil, and a logged error).
    // covers: B16, B5
    @Test func aMergedRequestThatFailsFailsEveryCaller() {
        var machine = F.machine()
        _ = machine.contentCalled(F.call(1), selector: "fail-1", page: F.page)
        _ = machine.contentCalled(F.call(2), selector: "fail-2", page: F.page)
        _ = machine.timerFired(.contentWindow)
        let actions = machine.gravityAnswered(.contents(1), .content(.failure(F.failure(.server))), identityEpoch: 1)
        #expect(F.completions(actions) == [.complete(F.call(1), .content(nil)), .complete(F.call(2), .content(nil))])
        #expect(actions.filter { if case .log(.error, _) = $0 { true } else { false } }.count == 2)

        // At its deadline too (B13).
        _ = machine.contentCalled(F.call(3), selector: "slow-1", page: F.page)
        _ = machine.contentCalled(F.call(4), selector: "slow-2", page: F.page)
        _ = machine.timerFired(.contentWindow)
        let late = machine.timerFired(.gravity(.contents(2)))
        #expect(late.first == .cancelRequest(.contents(2)))
        #expect(F.completions(late) == [.complete(F.call(3), .content(nil)), .complete(F.call(4), .content(nil))])
    }

    // A caller that goes away leaves the others their answer; the last one lets the request go.
    // One that goes away before its instant ended never leaves at all.
    // covers: B16, P4
    @Test func aCancelledCallerLeavesTheOthersTheirAnswerAndTheLastLetsTheRequestGo() {
        var machine = F.machine()
        _ = machine.contentCalled(F.call(1), selector: "a", page: F.page)
        _ = machine.contentCalled(F.call(2), selector: "b", page: F.page)
        _ = machine.contentCalled(F.call(3), selector: "c", page: F.page)
        #expect(machine.callCancelled(F.call(3)) == [.complete(F.call(3), .content(nil))])
        #expect(
            F.withoutLogs(F.withoutGravityDeadlines(machine.timerFired(.contentWindow))) == [
                .sendGravity(
                    .contents(1), .chooseTogether([Self.item("a"), Self.item("b")], envelope: F.envelope()),
                    identityEpoch: 1)
            ])
        #expect(machine.callCancelled(F.call(1)) == [.complete(F.call(1), .content(nil))], "b still waits")
        #expect(
            machine.callCancelled(F.call(2)) == [
                .cancelRequest(.contents(1)), .cancelTimer(.gravity(.contents(1))), .complete(F.call(2), .content(nil)),
            ])
        #expect(machine.hostRequests.isEmpty)
        // What a cancelled transport still reports changes nothing.
        #expect(
            F.withoutGravityDeadlines(
                machine.gravityAnswered(.contents(1), .content(.failure(.cancelled)), identityEpoch: 1)
            ).isEmpty)
    }

    // Mirrors flutter choose_wire_test "resetSession inside the batch window is not undone by the
    // flush" and "identical requests straddling a reset are not deduplicated": the calls of the
    // instant leave as the identity they were made under when it changes, their answer brings
    // that identity's user back to nobody (B9), and a call made after the change goes apart.
    // covers: B16, B9, B3
    @Test func anIdentityChangeSendsTheWaitingCallsAsTheirOwnIdentityAndNeverMergesAcrossIt() {
        var machine = F.machine()
        _ = machine.contentCalled(F.call(1), selector: "straddle", page: F.page)
        _ = machine.contentCalled(F.call(2), selector: "other", page: F.page)
        let reset = machine.resetIdentityCalled(F.call(3))
        #expect(
            Array(F.withoutLogs(F.withoutGravityDeadlines(reset)).prefix(2)) == [
                .cancelTimer(.contentWindow),
                .sendGravity(
                    .contents(1), .chooseTogether([Self.item("other"), Self.item("straddle")], envelope: F.envelope()),
                    identityEpoch: 1),
            ])
        #expect(machine.identity.epoch == 2)
        #expect(
            machine.contentCalled(F.call(4), selector: "straddle", page: F.page)
                == [.startTimer(.contentWindow, after: .zero)], "a window of its own")
        #expect(
            F.withoutGravityDeadlines(machine.timerFired(.contentWindow)) == [
                .sendGravity(
                    .host(F.call(4)),
                    .choose(
                        selector: "straddle", settings: GravityContentSettings(),
                        envelope: F.envelope(user: GravityUser())),
                    identityEpoch: 2)
            ])
        let old = F.content(selector: "straddle", loadURLs: ["https://t.example/old"])
        let actions = machine.gravityAnswered(
            .contents(1), .content(F.answered(old, uid: "uid-old")), identityEpoch: 1)
        #expect(F.completions(actions).contains(.complete(F.call(1), .content(old))), "the caller still gets it")
        #expect(F.trackedURLs(actions).isEmpty, "no load tracking for an identity that has ended")
        #expect(!actions.contains { if case .persistUID = $0 { true } else { false } })
        #expect(machine.canonicalUserId == nil, "the logged-out identity is not resurrected")
    }

    // Mirrors flutter choose_wire_test "colliding identifiers on a cold session adopt the first
    // wave session" and "a second envelope group on a cold session parks behind the first": on
    // a first launch the first request of the instant goes alone, the others wait at the
    // session gate (B8) — each still merged — and carry the session it brought.
    // covers: B16, B8
    @Test func onAFirstLaunchTheRequestsOfAnInstantGoThroughTheSessionGateOneAfterTheFirst() {
        var machine = F.machine(storedUID: nil)
        let anonymous = GravityUser()
        _ = machine.contentCalled(F.call(1), selector: "a", page: F.page)
        _ = machine.contentCalled(F.call(2), selector: "b", page: F.page)
        _ = machine.contentCalled(F.call(3), selector: "a", page: F.otherPage)
        let sent = F.withoutLogs(F.withoutGravityDeadlines(machine.timerFired(.contentWindow)))
        #expect(
            sent == [
                .sendGravity(
                    .host(F.call(3)),
                    .choose(
                        selector: "a", settings: GravityContentSettings(),
                        envelope: F.envelope(F.otherPage, user: anonymous)),
                    identityEpoch: 1)
            ], "groups go by what they ask, then by page (app://cart first); the second waits at the gate")
        let session = GravityAnsweredUser(uid: "server-uid", ses: "server-ses")
        let actions = machine.gravityAnswered(
            .host(F.call(3)),
            .content(.success(GravityClient.Answer(value: F.content(selector: "a"), user: session))), identityEpoch: 1)
        #expect(
            F.withoutGravityDeadlines(actions).contains(
                .sendGravity(
                    .contents(1),
                    .chooseTogether(
                        [Self.item("a"), Self.item("b")],
                        envelope: F.envelope(user: GravityUser(uid: "server-uid", ses: "server-ses"))),
                    identityEpoch: 1)))
        let merged = machine.gravityAnswered(
            .contents(1), .content(.success(GravityClient.Answer(value: F.content(selector: "b"), user: session))),
            identityEpoch: 1)
        #expect(!merged.contains { if case .persistUID = $0 { true } else { false } }, "the same uid: nothing new")
        #expect(F.completions(merged).count == 2)
    }

    // covers: B16
    @Test func aContentCallMadeAfterItsInstantNeverJoinsTheRequestOnItsWay() {
        var machine = F.machine()
        let session = GravityUser(uid: "uid-1", ses: "s-1")
        _ = machine.trackViewCalled(F.call(9), page: F.page)
        _ = machine.gravityAnswered(
            .host(F.call(9)),
            .campaigns(.success(GravityClient.Answer(value: [], user: GravityAnsweredUser(uid: "uid-1", ses: "s-1")))),
            identityEpoch: 1)
        _ = machine.contentCalled(F.call(1), selector: "a", page: F.page)
        _ = machine.contentCalled(F.call(2), selector: "b", page: F.page)
        _ = machine.timerFired(.contentWindow)
        #expect(
            machine.contentCalled(F.call(3), selector: "a", page: F.page) == [.startTimer(.contentWindow, after: .zero)]
        )
        #expect(
            F.withoutGravityDeadlines(machine.timerFired(.contentWindow)) == [
                .sendGravity(
                    .host(F.call(3)),
                    .choose(selector: "a", settings: GravityContentSettings(), envelope: F.envelope(user: session)),
                    identityEpoch: 1)
            ], "a request of its own beside the merged one on its way")
        #expect(machine.contentBatcher.merged[1]?.map(\.id) == [.host(F.call(1)), .host(F.call(2))])
    }
}
