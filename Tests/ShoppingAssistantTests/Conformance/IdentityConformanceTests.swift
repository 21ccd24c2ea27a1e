import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// Identity as the vendor SDKs keep it (B3, S3): the SDK-managed uid and session, the manual
/// user, and what a late answer may and may not change.
@Suite(.timeLimit(.minutes(2))) struct IdentityConformanceTests {
    /// An engine whose store reports saves, and a `/visit` left hanging until the test answers.
    private struct Race {
        let built: EngineHarness
        let store: RecordingIdentityStore
        let pending: ScriptedTransport.Exchange
        let call: Task<Void, Never>

        init(storedUID: String?) async {
            store = RecordingIdentityStore(uid: storedUID)
            built = await EngineHarness(identityStore: store)
            pending = built.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
            let engine = built.engine
            call = Task { await engine.trackView(pageContext: Fixtures.homePage) }
            await built.transport.waitForRequests(1)
        }

        /// Answers the hanging `/visit` with `uid` and waits for the call to return.
        func answer(uid: String, ses: String = "s-late") async {
            built.transport.complete(pending, with: .json(200, ["user": ["uid": uid, "ses": ses], "campaigns": []]))
            await call.valueUnlessCancelled
        }
    }

    // Mirrors: flutter choose_wire_test "resetSession inside the batch window is not undone by
    // the flush" — the answer echoes a user snapshotted before the reset; adopting it would
    // resurrect the logged-out identity.
    // covers: B3, S3
    @Test func lateAnswerAfterAResetNeverRestoresTheOldUid() async {
        let race = await Race(storedUID: nil)
        await race.built.engine.resetIdentity()
        await race.answer(uid: "stale-uid")
        #expect(await race.built.engine.canonicalUserId == nil)
        #expect(race.store.loadUid() == nil)
        #expect(!race.store.saves.contains("stale-uid"))
        await race.built.verify()
    }

    // Mirrors: flutter choose_wire_test "resetSession between the user snapshot and the flush
    // does not resurrect a warm session".
    // covers: B3
    @Test func lateAnswerAfterAResetOfAWarmSessionDoesNotResurrectIt() async {
        let race = await Race(storedUID: "warm-uid")
        await race.built.engine.resetIdentity()
        await race.answer(uid: "warm-uid", ses: "warm-ses")
        #expect(await race.built.engine.canonicalUserId == nil)
        #expect(race.store.loadUid() == nil)
        // The next request goes out as a new visitor: no uid, no session.
        let next = race.built.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await race.built.engine.trackView(pageContext: Fixtures.homePage)
        #expect(Fixtures.body(race.built.transport.request(for: next))["user"] as? [String: String] == [:])
        await race.built.verify()
    }

    // Mirrors: flutter session_manager_test "a stale saveUser racing a reset cannot erase the
    // newer generation uid".
    // covers: B3
    @Test func staleAnswerCannotReplaceTheNewIdentitysUid() async {
        let race = await Race(storedUID: "old-uid")
        await race.built.engine.resetIdentity()
        race.built.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "fresh-uid")))
        await race.built.engine.trackView(pageContext: Fixtures.homePage)
        await race.answer(uid: "stale-uid")
        #expect(await race.built.engine.canonicalUserId == "fresh-uid")
        #expect(race.store.loadUid() == "fresh-uid")
        await race.built.verify()
    }

    // Mirrors: flutter session_manager_test "a stale saveUser alone leaves no uid behind".
    // covers: B3
    @Test func staleAnswerAloneLeavesNoUidBehind() async {
        let race = await Race(storedUID: nil)
        await race.built.engine.resetIdentity()
        await race.answer(uid: "stale-uid")
        #expect(race.store.saves == [nil], "only the reset's own clearing was written")
        await race.built.verify()
    }

    // A late answer to a request made as the SDK-managed user, arriving after `setUser`, is
    // not the manual user's canonical uid (S3) and is not persisted either.
    // covers: B3, S3
    @Test func lateAnswerAfterSetUserNeverBecomesTheManualUsersUid() async {
        let race = await Race(storedUID: nil)
        await race.built.engine.setUser(userId: "crm-42", sessionId: "crm-s")
        await race.answer(uid: "anonymous-uid")
        #expect(await race.built.engine.canonicalUserId == nil)
        #expect(race.store.saves.isEmpty)
        race.built.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-crm-42")))
        await race.built.engine.trackView(pageContext: Fixtures.homePage)
        #expect(await race.built.engine.canonicalUserId == "u-crm-42")
        await race.built.verify()
    }

    // Mirrors: flutter choose_wire_test "a gate-owning visit re-snapshots through the reset
    // barrier, not around it" — a uid persisted by an earlier run, then a reset: the visit goes
    // out without the relic uid.
    // covers: B3
    @Test func resetSendsTheNextRequestWithoutTheStoredUid() async {
        let store = RecordingIdentityStore(uid: "relic-uid")
        let built = await EngineHarness(identityStore: store)
        await built.engine.resetIdentity()
        let visit = built.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await built.engine.trackView(pageContext: Fixtures.homePage)
        #expect(Fixtures.body(built.transport.request(for: visit))["user"] as? [String: String] == [:])
        #expect(store.loadUid() == "u-8f3c", "the answer's uid is the new visitor's")
        await built.verify()
    }

    // Mirrors: iOS GravityRepository.saveUserIfNeeded (`guard customerUser == nil`) and flutter
    // SessionManager.saveUser (returns for a custom user): a manual user's answer is never
    // persisted as the SDK-managed uid. Unlike the SDKs, the engine keeps the uid Gravity
    // returns for the manual user as the canonical one for the assistant (S3).
    // covers: B3, S3
    @Test func manualUsersUidIsCanonicalButNeverPersisted() async {
        let store = RecordingIdentityStore(uid: "u-managed")
        let built = await EngineHarness(identityStore: store)
        await built.engine.setUser(userId: "crm-42", sessionId: nil)
        let first = built.transport.expect(
            .request(.post, pathSuffix: "/visit"),
            .respond(.json(200, ["user": ["uid": "u-crm-42", "ses": "s-crm"], "campaigns": []])))
        await built.engine.trackView(pageContext: Fixtures.homePage)
        #expect(Fixtures.body(built.transport.request(for: first))["user"] as? [String: String] == ["custom": "crm-42"])
        #expect(await built.engine.canonicalUserId == "u-crm-42")
        #expect(store.saves.isEmpty)
        #expect(store.loadUid() == "u-managed")
        // Without a session from the app, the one Gravity returned is sent back.
        let second = built.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await built.engine.trackView(pageContext: Fixtures.homePage)
        #expect(
            Fixtures.body(built.transport.request(for: second))["user"] as? [String: String]
                == ["custom": "crm-42", "ses": "s-crm"])
        await built.verify()
    }

    // Mirrors: iOS setUser called again with the same id (only the session changes): not an
    // identity change, so the dialog and the canonical uid stay.
    // covers: B3
    @Test func sameManualUserWithANewSessionIsNotAnIdentityChange() async throws {
        let h = await EngineHarness()
        await h.engine.setUser(userId: "crm-42", sessionId: "s-1")
        await h.prepareWith(Fixtures.choose(uid: "u-crm-42"))
        // One reply, its two lifecycle events answered as Gravity answers this user (an answer
        // with another uid would change the canonical uid, B9, whenever it landed).
        h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m")))
        for _ in 0..<2 {
            h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse(uid: "u-crm-42")))
        }
        _ = try await h.sendAccepted("Помогите выбрать подарок")
        await h.engine.waitForReply()
        try await h.bed.runUntilIdle()  // the events' answers have landed
        let thread = await h.engine.currentThreadId
        await h.engine.setUser(userId: "crm-42", sessionId: "s-2")
        #expect(await h.engine.currentThreadId == thread)
        #expect(await h.engine.canonicalUserId == "u-crm-42")
        let visit = h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        #expect(
            Fixtures.body(h.transport.request(for: visit))["user"] as? [String: String] == [
                "custom": "crm-42", "ses": "s-2",
            ])
        await h.verify()
    }

    // Mirrors: iOS Prefs (only `gravity_user_id` is persisted; the session lives in memory).
    // covers: B3
    @Test func sessionIsRuntimeOnlyAndTheUidSurvivesARestart() async {
        let store = RecordingIdentityStore(uid: nil)
        let first = await EngineHarness(identityStore: store)
        first.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-1")))
        await first.engine.trackView(pageContext: Fixtures.homePage)
        await first.verify()

        let restarted = await EngineHarness(identityStore: store)
        #expect(await restarted.engine.canonicalUserId == "u-1")
        let visit = restarted.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-1")))
        await restarted.engine.trackView(pageContext: Fixtures.homePage)
        #expect(Fixtures.body(restarted.transport.request(for: visit))["user"] as? [String: String] == ["uid": "u-1"])
        await restarted.verify()
    }
}
