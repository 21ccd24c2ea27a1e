import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// A presenter whose first update takes a while (it waits for the test), recording each
/// snapshot when its call finishes: what a screen would be left showing. Its waits end when
/// the test is cancelled (a time limit fails the test instead of stalling the run).
private final class SlowPresenter: AssistantPresenter {
    private struct State {
        var shown: [AssistantChatSnapshot] = []
        var held = false
        var released = false
    }

    private let state = Locked(State())
    private let waiters = Waitlist()

    var availability: AssistantPresenterAvailability { .available }
    var shown: [AssistantChatSnapshot] { state.withLock { $0.shown } }

    func presentAssistant(_ chat: AssistantChatSnapshot) async { state.withLock { $0.shown.append(chat) } }
    func dismissAssistant() async {}

    func updateAssistant(_ chat: AssistantChatSnapshot) async {
        let hold = state.withLock { state -> Bool in
            guard !state.held else { return false }
            state.held = true
            return true
        }
        if hold {
            waiters.recheck()
            await waiters.wait { [state] in state.withLock { $0.released } }
        }
        state.withLock { $0.shown.append(chat) }
        waiters.recheck()
    }

    /// Waits until a snapshot that satisfies `isWanted` has been shown; `false` if cancelled.
    func waitUntilShown(_ isWanted: @escaping @Sendable (AssistantChatSnapshot) -> Bool) async -> Bool {
        await waiters.wait { [state] in state.withLock { $0.shown.contains(where: isWanted) } }
    }

    func waitUntilHeld() async {
        await waiters.wait { [state] in state.withLock { $0.held } }
    }

    func release() {
        state.withLock { $0.released = true }
        waiters.recheck()
    }
}

@Suite(.timeLimit(.minutes(2))) struct PresenterOrderingTests {
    /// A slow presenter call must not let a newer snapshot overtake it: the screen would be
    /// left on "sending" after the reply arrived.
    // covers: D2
    @Test func snapshotsReachASlowPresenterInOrder() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        let presenter = SlowPresenter()
        h.expectEvents(3)  // chat_dialog_open, chat_message_send, chat_message_reply
        #expect(await h.engine.openAssistant(presenter: presenter) == .opened)
        let reply = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        let sending = Task { await h.engine.sendMessage("Помогите выбрать подарок") }
        await presenter.waitUntilHeld()  // the "sending" snapshot is on its way, slowly
        await h.transport.waitForRequests(3)  // /choose, /event (open), /v1/messages
        let messageId = try #require(Fixtures.body(h.transport.request(for: reply))["messageId"] as? String)
        h.transport.complete(reply, with: Fixtures.reply(to: messageId))
        // The reply lands while the first update is still held (`waitForReply` would wait for
        // the presenter): its chat_message_reply event is the fifth request.
        await h.transport.waitForRequests(5)
        #expect(await h.engine.dialogState == .active)
        #expect(presenter.shown.count == 1)
        presenter.release()
        _ = await sending.valueUnlessCancelled
        // The reply's snapshot follows the held one; it is delivered after the send returns.
        #expect(await presenter.waitUntilShown { $0.messages.count == 2 })
        await h.engine.flushTracking()
        let last = try #require(presenter.shown.last)
        #expect(!last.isSending)
        #expect(last.messages.count == 2)
        let sendingIndex = presenter.shown.firstIndex { $0.isSending }
        let replyIndex = presenter.shown.firstIndex { $0.messages.count == 2 }
        #expect(sendingIndex != nil && replyIndex != nil && sendingIndex! < replyIndex!)
        await h.verify()
    }

    /// The note on a failed message is written once the presenter shows the failure, however
    /// long an earlier update takes: a log read beside the screen never runs ahead of it.
    @Test func aFailureNoteWaitsForThePresenterToShowTheFailure() async throws {
        let presenter = SlowPresenter()
        let notes = Locked<[(message: String, failureShown: Bool)]>([])
        let noted = Waitlist()
        let logger = AssistantLogger(level: .info) { _, message in
            let failureShown =
                presenter.shown.last?.messages.contains {
                    if case .failed = $0.status { return true }
                    return false
                } ?? false
            notes.withLock { $0.append((message, failureShown)) }
            noted.recheck()
        }
        let h = await EngineHarness(logger: logger)
        await h.prepareReady()
        h.expectEvents(3)  // chat_dialog_open, chat_message_send, chat_message_error
        #expect(await h.engine.openAssistant(presenter: presenter) == .opened)
        let reply = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        let sending = Task { await h.engine.sendMessage("Помогите выбрать подарок") }
        await presenter.waitUntilHeld()  // the "sending" snapshot is on its way, slowly
        await h.transport.waitForRequests(3)  // /choose, /event (open), /v1/messages
        h.transport.complete(reply, with: Fixtures.errorBody(429, code: "RATE_LIMITED"))
        await h.transport.waitForRequests(5)  // the failure was decided: chat_message_error is out
        let isFailureNote: @Sendable (String) -> Bool = { $0.contains("not delivered") }
        #expect(!notes.withLock { $0.contains { isFailureNote($0.message) } })
        presenter.release()
        _ = await sending.valueUnlessCancelled
        #expect(await noted.wait { notes.withLock { $0.contains { isFailureNote($0.message) } } })
        let note = try #require(notes.withLock { $0.first { isFailureNote($0.message) } })
        #expect(note.failureShown)
        await h.verify()
    }
}
