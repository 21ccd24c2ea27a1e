import Foundation
import Testing

@testable import ShoppingAssistant

/// The dialog's writes, off the engine's actor (D18–D20).
@Suite struct DialogWriterTests {
    private typealias F = MachineFixtures

    /// A store whose first save waits until the test lets it go, as a slow disk holds a write,
    /// and which records every write it takes. Only the writer's own queue ever blocks in it;
    /// the test waits for it without holding a thread.
    private final class HeldStore: DialogStore, @unchecked Sendable {
        // @unchecked: `writes` is only touched under `lock`; the signals are thread-safe.
        private let lock = NSLock()
        private var writes: [Data?] = []
        private var holdsNext = true
        private let entered = OneTimeSignal(activity: nil)
        let released = DispatchSemaphore(value: 0)

        var written: [Data?] { lock.withLock { writes } }

        func loadDialog() -> Data? { nil }

        func saveDialog(_ data: Data) {
            let holds = lock.withLock { () -> Bool in
                defer { holdsNext = false }
                return holdsNext
            }
            if holds {
                entered.fire()
                released.wait()
            }
            lock.withLock { writes.append(data) }
        }

        func removeDialog() { lock.withLock { writes.append(nil) } }

        /// Waits for the held save to start; `false` if it did not within the hang guard.
        func waitUntilEntered() async -> Bool {
            await withinHangGuard("the held save starts") { [entered] in await entered.wait() } != nil
        }
    }

    /// A stored dialog, told apart by its time.
    private static func dialog(at seconds: TimeInterval) throws -> StoredDialog {
        var settings = F.settings
        settings.keepsDialog = true
        var machine = EngineMachine(settings: settings, storedUID: "uid-1")
        _ = machine.builderRegistered()
        _ = machine.handlerRegistered { _ in true }
        F.prepareReady(&machine)
        let sent = machine.sendCalled(F.call(1), text: "Gift ideas", messageId: "m-1", newThreadId: "thread-1")
        let stored = try #require(
            sent.lazy.compactMap { action -> StoredDialog? in
                if case .storeDialog(let dialog) = action { return dialog } else { return nil }
            }.first)
        return StoredDialog(
            context: stored.context, turns: stored.turns, lastActive: Date(timeIntervalSince1970: seconds))
    }

    /// Changes asked while a write is under way wait behind it, and only the latest of them is
    /// written: the store holds the last state, in the order asked, never an older one after a
    /// newer one (D18).
    // covers: D18
    @Test func changesAskedDuringAWriteAreWrittenAsTheLatestOfThemOnly() async throws {
        let store = HeldStore()
        let writer = DialogWriter(store: store, logger: AssistantLogger(level: .error), activity: nil)
        let (first, second, third) = (try Self.dialog(at: 1), try Self.dialog(at: 2), try Self.dialog(at: 3))
        writer.save(first)
        #expect(await store.waitUntilEntered())
        writer.save(second)
        writer.remove()
        writer.save(third)
        store.released.signal()
        _ = await withinHangGuard("every change asked is written") { await writer.flush() }
        #expect(store.written == [StoredDialogCodec.encode(first), StoredDialogCodec.encode(third)])
    }

    /// A request that must follow a change waits until the store has taken it, and no longer
    /// (D19: a message leaves once the dialog showing it sending is kept).
    // covers: D19
    @Test func waitingForAChangeReturnsOnceTheStoreHasTakenIt() async throws {
        let store = HeldStore()
        let writer = DialogWriter(store: store, logger: AssistantLogger(level: .error), activity: nil)
        let dialog = try Self.dialog(at: 1)
        writer.save(dialog)
        let number = writer.lastAsked
        #expect(await store.waitUntilEntered())
        let waiting = Task {
            await writer.waitUntilWritten(through: number)
            return store.written
        }
        store.released.signal()
        let written = await withinHangGuard("the wait for the write ends") { await waiting.value }
        #expect(written == [StoredDialogCodec.encode(dialog)], "the write came first")
        await writer.waitUntilWritten(through: 0)  // nothing asked before: returns at once
    }

    /// A flush asked from a cancelled task (a shutdown whose caller was cancelled) still waits
    /// for the last write: the next engine on the store must not read an older state that
    /// this one's late write would then overwrite after its own (D18, D19).
    // covers: D18, D19
    @Test func aFlushFromACancelledTaskStillWaitsForTheLastWrite() async throws {
        let store = HeldStore()
        let writer = DialogWriter(store: store, logger: AssistantLogger(level: .error), activity: nil)
        let dialog = try Self.dialog(at: 1)
        writer.save(dialog)
        #expect(await store.waitUntilEntered())
        let flushing = OneTimeSignal(activity: nil)
        let flushed = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            flushing.fire()
            await writer.flush()
            return store.written
        }
        _ = await withinHangGuard("the flush starts") { await flushing.wait() }
        store.released.signal()
        let written = await withinHangGuard("the cancelled flush returns") { await flushed.value }
        #expect(written == [StoredDialogCodec.encode(dialog)])
    }

    /// A store that refuses a write costs only the restore: the failure is logged at `.error`
    /// and whoever waits for the write goes on (D20).
    // covers: D20
    @Test func aRefusedWriteIsLoggedAndReleasesWhoeverWaitsForIt() async throws {
        struct Refused: Error {}
        final class RefusingStore: DialogStore {
            func loadDialog() -> Data? { nil }
            func saveDialog(_ data: Data) throws { throw Refused() }
            func removeDialog() throws { throw Refused() }
        }
        let logger = AssistantLogger(level: .error)
        let lines = Locked<[String]>([])
        logger.setListener { _, line in lines.withLock { $0.append(line) } }
        let writer = DialogWriter(store: RefusingStore(), logger: logger, activity: nil)
        writer.save(try Self.dialog(at: 1))
        _ = await withinHangGuard("the refused save is over") { await writer.flush() }
        writer.remove()
        _ = await withinHangGuard("the refused removal is over") { await writer.flush() }
        #expect(lines.withLock { $0 }.count == 2)
        #expect(lines.withLock { $0 }.allSatisfy { $0.contains("dialog store") })
    }
}
