import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@Suite(.timeLimit(.minutes(2))) struct AnalyticsEngineTests {
    private typealias F = ProductFixtures

    private static let firstText = "Please find a gift for my grandmother"
    private static let secondText = "Something cheaper, maybe a scarf"

    /// Open, send, reply, rate, close, reopen, failed send, retry, reply button, new chat.
    private static func runLifecycleScenario(_ h: EngineHarness) async {
        await h.openWithReply(text: firstText)
        h.transport.expect(.request(.post, pathSuffix: "/v1/feedback"), .respond(F.ok))
        h.expectEvents(1)  // chat_feedback
        #expect(await h.engine.rateReply(assistantMessageId: "am-17", rating: .like) == .sent)
        h.expectEvents(2)  // chat_dialog_close, chat_dialog_open
        await h.engine.closeAssistant()
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)

        h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.errorBody(429, code: "SLOW_DOWN")))
        h.expectEvents(2)  // chat_message_send, chat_message_error
        let sent = await h.engine.sendMessage(secondText)
        await h.engine.waitForReply()
        guard case .success(let messageId) = sent else {
            Issue.record("send refused: \(sent)")
            return
        }
        h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"),
            .respond(F.reply(assistantMessageId: "am-18", text: "A warm scarf", items: [], impressions: [])))
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        #expect(await h.engine.retryMessage(id: messageId) == .success(messageId))
        await h.engine.waitForReply()

        h.expectEvents(2)  // chat_action, chat_dialog_close
        #expect(await h.engine.performReplyButton(assistantMessageId: "am-18", index: 0) == .accepted)
        h.expectEvents(1)  // chat_dialog_end
        await h.engine.startNewChat()
        await h.engine.flushTracking()
    }

    // covers: AN1
    @Test func lifecycleEventNamesAndPropertiesFollowTheWireTable() async {
        let h = await EngineHarness()
        await Self.runLifecycleScenario(h)
        let thread = "00000000-0000-4000-8000-000000000002"
        let first = "00000000-0000-4000-8000-000000000001"
        let second = "00000000-0000-4000-8000-000000000003"
        let expected: [(String, [String: String])] = [
            ("chat_dialog_open", ["selector": "shopping-assistant", "campaignId": "c-1"]),
            ("chat_message_send", ["threadId": thread, "messageId": first, "attempt": "1"]),
            (
                "chat_message_reply",
                ["threadId": thread, "messageId": first, "assistantMessageId": "am-17", "products": "1"]
            ),
            ("chat_feedback", ["threadId": thread, "assistantMessageId": "am-17", "rating": "like"]),
            ("chat_dialog_close", ["threadId": thread]),
            ("chat_dialog_open", ["threadId": thread, "selector": "shopping-assistant", "campaignId": "c-1"]),
            ("chat_message_send", ["threadId": thread, "messageId": second, "attempt": "1"]),
            ("chat_message_error", ["threadId": thread, "messageId": second, "code": "rate_limited"]),
            ("chat_message_send", ["threadId": thread, "messageId": second, "attempt": "2"]),
            (
                "chat_message_reply",
                ["threadId": thread, "messageId": second, "assistantMessageId": "am-18", "products": "0"]
            ),
            ("chat_action", ["threadId": thread, "assistantMessageId": "am-18", "action": "open_support_chat"]),
            ("chat_dialog_close", ["threadId": thread]),
            ("chat_dialog_end", ["threadId": thread, "reason": "new_chat"]),
        ]
        let sent = h.sentLifecycleEvents
        #expect(sent.map(\.type) == expected.map(\.0))
        for (event, (type, props)) in zip(sent, expected) {
            #expect(event.props == props, "\(type)")
            #expect(event.uid == "u-8f3c", "\(type)")
        }
        // One event per `/event` request, each with a human-readable name.
        for request in h.transport.requests where request.url.path.hasSuffix("/event") {
            let data = Fixtures.body(request)["data"] as? [[String: Any]] ?? []
            #expect(data.count == 1)
            #expect((data.first?["name"] as? String)?.isEmpty == false)
        }
        await h.verify()
    }

    // covers: AN2
    @Test func lifecycleEventsNeverCarryChatText() async {
        let h = await EngineHarness()
        await Self.runLifecycleScenario(h)
        let bodies = h.transport.requests.filter { $0.url.path.hasSuffix("/event") }.map {
            String(decoding: $0.body ?? Data(), as: UTF8.self)
        }
        #expect(bodies.count == 13)
        for text in [Self.firstText, Self.secondText, F.replyText, "A warm scarf", "grandmother", "scarf"] {
            for body in bodies {
                #expect(!body.contains(text), "\(text) in \(body)")
            }
        }
        await h.verify()
    }

    // No rule ID: the order in which lifecycle events leave is the engine's choice; this pins
    // the choice that keeps tracking off a message's critical path.
    @Test func messageSendEventLeavesOnlyOnceTheReplyIsPublishedAndBeforeTheReplyEvent() async throws {
        let h = await EngineHarness()
        await h.openReady()
        let message = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(2)  // chat_message_send, chat_message_reply
        let messageId = try await h.sendAccepted(Self.firstText)
        await h.engine.flushTracking()
        #expect(h.sentEventTypes == ["chat_dialog_open"], "tracking competed with the round trip")

        h.transport.expect(.get(F.replyImpression), .respond(F.ok))  // AN7: the reply is shown
        h.transport.complete(message, with: F.reply())
        await h.engine.waitForReply()
        await h.engine.flushTracking()
        #expect(h.sentEventTypes == ["chat_dialog_open", "chat_message_send", "chat_message_reply"])
        let send = try #require(h.sentLifecycleEvents.first { $0.type == "chat_message_send" })
        #expect(send.props["messageId"] == messageId)
        #expect(send.uid == "u-8f3c")
        await h.verify()
    }

    // covers: AN1, AN3
    @Test func eventQueuedUnderUserAIsSentAsUserAAfterSwitchingToUserB() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        let thread = try #require(await h.engine.currentThreadId)
        // Hold the tracker on the rating's event, so everything after it is still queued.
        let held = h.transport.expect(.request(.post, pathSuffix: "/event"), .deferred)
        h.transport.expect(.request(.post, pathSuffix: "/v1/feedback"), .respond(F.ok))
        #expect(await h.engine.rateReply(assistantMessageId: "am-17", rating: .dislike) == .sent)
        let message = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        await h.engine.sendMessage("Another question")  // chat_message_send, queued behind the held event
        h.expectEvents(3)  // chat_message_send, chat_dialog_end, chat_dialog_close
        await h.engine.setUser(userId: "user-B")
        let sentBeforeRelease = h.sentLifecycleEvents.map(\.type)
        #expect(sentBeforeRelease.filter { $0 == "chat_message_send" }.count == 1)
        #expect(!sentBeforeRelease.contains("chat_dialog_end"))
        h.transport.complete(held, with: Fixtures.eventResponse())
        // The old dialog's late reply changes nothing.
        h.transport.complete(message, with: F.reply(assistantMessageId: "am-99"))
        await h.engine.flushTracking()

        let events = h.sentLifecycleEvents
        let feedback = try #require(events.first { $0.type == "chat_feedback" })
        #expect(feedback.uid == "u-8f3c")
        let sends = events.filter { $0.type == "chat_message_send" }
        #expect(sends.count == 2)
        #expect(sends.allSatisfy { $0.uid == "u-8f3c" })
        let end = try #require(events.first { $0.type == "chat_dialog_end" })
        #expect(end.uid == "u-8f3c")
        #expect(end.props == ["threadId": thread, "reason": "identity_change"])
        #expect(!events.contains { $0.type == "chat_message_reply" && $0.props["assistantMessageId"] == "am-99" })
        // The chat closes while the old user is still current: its close is theirs too (AN3).
        let close = try #require(events.first { $0.type == "chat_dialog_close" })
        #expect(close.uid == "u-8f3c")
        #expect(close.props == ["threadId": thread])
        let records = await h.engine.trackingLog.filter { $0.kind == .event }
        #expect(records.map(\.name).contains("chat_dialog_close"))
        #expect(records.allSatisfy { $0.uid == "u-8f3c" && $0.customUserId == nil })
        await h.verify()
    }

    // covers: AN1
    @Test func assistantChangeEndsTheDialogWithItsReason() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        let thread = try #require(await h.engine.currentThreadId)
        h.expectEvents(1)  // chat_dialog_close
        await h.engine.closeAssistant()
        await h.engine.flushTracking()
        let before = h.transport.requests.count
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose(selector: "other-assistant")))
        h.expectEvents(1)  // chat_dialog_end
        let result = await h.engine.prepareAssistant(
            assistantSelector: "other-assistant", pageContext: Fixtures.homePage)
        #expect(result == .ready)
        await h.transport.waitForRequests(before + 2)
        await h.engine.flushTracking()
        let end = try #require(h.sentLifecycleEvents.last)
        #expect(end.type == "chat_dialog_end")
        #expect(end.props == ["threadId": thread, "reason": "assistant_change"])
        #expect(end.location == Fixtures.productPage.location)
        await h.verify()
    }

    // covers: AN1
    @Test func dialogEndIsSentWithTheDialogsPageNotTheCurrentOne() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        // The host moves to another page and prepares the same assistant there.
        h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose()))
        #expect(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
                == .ready)
        h.expectEvents(1)  // chat_dialog_end
        await h.engine.startNewChat()
        await h.engine.flushTracking()
        let end = try #require(h.sentLifecycleEvents.last)
        #expect(end.type == "chat_dialog_end")
        #expect(end.location == Fixtures.productPage.location)
        await h.verify()
    }

    // covers: AN5
    @Test func identicalClickUrlsInOneProductAreRequestedOnce() async throws {
        let h = await EngineHarness()
        await h.openWithReply(F.reply(items: [F.item(clicks: [F.clickA, F.clickA])]))
        let product = try #require(h.shownProducts.first)
        h.transport.expect(.get(F.clickA), .respond(F.ok))
        h.expectEvents(1)  // chat_dialog_close
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .accepted)
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression, F.clickA])
        await h.verify()
    }

    // covers: AN5
    @Test func everyValidClickUrlOfTheProductIsRequested() async throws {
        let h = await EngineHarness()
        await h.openWithReply(F.reply(items: [F.item(clicks: [F.clickA, "ftp://t.example/c", F.clickB])]))
        let product = try #require(h.shownProducts.first)
        h.transport.expect(.get(F.clickA), .respond(F.ok))
        // A rejected URL is final: recorded once, never tried again (DL1, DL3).
        h.transport.expect(.get(F.clickB), .respond(.text(404, "")))
        h.expectEvents(1)  // chat_dialog_close
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .accepted)
        await h.engine.flushTracking()
        let urls = await h.trackedURLs()
        // The two clicks are on the wire together (B13): the log has them as they ended.
        #expect(urls.first?.name == F.replyImpression)
        #expect(Set(urls.dropFirst().map(\.name)) == [F.clickA, F.clickB])
        #expect(urls.count == 3)
        #expect(urls.first { $0.name == F.clickB }?.failure != nil)
        #expect(urls.first { $0.name == F.clickA }?.failure == nil)
        await h.verify()
    }

    // covers: AN5
    @Test func productWithoutEventsStillOpensAndSendsNoTracking() async throws {
        let h = await EngineHarness()
        await h.openWithReply(F.reply(items: [F.item(clicks: nil, impressions: nil)]))
        let product = try #require(h.shownProducts.first)
        #expect(
            await h.engine.performAssistantProductAction(product: product.ref, action: .visibleImpression) == .accepted)
        h.expectEvents(1)  // chat_dialog_close
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .accepted)
        #expect(h.handler.actions == [.openProduct(product)])
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression])
        await h.verify()
    }

    // covers: AN7
    @Test func replyImpressionIsRequestedOnceWhenFirstShown() async throws {
        let h = await EngineHarness()
        await h.openWithReply()  // the reply impression is expected exactly once here
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression])
        // Later snapshots of the same reply request nothing more.
        h.transport.expect(.request(.post, pathSuffix: "/v1/feedback"), .respond(F.ok))
        h.expectEvents(3)  // chat_feedback, chat_dialog_close, chat_dialog_open
        #expect(await h.engine.rateReply(assistantMessageId: "am-17", rating: .like) == .sent)
        await h.engine.closeAssistant()
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression])
        // It does not stand in for the product's own impression.
        let product = try #require(h.shownProducts.first)
        h.transport.expect(.get(F.impression), .respond(F.ok))
        #expect(
            await h.engine.performAssistantProductAction(product: product.ref, action: .visibleImpression) == .accepted)
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression, F.impression])
        await h.verify()
    }

    // covers: AN7
    @Test func replyThatArrivedWhileClosedIsImpressedAtTheNextOpening() async {
        let h = await EngineHarness()
        await h.openReady()
        let message = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(3)  // chat_message_send, chat_dialog_close, chat_message_reply
        await h.engine.sendMessage("Please help me pick a gift")
        await h.engine.closeAssistant()
        h.transport.complete(message, with: F.reply())
        await h.engine.waitForReply()
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().isEmpty)
        h.expectEvents(1)  // chat_dialog_open
        h.transport.expect(.get(F.replyImpression), .respond(F.ok))
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression])
        // Not again at the opening after that.
        h.expectEvents(2)  // chat_dialog_close, chat_dialog_open
        await h.engine.closeAssistant()
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression])
        await h.verify()
    }

    // An impression reported while the presenter is still taking a reply's update (here from
    // the test, as a screen that draws the carousel before the update returns would) is
    // handed to delivery after the tracking held for that update — the reply's
    // `chat_message_reply` — in the order they happened: the queue, oldest first, holds the
    // event before the impression's URL. (Events and URLs then go on routes of their own, so
    // the log, which records attempts as they finish, says nothing of that order.)
    // covers: AN5, DL2
    @Test func anImpressionWhileThePresenterTakesAnUpdateIsTrackedAfterWhatTheUpdateHeld() async throws {
        let h = await EngineHarness()
        await h.openReady()
        let message = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(1)  // chat_message_send
        let replyEvent = h.transport.expect(.request(.post, pathSuffix: "/event"), .deferred)  // chat_message_reply
        h.transport.expect(.get(F.replyImpression), .respond(F.ok))
        let impression = h.transport.expect(.get(F.impression), .deferred)
        await h.engine.sendMessage("Please help me pick a gift")
        await h.engine.flushTracking()
        h.presenter.hold(.update)
        h.transport.complete(message, with: F.reply())
        #expect(await h.presenter.waitUntilHolding(.update))
        let product = try #require(h.presenter.latest?.messages.last?.productBlock?.products.first)
        #expect(
            await h.engine.performAssistantProductAction(product: product.ref, action: .visibleImpression) == .accepted)
        h.presenter.release(.update)
        await h.engine.waitForReply()
        try await h.bed.runUntilIdle()
        #expect(h.transport.request(for: replyEvent) != nil && h.transport.request(for: impression) != nil)
        let queue = await h.engine.deliveryQueue.map(\.label).filter {
            $0 == "chat_message_reply" || $0 == F.impression
        }
        #expect(queue == ["chat_message_reply", F.impression], "accepted in the order they happened")
        h.transport.complete(replyEvent, with: Fixtures.eventResponse())
        h.transport.complete(impression, with: F.ok)
        await h.engine.flushTracking()
        let tracked = await h.engine.trackingLog.map { "\($0.kind) \($0.name)" }
        #expect(tracked.contains("event chat_message_reply") && tracked.contains("url \(F.impression)"), "\(tracked)")
        await h.verify()
    }

    // covers: AN8, PR10
    @Test func acceptedClickIsDeliveredAfterCloseAndIdentityChangeWithTheOriginalUid() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        let product = try #require(h.shownProducts.first)
        // Both click URLs are still on their way after the close and the identity change.
        let clickA = h.transport.expect(.get(F.clickA), .deferred)
        let clickB = h.transport.expect(.get(F.clickB), .deferred)
        h.expectEvents(2)  // chat_dialog_close, chat_dialog_end
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .accepted)
        #expect(h.handler.actions == [.openProduct(product)])
        #expect(await h.engine.isAssistantOpen == false)
        await h.engine.setUser(userId: "user-B")
        #expect(await h.trackedURLs().filter { $0.name == F.clickA || $0.name == F.clickB }.isEmpty)
        h.transport.complete(clickA, with: F.ok)
        h.transport.complete(clickB, with: F.ok)
        await h.engine.flushTracking()
        let clicks = await h.trackedURLs().filter { $0.name == F.clickA || $0.name == F.clickB }
        #expect(Set(clicks.map(\.name)) == [F.clickA, F.clickB])
        #expect(clicks.allSatisfy { $0.uid == "u-8f3c" && $0.failure == nil })
        await h.verify()
    }
}
