import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@Suite(.timeLimit(.minutes(2))) struct EngineSmokeTests {
    // covers: P5, O1
    @Test func preparedAssistantOpensAndAnswersAMessage() async {
        let h = await EngineHarness()
        await h.openReady()
        let reply = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))
        let sent = await h.engine.sendMessage("Помогите выбрать подарок")
        guard case .success(let messageId) = sent else {
            Issue.record("send refused: \(sent)")
            return
        }
        await h.transport.waitForRequests(3)
        h.transport.complete(reply, with: Fixtures.reply(to: messageId))
        await h.engine.waitForReply()
        let snapshot = await h.engine.chatSnapshot
        #expect(snapshot.messages.count == 2)
        #expect(snapshot.messages.last?.productBlock?.products.first?.name == "Термокружка")
        await h.verify()
    }
}
