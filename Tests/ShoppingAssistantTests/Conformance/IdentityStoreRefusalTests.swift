import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// An identity store that refuses a write (B14), through the engine, as flutter's newest
/// `session_reset_failure_test` pins it: a delivered answer is never made a failure by the
/// store, the uid stays the identity in memory — requests carry it, `getUserId()` and the
/// listener report it — the refusal reaches the log at `.error` through the store's warning
/// handler, and the uid is written again when Gravity answers with it.
@Suite(.timeLimit(.minutes(2)))
struct IdentityStoreRefusalTests {
    typealias API = UserIdAPITests

    /// A `trackView` answered with `uid`; the body of its `/visit`.
    static func view(_ h: EngineHarness, answeredWith uid: String) async throws -> [String: Any] {
        let visit = h.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: uid)))
        try await API.trackView(h)
        return Fixtures.body(h.transport.request(for: visit))
    }

    /// An engine on a store that holds `uid-a` and refuses every write from the moment the app
    /// makes `change`; the store, the engine and what the app's uid listener heard after it.
    static func changeTheStoreRefuses(
        _ change: @escaping @Sendable (AssistantEngine) async -> Void
    ) async throws -> (RecordingIdentityStore, EngineHarness, UserIdAPITests.Heard) {
        let store = RecordingIdentityStore(uid: "uid-a")
        let h = await EngineHarness(identityStore: store)
        let heard = await API.listening(h)
        store.refusesWrites = true
        _ = try await h.bed.run { engine -> Bool in
            await change(engine)
            return true
        }
        return (store, h, heard)
    }

    // Mirrors "a uid the disk refused does not fail the delivered request and is written
    // again" and "a uid known only in memory is still reported by getUserId and the listener".
    // covers: B14, B2
    @Test func aRefusedUidIsKeptInMemoryReportedAndWrittenAgainWhenItComesBack() async throws {
        let store = RecordingIdentityStore()
        store.refusesWrites = true
        let h = await EngineHarness(identityStore: store)
        let heard = await API.listening(h)

        _ = try await Self.view(h, answeredWith: "server-uid")
        #expect(store.loadUid() == nil, "the store kept nothing")
        #expect(store.saves == ["server-uid"])
        #expect(h.logs.errors.contains("identity store: the identity could not be saved: the store refused the write"))
        #expect(await h.engine.getUserId() == "server-uid", "the uid lives on in memory")
        #expect(heard.all == ["server-uid"], "the listener says what getUserId() says")

        store.refusesWrites = false
        let second = try await Self.view(h, answeredWith: "server-uid")
        #expect(second["user"] as? [String: String] == ["uid": "server-uid", "ses": "s-1"], "requests carry it")
        #expect(store.loadUid() == "server-uid", "written again when it came back")
        #expect(heard.all == ["server-uid"], "the write landing later is not a second change")

        _ = try await Self.view(h, answeredWith: "server-uid")
        #expect(store.saves == ["server-uid", "server-uid"], "taken once: nothing more to write")
        await h.verify()
    }

    // A store that keeps refusing is asked once for each answer that brings the uid, and
    // warns each time; the engine sets no timer of its own for it and leaves nothing asleep.
    // covers: B14
    @Test func aStoreThatKeepsRefusingIsAskedOncePerAnswerAndNeverInBetween() async throws {
        let store = RecordingIdentityStore()
        store.refusesWrites = true
        let h = await EngineHarness(identityStore: store)
        for _ in 0..<3 { _ = try await Self.view(h, answeredWith: "u-9") }
        #expect(store.saves == ["u-9", "u-9", "u-9"])
        #expect(h.logs.errors.filter { $0.hasPrefix("identity store:") }.count == 3)
        #expect(h.clock.sleeperCount == 0, "no retry waits on the clock")
        #expect(await h.engine.getUserId() == "u-9")
        await h.verify()
    }

    // Where flutter's newest restoreUserId throws and stays on the uid the device has ("a
    // restore the device refused leaves everyone on the uid the device has"), ours follows our
    // spec (B14): the restored uid is the identity in memory — told to the app and sent on the
    // wire, one story — and written when it comes back. See the conformance article.
    // covers: B14, B8
    @Test func aRestoredUidTheStoreRefusedIsTheIdentityAndIsWrittenWhenItComesBack() async throws {
        let (store, h, heard) = try await Self.changeTheStoreRefuses { try? await $0.restoreUserId("uid-b") }
        #expect(store.loadUid() == "uid-a", "the store kept the uid it had")
        #expect(await h.engine.getUserId() == "uid-b")
        #expect(heard.all == ["uid-b"])

        store.refusesWrites = false
        let visit = try await Self.view(h, answeredWith: "uid-b")
        #expect(visit["user"] as? [String: String] == ["uid": "uid-b"], "the wire says what the app was told")
        #expect(store.loadUid() == "uid-b", "written when it came back")
        #expect(heard.all == ["uid-b"])
        await h.verify()
    }

    // Mirrors "resetUser whose removal the platform refuses": the uid is gone from memory
    // whatever the store did — the listener hears `nil`, requests carry no uid — and the next
    // uid Gravity gives is written over the one the store kept. (flutter's resetUser also
    // throws; our `resetIdentity()` does not, see the conformance article.)
    // covers: B14, B8
    @Test func aResetTheStoreRefusedStillForgetsTheUidAndTheNextUidIsWrittenOverIt() async throws {
        let (store, h, heard) = try await Self.changeTheStoreRefuses { await $0.resetIdentity() }
        #expect(store.loadUid() == "uid-a", "the store really kept it")
        #expect(heard.all == [nil], "gone from memory whatever the store did")
        #expect(await h.engine.getUserId() == nil)

        store.refusesWrites = false
        let visit = try await Self.view(h, answeredWith: "uid-new")
        #expect(visit["user"] as? [String: String] == [:], "a new anonymous visitor")
        #expect(store.loadUid() == "uid-new")
        #expect(store.saves == [nil, "uid-new"])
        await h.verify()
    }

    // The real store, refusing for real: its directory cannot be made (a regular file stands
    // where it should be). The refusal reaches the log at `.error`; once the way is clear, the
    // uid's next answer writes it.
    // covers: B14, B2
    @Test func theFileStoreRefusingAWriteCostsNoIdentity() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("refusal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let blocker = directory.appendingPathComponent("state")
        #expect(FileManager.default.createFile(atPath: blocker.path, contents: Data()))
        let file = blocker.appendingPathComponent("identity.json")
        let h = await EngineHarness(identityStore: FileIdentityStore(fileURL: file))

        _ = try await Self.view(h, answeredWith: "u-file")
        #expect(
            h.logs.errors.contains { $0.hasPrefix("identity store: the identity could not be saved to \(file.path)") })
        #expect(await h.engine.getUserId() == "u-file")

        try FileManager.default.removeItem(at: blocker)
        _ = try await Self.view(h, answeredWith: "u-file")
        #expect(FileIdentityStore(fileURL: file).loadUid() == "u-file")
        await h.verify()
    }
}
