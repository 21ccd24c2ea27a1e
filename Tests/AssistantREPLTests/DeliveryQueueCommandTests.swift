import DemoStore
import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// Nothing is lost, and the prompt shows it (DL2, DL5, DL6): a purchase made offline waits in
/// the queue (`:queue`), leaves once the network is back (`:online`, `:flush`) with the moment
/// it was made, and survives a restart of the engine on the same stores (`:restart`), in
/// memory or in the state directory.
@Suite(.timeLimit(.minutes(2))) struct DeliveryQueueCommandTests {
    private func purchases(_ repl: DemoREPL) -> [DemoGravityEvent] {
        repl.demoStore?.receivedEvents.filter { $0.type == "purchase-v1" } ?? []
    }

    /// `:offline`, two mugs in the cart, `:buy`: nothing reaches the store.
    private func buyOffline(_ repl: DemoREPL) async {
        await repl.run(lines: [":product KIT-1001", ":offline", ":cart add KIT-1001 2", ":buy"])
    }

    /// The `:log` lines that name `purchase-v1`.
    private func purchaseLines(_ repl: DemoREPL) async -> [String] {
        await repl.run(":log").printed.filter { $0.contains("purchase-v1") }
    }

    @Test func aPurchaseMadeOfflineWaitsInTheQueue() async throws {
        let repl = try await DemoREPL()
        await buyOffline(repl)
        #expect(purchases(repl).isEmpty, "offline, nothing reaches the store")
        let queue = await repl.run(":queue").printed
        let purchase = try #require(queue.first { $0.contains("event purchase-v1") }, "\(queue)")
        #expect(purchase.contains(" · age "), "\(purchase)")
        #expect(purchase.contains(" server failures"), "\(purchase)")
        #expect(await repl.session.engine.pendingDeliveries == queue.count)
    }

    /// `:queue clear` forgets what waits, and nothing of it reaches the store once back online,
    /// not even the retry its first attempt was waiting for; an argument it does not know gets
    /// the usage.
    // covers: DL8
    @Test func aClearedQueueSendsNothingOnceBackOnline() async throws {
        let repl = try await DemoREPL()
        await buyOffline(repl)
        #expect(await repl.run(":queue clear").printed == ["(queue cleared: 2 entries forgotten)"])
        #expect(await repl.run(":queue clear").printed == ["(queue empty already)"])
        await repl.run(lines: [":online", ":wait 30s", ":flush"])
        #expect(purchases(repl).isEmpty, "nothing cleared reaches the store")
        #expect(await repl.session.engine.pendingDeliveries == 0)
        #expect(await repl.run(":queue all").printed.first?.hasPrefix("usage: :queue") == true)
    }

    // Leaving offline, the user learns that what waits is not lost: the next start sends it —
    // unless the queue lives in memory only, which is lost with the session, and says so.
    // covers: DL8
    @Test func leavingWithEntriesQueuedSaysTheNextStartSendsThem() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("queue-at-quit-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let lines = [":product KIT-1001", ":offline", ":cart add KIT-1001 2", ":buy", ":quit"]
        let onDisk = try await DemoREPL(delivery: .directory(directory))
        let printed = await onDisk.runSession(lines)
        let kept = "(2 entries still queued: kept, and sent when the assistant starts again)"
        #expect(printed.last == kept, "\(printed)")
        let inMemory = try await DemoREPL(width: 200)
        let lost = await inMemory.runSession(lines)
        #expect(
            lost.last == "(2 entries still queued, in memory only: lost as this session ends; --state-dir DIR keeps "
                + "the queue for the next start)", "\(lost)")
        let online = try await DemoREPL()
        let quiet = await online.runSession([":product KIT-1001", ":cart add KIT-1001 2", ":buy", ":quit"])
        #expect(!quiet.contains { $0.contains("still queued") }, "\(quiet)")
    }

    // The network is the device's: a restart does not bring it back, and says so; a flush that
    // cannot reach it says why nothing left, instead of calling the queue flushed.
    // covers: DL8
    @Test func offlineARestartSaysSoAndAFlushSaysWhyNothingLeft() async throws {
        let repl = try await DemoREPL()
        await buyOffline(repl)
        let restarted = await repl.run(":restart").printed
        #expect(restarted.last == "(still offline: every request fails to connect until :online)", "\(restarted)")
        let flushed = await repl.run(":flush").printed
        let summary = flushed.first { $0.hasPrefix("(queue") }
        #expect(summary == "(queue tried: 2 entries still queued; offline: :online to reconnect)", "\(flushed)")
    }

    @Test func backOnlineAFlushDeliversThePurchaseWithTheTimeItWasMade() async throws {
        let repl = try await DemoREPL()
        await buyOffline(repl)
        let refused = try #require(await purchaseLines(repl).first, "the first attempt is in the log")
        #expect(refused.contains("FAILED"), "\(refused)")
        #expect(await repl.run(":online").printed == ["(online: queued entries leave on the next drain or :flush)"])
        // The queue may have drained on its own already; a flush leaves nothing either way.
        #expect(await repl.run(":wait 10s").printed.last == "(10s later)")
        #expect(await repl.run(":flush").printed == ["(queue flushed: nothing left)"])
        #expect(await repl.run(":queue").printed == ["queue empty"])
        #expect(purchases(repl).count == 1, "delivered once")
        let lines = await purchaseLines(repl)
        let delivered = try #require(lines.first { !$0.contains("FAILED") }, "\(lines)")
        #expect(delivered.hasSuffix(" (queued)"), "a later attempt, from the queue: \(delivered)")
        // Made in the first seconds of the virtual wall clock, sent ten seconds later or more.
        let stamp = try #require(Self.eventTime(in: delivered), "\(delivered)")
        #expect(stamp.hasPrefix("2026-12-06T10:00:0"), "the moment it was made, not of the send: \(stamp)")
        #expect(purchases(repl).first?.fields["eventTime"]?.stringValue == stamp, "as the store received it")
    }

    @Test func aRestartKeepsTheQueueAndThePurchaseLeavesOnceOnline() async throws {
        let repl = try await DemoREPL()
        await buyOffline(repl)
        let before = repl.session.engine
        let restarted = await repl.run(":restart").printed
        #expect(restarted.contains { $0.hasPrefix("(engine restarted on the same stores") }, "\(restarted)")
        #expect(repl.session.engine !== before, "a new engine")
        #expect(await repl.run(":queue").printed.contains { $0.contains("event purchase-v1") })
        await repl.run(lines: [":online", ":flush"])
        #expect(purchases(repl).count == 1)
        #expect(await repl.run(":queue").printed == ["queue empty"])
        #expect(await purchaseLines(repl).contains { $0.hasSuffix("(queued)") && !$0.contains("FAILED") })
    }

    @Test func aQueueInTheStateDirectoryOutlivesTheSession() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "repl-outbox-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await DemoREPL(delivery: .directory(directory))
        await buyOffline(first)
        await first.session.engine.shutdown()  // the process ends with the purchase queued
        // A new process on the same directory: the purchase leaves as its engine starts.
        let second = try await DemoREPL(delivery: .directory(directory))
        await second.run(":flush")
        #expect(purchases(second).count == 1, "delivered by the next session")
        #expect(await second.run(":queue").printed == ["queue empty"])
    }

    @Test func aCommandLineSessionKeepsItsQueueBesideItsIdentity() {
        let state = StateDirectory(path: "/tmp/assistant-state")
        func delivery(interactive: Bool, explicit: Bool, recording: Bool) -> REPLEnvironment.Delivery {
            var options = CommandLineOptions()
            options.stateDirectory = explicit ? state.path : nil
            options.recordPath = recording ? "x.transcript" : nil
            return REPLEnvironment.Policy.commandLine(
                options, interactive: interactive, width: 80, stateDirectory: state
            ).delivery
        }
        let outbox = REPLEnvironment.Delivery.directory(
            URL(fileURLWithPath: "/tmp/assistant-state/outbox", isDirectory: true))
        #expect(delivery(interactive: true, explicit: false, recording: false) == outbox)
        #expect(delivery(interactive: false, explicit: true, recording: false) == outbox)
        #expect(delivery(interactive: false, explicit: false, recording: false) == .memory, "piped: deterministic")
        #expect(delivery(interactive: true, explicit: true, recording: true) == .memory, "a recording replays")
    }

    @Test func agesReadInAFewCharacters() {
        #expect(REPLSession.age(0.25) == "250ms")
        #expect(REPLSession.age(-3) == "0ms")
        #expect(REPLSession.age(12.4) == "12s")
        #expect(REPLSession.age(75) == "1m 15s")
        #expect(REPLSession.age(7_800) == "2h 10m")
        #expect(REPLSession.age(3 * 86_400 + 4 * 3600) == "3d 4h")
    }

    private static func eventTime(in line: String) -> String? {
        guard let range = line.range(of: "eventTime=") else { return nil }
        return String(line[range.upperBound...].prefix { $0 != " " })
    }
}
