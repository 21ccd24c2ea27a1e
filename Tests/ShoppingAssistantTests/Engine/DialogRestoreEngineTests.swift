import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// A dialog store that fails every call, as an unwritable disk does.
private final class FailingDialogStore: DialogStore {
    struct Refused: Error, CustomStringConvertible {
        var description: String { "the disk refuses" }
    }

    func loadDialog() throws -> Data? { throw Refused() }
    func saveDialog(_ data: Data) throws { throw Refused() }
    func removeDialog() throws { throw Refused() }
}

/// The conversation across a restart, through the actor (D18–D20): a second engine on the
/// first one's dialog store is the app started again.
@Suite(.timeLimit(.minutes(2))) struct DialogRestoreEngineTests {
    static let text = "Помогите выбрать подарок"

    /// Opens the chat of a prepared engine (its `chat_dialog_open` expected).
    private static func open(_ h: EngineHarness) async {
        h.expectEvents(1)  // chat_dialog_open
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
    }

    /// A first run: the chat open, one message answered (its impression requested once).
    private static func firstRun(store: any DialogStore) async throws -> (snapshot: AssistantChatSnapshot, id: String) {
        let h = await EngineHarness(dialogStore: store)
        await h.openReady()
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        let messageId = try await h.sendAndReceive(text, reply: Fixtures.reply(to: "m"))
        await h.verify()
        try await h.bed.runUntilIdle()  // the store has taken the last change, off the actor
        return (await h.engine.chatSnapshot, messageId)
    }

    // covers: D18
    @Test func aChatQuitAndStartedAgainOpensOnTheSameMessagesProductsAndButtons() async throws {
        let store = InMemoryDialogStore()
        let (before, messageId) = try await Self.firstRun(store: store)
        #expect(store.storedData != nil)

        let h = await EngineHarness(dialogStore: store)
        await h.prepareReady()
        await Self.open(h)
        let shown = try #require(h.presenter.latest)
        #expect(shown.messages.map(\.id) == [messageId, "am-17"])
        #expect(shown.messages.map(\.text) == before.messages.map(\.text))
        #expect(shown.messages.map(\.buttons) == before.messages.map(\.buttons))
        #expect(shown.messages.last?.canRate == true)
        #expect(
            shown.messages.last?.productBlock?.products.map(\.name)
                == before.messages.last?.productBlock?.products.map(\.name))
        #expect(shown.suggests == before.suggests)
        #expect(await h.engine.dialogState == .active)
        #expect(h.transport.messageRequests.isEmpty)  // nothing sent again
        await h.verify()  // and no impression of the restored reply a second time (AN7)
    }

    // covers: D18, D20
    @Test func theFileStoreKeepsTheDialogBesideTheIdentityAndANewChatRemovesItAtOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dialog-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("dialog.bin")
        let (_, messageId) = try await Self.firstRun(store: FileDialogStore(fileURL: file))
        #expect(FileManager.default.fileExists(atPath: file.path))

        let h = await EngineHarness(dialogStore: FileDialogStore(fileURL: file))
        await h.prepareReady()
        await Self.open(h)
        #expect(h.presenter.latest?.messages.map(\.id) == [messageId, "am-17"])
        h.expectEvents(1)  // chat_dialog_end
        await h.engine.startNewChat()
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(h.presenter.latest?.messages.isEmpty == true)
        await h.verify()
    }

    /// A first run that ends while its message is being answered: what it sent, and its thread.
    private static func endedWhileSending(store: any DialogStore) async throws -> (
        body: Data?, messageId: String, threadId: String
    ) {
        let h = await EngineHarness(dialogStore: store)
        await h.prepareReady()
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        let messageId = try await h.sendAccepted(text)
        await h.transport.waitForRequest(post)
        let threadId = try #require(await h.engine.currentThreadId)
        return (h.transport.request(for: post)?.body, messageId, threadId)
    }

    // covers: D19, D5
    @Test func aMessageSendingAtExitHasItsReplyAdoptedFromHistoryOnTheNextOpening() async throws {
        let store = InMemoryDialogStore()
        let (_, messageId, threadId) = try await Self.endedWhileSending(store: store)

        let h = await EngineHarness(dialogStore: store)
        await h.prepareReady()
        let history = h.transport.expect(
            .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
            .respond(Fixtures.history(threadId: threadId, messageId: messageId, replyId: "am-h")))
        h.expectEvents(1)  // chat_message_reply
        await Self.open(h)
        await h.engine.waitForReply()
        #expect(h.transport.request(for: history) != nil)
        #expect(await h.engine.chatSnapshot.messages.map(\.id) == [messageId, "am-h"])
        #expect(h.presenter.latest?.messages.last?.text == "Из истории")
        #expect(h.transport.messageRequests.isEmpty)  // D4: nothing resent
        await h.verify()
        // The reply may be adopted before the presenter has shown the chat: no order between them.
        #expect(h.sentEventTypes.sorted() == ["chat_dialog_open", "chat_message_reply"])
    }

    // covers: D19, D6
    @Test func aMessageSendingAtExitWithoutAReplyInHistoryFailsAndItsRetryIsTheSameRequest() async throws {
        let store = InMemoryDialogStore()
        let (body, messageId, threadId) = try await Self.endedWhileSending(store: store)

        let h = await EngineHarness(dialogStore: store)
        await h.prepareReady()
        h.transport.expect(
            .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
            .respond(Fixtures.history(threadId: threadId, messageId: messageId, replyId: nil)))
        h.expectEvents(1)  // chat_message_error
        await Self.open(h)
        await h.engine.waitForReply()
        let failed = await h.userMessage(messageId)
        #expect(failed?.text == Self.text)
        #expect(failed?.canRetry == true)
        #expect(h.transport.messageRequests.isEmpty)

        h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: messageId)))
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        #expect(try await h.engine.retryMessage(id: messageId).get() == messageId)
        await h.engine.waitForReply()
        #expect(h.transport.messageRequests.first?.body == body)  // byte for byte the first run's
        #expect(await h.engine.chatSnapshot.messages.map(\.id) == [messageId, "am-17"])
        await h.verify()
    }

    // covers: D20, D17
    @Test func aDialogStoredUnderAnotherUidIsNeverShownAfterARestartAndIsRemoved() async throws {
        let store = InMemoryDialogStore()
        _ = try await Self.firstRun(store: store)

        let h = await EngineHarness(storedUID: "u-other", dialogStore: store)
        await h.prepareWith(Fixtures.choose(uid: "u-other"))
        h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse(uid: "u-other")))
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        #expect(h.presenter.latest?.messages.isEmpty == true)
        #expect(h.presenter.latest?.title == "Помощник магазина")
        #expect(await h.engine.currentThreadId == nil)
        #expect(store.storedData == nil)
        await h.verify()
    }

    // covers: D20, D17
    @Test func anIdentityChangeRemovesTheStoredDialogAtOnce() async throws {
        let store = InMemoryDialogStore()
        _ = try await Self.firstRun(store: store)
        let h = await EngineHarness(dialogStore: store)
        await h.engine.setUser(userId: "someone-else")
        try await h.bed.runUntilIdle()
        #expect(store.storedData == nil)
    }

    // covers: D20
    @Test func aDialogLastActiveLongerAgoThanTheRetentionIsNotRestored() async throws {
        let store = InMemoryDialogStore()
        _ = try await Self.firstRun(store: store)
        var configuration = AssistantEngineConfiguration(apiKey: Fixtures.apiKey, section: Fixtures.section)
        configuration.dialogRetention = .seconds(60 * 60)
        let h = await EngineHarness(configuration: configuration, dialogStore: store)
        h.clock.advance(by: .seconds(60 * 60 + 1))  // the wall clock follows the manual one
        await h.prepareReady()
        await Self.open(h)
        #expect(h.presenter.latest?.messages.isEmpty == true)
        #expect(store.storedData == nil)
        await h.verify()
    }

    // covers: D20
    @Test func aCorruptStoreCostsOnlyTheRestoreAndIsLoggedAsAnError() async throws {
        let store = InMemoryDialogStore(data: Data(#"{"version":1,"turns":[{"#.utf8))
        let h = await EngineHarness(dialogStore: store)
        #expect(h.logs.errors.contains { $0.contains("dialog store") && $0.contains("is not a dialog file") })
        #expect(store.storedData == nil)
        await h.prepareReady()
        await Self.open(h)
        #expect(h.presenter.latest?.messages.isEmpty == true)
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        let messageId = try await h.sendAndReceive(Self.text, reply: Fixtures.reply(to: "m"))
        #expect(await h.engine.chatSnapshot.messages.map(\.id) == [messageId, "am-17"])
        #expect(store.storedData != nil)
        await h.verify()
    }

    // covers: D20
    @Test func anUnwritableStoreCostsOnlyTheRestoreNeverTheChat() async throws {
        let h = await EngineHarness(dialogStore: FailingDialogStore())
        #expect(h.logs.errors.contains { $0.contains("dialog store") })
        await h.prepareReady()
        let messageId = try await h.sendAndReceive(Self.text, reply: Fixtures.reply(to: "m"))
        #expect(await h.engine.chatSnapshot.messages.map(\.id) == [messageId, "am-17"])
        #expect(h.logs.errors.contains { $0.contains("could not be saved") })
        await h.verify()
    }
}
