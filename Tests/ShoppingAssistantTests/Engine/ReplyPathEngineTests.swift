import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The reply's way to the screen: the request's own task hands the reply to the presenter,
/// and the reply's lifecycle events leave once the presenter has it, so their delivery does
/// not compete with the reply. The wait is only an idle tracker: anything else that happens
/// on the engine, or a flush, sends them at once, in order, so a presenter that does not
/// return never holds tracking back.
@Suite(.timeLimit(.minutes(2))) struct ReplyPathEngineTests {
    static let text = "Подарок для мамы до 3000 ₽"

    /// A request's task runs up to the transport before the call that made it returns (where
    /// the runtime has `Task.immediate`), and is a task all the same: a transport that calls
    /// the engine from inside `send`, while the engine is still deciding what the send did, is
    /// answered, and the message gets its reply.
    // covers: H1
    @Test func aTransportThatCallsTheEngineFromInsideSendIsAnswered() async throws {
        let calling = EngineCallingTransport()
        let h = await EngineHarness(wrap: { calling.wrapping($0) })
        calling.attach(h.engine)
        await h.openReady()
        let reply = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        h.transport.expect(.get(ProductFixtures.replyImpression), .respond(ProductFixtures.ok))  // AN7: shown

        let messageId = try await h.sendAccepted(Self.text)
        if Task<Void, Never>.startsOnCallingThread {
            #expect(calling.messagesEntered == 1, "the request reached the transport before the send returned")
        }
        await h.settle()
        #expect(calling.messagesEntered == 1)
        #expect(calling.statesSeen == [.sending], "the engine answered the transport's call")
        h.transport.complete(reply, with: Fixtures.reply(to: messageId))
        await h.engine.waitForReply()

        #expect(await h.engine.chatSnapshot.messages.count == 2)
        #expect(await h.engine.dialogState == .active)
        await h.verify()
    }

    /// An open chat with one message sent, its reply due in a second and the presenter's
    /// next update (the one with the reply) held.
    static func replyHeldAtThePresenter() async throws -> (EngineHarness, messageId: String) {
        let h = await EngineHarness()
        await h.openReady()
        h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respondAfter(.seconds(1), Fixtures.reply(to: "m")))
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        h.transport.expect(.get(ProductFixtures.replyImpression), .respond(ProductFixtures.ok))  // AN7: shown
        let messageId = try await h.sendAccepted(text)  // returns once "sending" is on screen
        h.presenter.hold(.update)
        await h.clock.waitForSleepers(2)  // the reply deadline, and the reply on its way
        h.clock.advance(by: .seconds(1))
        #expect(await h.presenter.waitUntilHolding(.update))
        await h.settle()  // everything that can run has run; the update is still held
        return (h, messageId)
    }

    @Test func theRepliesEventsLeaveOnceThePresenterHasTheReplyInTheirOrder() async throws {
        let (h, messageId) = try await Self.replyHeldAtThePresenter()
        #expect(h.sentEventTypes.filter { $0.hasPrefix("chat_message") }.isEmpty, "sent: \(h.sentEventTypes)")

        h.presenter.release(.update)
        await h.engine.waitForReply()
        await h.settle()
        #expect(h.presenter.latest?.messages.map(\.id) == [messageId, "am-17"])
        #expect(
            h.sentEventTypes.filter { $0.hasPrefix("chat_message") } == ["chat_message_send", "chat_message_reply"])
        await h.verify()
    }

    @Test func aPresenterThatDoesNotReturnHoldsBackNoTrackingOnceAnythingElseHappens() async throws {
        let (h, _) = try await Self.replyHeldAtThePresenter()
        h.expectEvents(1)  // chat_dialog_end
        // Counted work, so that settling waits for it; its update waits behind the held one.
        let newChat = h.bed.start { engine -> Bool in
            await engine.startNewChat()
            return true
        }
        await h.settle()
        #expect(
            h.sentEventTypes.filter { $0 != "chat_dialog_open" }
                == ["chat_message_send", "chat_message_reply", "chat_dialog_end"])
        #expect(h.presenter.isHolding(.update))

        h.presenter.release(.update)
        await h.settle()
        #expect(newChat.returnedValue == true, "the new chat returned once the update was released")
        await h.verify()
    }

    @Test func aFlushDoesNotWaitForThePresenterToTakeTheReply() async throws {
        let (h, _) = try await Self.replyHeldAtThePresenter()
        await h.engine.flushTracking()
        #expect(
            h.sentEventTypes.filter { $0.hasPrefix("chat_message") } == ["chat_message_send", "chat_message_reply"])
        #expect(h.presenter.isHolding(.update))

        h.presenter.release(.update)
        await h.engine.waitForReply()
        await h.verify()
    }
}

/// Wraps a transport so that a message's request, once in `send`, asks the engine for its
/// dialog state before it goes on: a transport that calls the engine back.
private final class EngineCallingTransport: Sendable {
    private struct State: Sendable {
        weak var engine: AssistantEngine?
        var messagesEntered = 0
        var statesSeen: [AssistantDialogState] = []
    }

    private let state = Locked(State())

    func attach(_ engine: AssistantEngine) { state.withLock { $0.engine = engine } }
    var messagesEntered: Int { state.withLock { $0.messagesEntered } }
    var statesSeen: [AssistantDialogState] { state.withLock { $0.statesSeen } }

    func wrapping(_ inner: any HTTPTransport) -> any HTTPTransport { Wrapper(inner: inner, owner: self) }

    private struct Wrapper: HTTPTransport {
        let inner: any HTTPTransport
        let owner: EngineCallingTransport

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            if request.url.path.hasSuffix("/v1/messages") {
                let engine = owner.state.withLock { state -> AssistantEngine? in
                    state.messagesEntered += 1
                    return state.engine
                }
                if let dialogState = await engine?.dialogState {
                    owner.state.withLock { $0.statesSeen.append(dialogState) }
                }
            }
            return try await inner.send(request)
        }
    }
}
