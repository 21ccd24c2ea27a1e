import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The uid for the app (B14), as flutter's newest `user_id_api_test` pins it: `getUserId()`
/// waits for a first answer on its way, the listener hears each new uid once and `nil` after
/// a reset, and `restoreUserId(_:)` makes a kept uid the identity, an empty one refused.
@Suite(.timeLimit(.minutes(2)))
struct UserIdAPITests {
    /// What the listener heard, in order.
    final class Heard: Sendable {
        private let uids = Locked<[String?]>([])
        var all: [String?] { uids.withLock { $0 } }
        func add(_ uid: String?) { uids.withLock { $0.append(uid) } }
    }

    static func listening(_ h: EngineHarness) async -> Heard {
        let heard = Heard()
        await h.engine.setUserIdListener { heard.add($0) }
        return heard
    }

    /// A `trackView` whose `/visit` waits for the test to answer it, started and settled.
    static func viewWaitingForItsAnswer(_ h: EngineHarness) async throws -> ScriptedTransport.Exchange {
        let visit = h.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
        h.bed.start { engine -> Bool in
            await engine.trackView(pageContext: Fixtures.homePage)
            return true
        }
        try await h.bed.runUntilIdle()
        return visit
    }

    static func trackView(_ h: EngineHarness) async throws {
        _ = try await h.bed.run { engine -> Bool in
            await engine.trackView(pageContext: Fixtures.homePage)
            return true
        }
    }

    // Mirrors "cold start: uid stored in prefs … is returned" and "waits for the session gate
    // and returns the server uid".
    // covers: B14, B8
    @Test func getUserIdReturnsTheStoredUidAtOnceAndWaitsForAFirstAnswerOnItsWay() async throws {
        let stored = await EngineHarness(storedUID: "cold-uid")
        #expect(await stored.engine.getUserId() == "cold-uid")

        let h = await EngineHarness(storedUID: nil)
        #expect(await h.engine.getUserId() == nil, "nothing known, nothing on its way")
        let visit = try await Self.viewWaitingForItsAnswer(h)
        let read = h.bed.start { await $0.getUserId() }
        try await h.bed.runUntilIdle()
        #expect(read.returnedValue == nil, "it waits behind the first answer")
        h.transport.complete(visit, with: Fixtures.eventResponse(uid: "server-uid"))
        try await h.bed.runUntilIdle()
        #expect(read.returnedValue == .some("server-uid"))
    }

    // Mirrors "restore releases an existing uid reader before the old owner answers" and "a
    // late failure of the old owner after a restore is neither rethrown nor unhandled".
    // covers: B14, B8
    @Test func aRestoreReleasesAReaderWaitingForTheGateWithTheRestoredUid() async throws {
        let h = await EngineHarness(storedUID: nil)
        let visit = try await Self.viewWaitingForItsAnswer(h)
        let read = h.bed.start { await $0.getUserId() }
        try await h.bed.runUntilIdle()
        _ = try await h.bed.run { engine -> Bool in
            try? await engine.restoreUserId("restored-uid")
            return true
        }
        try await h.bed.runUntilIdle()
        #expect(read.returnedValue == .some("restored-uid"), "the restored identity waits for no old answer")
        h.transport.fail(visit, with: .cannotConnect("late"))
        try await h.bed.runUntilIdle()
        #expect(await h.engine.getUserId() == "restored-uid")
        #expect(h.identityStore.loadUid() == "restored-uid")
    }

    // Mirrors "fires once for a new uid, not for the same uid, null on reset, uid on restore",
    // "restoring the same uid twice notifies once" and "cold start with R in prefs and a server
    // answer with R notifies once".
    // covers: B14
    @Test func theListenerHearsEachNewUidOnceNilOnAResetAndARestoredUid() async throws {
        let h = await EngineHarness(storedUID: "r")
        let heard = await Self.listening(h)
        #expect(await h.engine.getUserId() == "r")
        #expect(heard.all.isEmpty, "reading the stored uid is no change")
        h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "r")))
        try await Self.trackView(h)
        h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "r")))
        try await Self.trackView(h)
        #expect(heard.all == ["r"], "the server's uid once, however often it answers it")
        _ = try await h.bed.run { engine -> Bool in
            await engine.resetIdentity()
            return true
        }
        #expect(heard.all == ["r", nil])
        for _ in 0..<2 {
            _ = try await h.bed.run { engine -> Bool in
                try? await engine.restoreUserId("u2")
                return true
            }
        }
        #expect(heard.all == ["r", nil, "u2"], "the same uid restored twice is heard once")
    }

    // Mirrors "reset notifies null when a cold-start uid existed only in Prefs" and "reset with
    // nothing stored and nothing reported stays silent".
    // covers: B14
    @Test func aResetIsHeardAsNilOnlyWhenAUidWasKnown() async throws {
        let stored = await EngineHarness(storedUID: "previous-launch-uid")
        let heard = await Self.listening(stored)
        _ = try await stored.bed.run { engine -> Bool in
            await engine.resetIdentity()
            return true
        }
        #expect(heard.all == [nil], "a uid on disk was removed: an external copy must go too")
        #expect(await stored.engine.getUserId() == nil)

        let fresh = await EngineHarness(storedUID: nil)
        let silence = await Self.listening(fresh)
        _ = try await fresh.bed.run { engine -> Bool in
            await engine.resetIdentity()
            return true
        }
        #expect(silence.all.isEmpty)
    }

    // Mirrors "drops a custom user set via setUser", "leaves no session" and "rejects an empty
    // uid": the restored uid is the SDK-managed identity, the next request carries it without
    // a session and waits at the gate like any first request.
    // covers: B14, B8, B3
    @Test func aRestoredUidDropsTheCustomUserAndGoesWithoutASessionAndAnEmptyOneIsRefused() async throws {
        let h = await EngineHarness(storedUID: "u-1")
        _ = try await h.bed.run { engine -> Bool in
            await engine.setUser(userId: "custom-id", sessionId: "custom-ses")
            return true
        }
        await #expect(throws: AssistantError.self) { try await h.engine.restoreUserId("") }
        _ = try await h.bed.run { engine -> Bool in
            try? await engine.restoreUserId("restored-uid")
            return true
        }
        #expect(await h.engine.getUserId() == "restored-uid")
        let visit = h.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "restored-uid")))
        try await Self.trackView(h)
        #expect(Fixtures.body(h.transport.request(for: visit))["user"] as? [String: String] == ["uid": "restored-uid"])
    }
}
