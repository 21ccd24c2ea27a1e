import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@Suite(.timeLimit(.minutes(2))) struct ProductActionEngineTests {
    private typealias F = ProductFixtures

    // covers: PR9
    @Test func fastDoubleTapCallsTheHandlerOnceAndTheSecondTapIsDuplicate() async throws {
        let h = await EngineHarness()
        await h.openWithReply(
            F.reply(items: [F.item(itemId: "p-1"), F.item(itemId: "p-2", clicks: [], impressions: [])]))
        let products = h.shownProducts
        try #require(products.count == 2)
        h.transport.expect(.get(F.clickA), .respond(F.ok))
        h.transport.expect(.get(F.clickB), .respond(F.ok))
        h.expectEvents(1)  // chat_dialog_close
        h.presenter.hold(.dismiss)
        let engine = h.engine
        try #require(products.count > 1)
        let first = Task { await engine.performAssistantProductAction(product: products[0].ref, action: .tap) }
        await h.presenter.waitUntilHolding(.dismiss)
        #expect(await engine.performAssistantProductAction(product: products[0].ref, action: .tap) == .duplicate)
        #expect(await engine.performAssistantProductAction(product: products[1].ref, action: .tap) == .duplicate)
        #expect(h.handler.actions.isEmpty)
        h.presenter.release(.dismiss)
        #expect(await first.valueUnlessCancelled == .accepted)
        #expect(h.handler.actions == [.openProduct(products[0])])
        #expect(h.presenter.count(.dismiss) == 1)
        await h.verify()
    }

    // covers: PR10, PR4
    @Test func acceptedTapQueuesClickClosesTheChatThenCallsTheHandlerOnce() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        let product = try #require(h.shownProducts.first)
        h.transport.expect(.get(F.clickA), .respond(F.ok))
        h.transport.expect(.get(F.clickB), .respond(F.ok))
        h.expectEvents(1)  // chat_dialog_close
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .accepted)
        #expect(h.order.entries == [.dismissStarted, .dismissEnded, .handedOver("open_product")])
        #expect(h.handler.actions == [.openProduct(product)])
        #expect(await h.engine.isAssistantOpen == false)
        await h.engine.flushTracking()
        // The two clicks go at once (B13), so the log has them in the order they ended.
        let tracked = await h.trackedURLs().map(\.name)
        #expect(tracked.first == F.replyImpression)
        #expect(tracked.dropFirst().sorted() == [F.clickA, F.clickB].sorted())
        await h.verify()
    }

    // The click is queued before the close starts: while the presenter is still dismissing
    // (held here), the click URLs are already being requested (PR10, AN8).
    // covers: PR10, AN8
    @Test func clickIsQueuedBeforeTheChatStartsClosing() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        let product = try #require(h.shownProducts.first)
        h.transport.expect(.get(F.clickA), .respond(F.ok))
        h.transport.expect(.get(F.clickB), .respond(F.ok))
        h.expectEvents(1)  // chat_dialog_close
        h.presenter.hold(.dismiss)
        let before = h.transport.requests.count
        let engine = h.engine
        let tap = Task { await engine.performAssistantProductAction(product: product.ref, action: .tap) }
        await h.presenter.waitUntilHolding(.dismiss)
        // The close cannot complete while the dismissal is held: clicks queued after it would
        // never be requested here (and the suite's time limit would fail the test).
        await h.transport.waitForRequests(before + 2)
        // The two clicks go at once (B13): they reach the transport in either order.
        let sent = h.transport.requests.dropFirst(before).map(\.url.absoluteString)
        #expect(sent.sorted() == [F.clickA, F.clickB].sorted())
        #expect(h.handler.actions.isEmpty)
        h.presenter.release(.dismiss)
        #expect(await tap.valueUnlessCancelled == .accepted)
        #expect(h.handler.actions == [.openProduct(product)])
        await h.verify()
    }

    // A ref names its reply, not a position: a retried older message whose reply lands
    // before it does not turn the card on screen stale or point it at another product (PR8).
    // covers: PR8, PR6
    @Test func refOnScreenStaysValidWhenARetriedReplyLandsBeforeIt() async throws {
        let h = await EngineHarness()
        await h.openReady()
        h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(.text(500, "")))
        h.expectEvents(2)  // send, error
        guard case .success(let failedId) = await h.engine.sendMessage("first") else {
            Issue.record("first send refused")
            return
        }
        await h.engine.waitForReply()
        await h.sendAndLand(
            F.reply(assistantMessageId: "am-2", items: [F.item(itemId: "p-2", name: "Second product")]),
            impressions: [F.replyImpression])
        let card = try #require(h.shownProducts.first)
        #expect(card.itemId == "p-2")

        h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"),
            .respond(
                F.reply(
                    assistantMessageId: "am-1", items: [F.item(itemId: "p-1", name: "First product")],
                    impressions: ["https://t.example/ri?m=am-1"])))
        h.transport.expect(.get("https://t.example/ri?m=am-1"), .respond(F.ok))
        h.expectEvents(2)  // send (attempt 2), reply
        #expect(await h.engine.retryMessage(id: failedId) == .success(failedId))
        await h.engine.waitForReply()
        let messages = try #require(h.presenter.latest?.messages)
        try #require(messages.count == 4)
        try #require(messages.count > 2)
        #expect(messages.map(\.id) == [failedId, "am-1", messages[2].id, "am-2"])

        // The card still names the second reply's product, for impressions and taps.
        h.transport.expect(.get(F.impression), .respond(F.ok))
        #expect(
            await h.engine.performAssistantProductAction(product: card.ref, action: .visibleImpression) == .accepted)
        h.transport.expect(.get(F.clickA), .respond(F.ok))
        h.transport.expect(.get(F.clickB), .respond(F.ok))
        h.expectEvents(1)  // chat_dialog_close
        #expect(await h.engine.performAssistantProductAction(product: card.ref, action: .tap) == .accepted)
        #expect(h.handler.actions.map(\.name) == ["open_product"])
        guard case .openProduct(let opened)? = h.handler.actions.first else { return }
        #expect(opened.itemId == "p-2")
        #expect(opened.name == "Second product")
        await h.verify()
    }

    // covers: PR1, PR10
    @Test func productWithSkuButNoUrlOpens() async throws {
        let h = await EngineHarness()
        await h.openWithReply(F.reply(items: [F.item(sku: "SKU-9", url: nil, clicks: [], impressions: [])]))
        let product = try #require(h.shownProducts.first)
        #expect(product.canOpen)
        #expect(product.url == nil)
        h.expectEvents(1)  // chat_dialog_close
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .accepted)
        #expect(h.handler.actions == [.openProduct(product)])
        await h.verify()
    }

    // covers: PR1, PR7
    @Test func productWithNeitherSkuNorUrlIsShownButNotActionable() async throws {
        let h = await EngineHarness()
        await h.openWithReply(F.reply(items: [F.item(sku: nil, url: nil)]))
        let product = try #require(h.shownProducts.first)
        #expect(!product.canOpen)
        #expect(product.name == "Thermo mug")
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .notActionable)
        #expect(h.handler.actions.isEmpty)
        #expect(h.presenter.count(.dismiss) == 0)
        #expect(await h.engine.isAssistantOpen)
        // It is shown, so its impression still counts.
        h.transport.expect(.get(F.impression), .respond(F.ok))
        #expect(
            await h.engine.performAssistantProductAction(product: product.ref, action: .visibleImpression) == .accepted)
        await h.verify()
    }

    // covers: PR8
    @Test func refFromBeforeNewChatIsStaleAndSendsNothing() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        let product = try #require(h.shownProducts.first)
        h.expectEvents(1)  // chat_dialog_end
        await h.engine.startNewChat()
        await h.engine.flushTracking()
        let requests = h.transport.requests.count
        #expect(
            await h.engine.performAssistantProductAction(product: product.ref, action: .visibleImpression)
                == .staleReference)
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .staleReference)
        await h.engine.flushTracking()
        #expect(h.transport.requests.count == requests)
        #expect(h.handler.actions.isEmpty)
        #expect(h.presenter.count(.dismiss) == 0)
        await h.verify()
    }

    // covers: PR8
    @Test func refFromBeforeACloseIsStaleEvenAfterReopening() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        let product = try #require(h.shownProducts.first)
        h.expectEvents(1)  // chat_dialog_close
        await h.engine.closeAssistant()
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .staleReference)
        #expect(
            await h.engine.performAssistantProductAction(product: product.ref, action: .visibleImpression)
                == .staleReference)
        h.expectEvents(1)  // chat_dialog_open
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        await h.engine.flushTracking()
        let requests = h.transport.requests.count
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .staleReference)
        #expect(
            await h.engine.performAssistantProductAction(product: product.ref, action: .visibleImpression)
                == .staleReference)
        await h.engine.flushTracking()
        #expect(h.transport.requests.count == requests)
        #expect(h.handler.actions.isEmpty)
        #expect(h.presenter.count(.dismiss) == 1)
        await h.verify()
    }

    // covers: PR8
    @Test func refFromBeforeAnIdentityChangeIsStaleAndSendsNothing() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        let product = try #require(h.shownProducts.first)
        h.expectEvents(2)  // chat_dialog_end, chat_dialog_close
        await h.engine.setUser(userId: "user-B")
        await h.engine.flushTracking()
        let requests = h.transport.requests.count
        #expect(await h.engine.performAssistantProductAction(product: product.ref, action: .tap) == .staleReference)
        #expect(
            await h.engine.performAssistantProductAction(product: product.ref, action: .visibleImpression)
                == .staleReference)
        await h.engine.flushTracking()
        #expect(h.transport.requests.count == requests)
        #expect(h.handler.actions.isEmpty)
        await h.verify()
    }

    // covers: PR6
    @Test func visibleImpressionIsAcceptedOncePerOpeningAndAgainAfterReopen() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        let first = try #require(h.shownProducts.first)
        h.transport.expect(.get(F.impression), .respond(F.ok))
        #expect(
            await h.engine.performAssistantProductAction(product: first.ref, action: .visibleImpression) == .accepted)
        // Redraws hand the same ref back.
        let redrawn = try #require(await h.engine.chatSnapshot.messages.last?.productBlock?.products.first)
        #expect(redrawn.ref == first.ref)
        #expect(
            await h.engine.performAssistantProductAction(product: redrawn.ref, action: .visibleImpression) == .duplicate
        )
        #expect(
            await h.engine.performAssistantProductAction(product: first.ref, action: .visibleImpression) == .duplicate)

        h.expectEvents(2)  // chat_dialog_close, chat_dialog_open
        await h.engine.closeAssistant()
        #expect(await h.engine.openAssistant(presenter: h.presenter) == .opened)
        let reopened = try #require(h.shownProducts.first)
        #expect(reopened.ref != first.ref)
        h.transport.expect(.get(F.impression), .respond(F.ok))
        #expect(
            await h.engine.performAssistantProductAction(product: reopened.ref, action: .visibleImpression) == .accepted
        )
        #expect(
            await h.engine.performAssistantProductAction(product: reopened.ref, action: .visibleImpression)
                == .duplicate)
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression, F.impression, F.impression])
        await h.verify()
    }

    // covers: PR2, PR3
    @Test func builderReceivesTheWholeBlockAndTheLayout() async throws {
        let h = await EngineHarness()
        let builder = RecordingProductBlockBuilder(height: 7)
        await h.engine.setAssistantProductBlockBuilder(builder)
        await h.openWithReply(F.reply(items: [F.item(itemId: "p-1"), F.item(itemId: "p-2", sku: nil, url: nil)]))
        let block = try #require(h.presenter.latest?.messages.last?.productBlock)
        #expect(block.title == "Gifts under 3000")
        #expect(block.products.map(\.itemId) == ["p-1", "p-2"])
        let layout = AssistantProductLayout(availableWidth: 64, isInteractionEnabled: false)
        let rendering = try #require(await h.engine.renderProductBlock(block, layout: layout))
        #expect(rendering.height == 7)
        try #require(builder.received.count == 1)
        #expect(builder.received[0].block == block)
        #expect(builder.received[0].layout == layout)
        await h.verify()
    }

    // covers: PR3
    @Test func builderReturningZeroOrUnboundedHeightIsRejected() async throws {
        let collector = LogCollector()
        let h = await EngineHarness(logger: collector.makeLogger())
        let block = AssistantProductBlock(title: "t", products: [])
        let layout = AssistantProductLayout(availableWidth: 40, isInteractionEnabled: true)
        for height in [0, -1, 1_000_000, Int.max] {
            await h.engine.setAssistantProductBlockBuilder(RecordingProductBlockBuilder(height: height))
            #expect(await h.engine.renderProductBlock(block, layout: layout) == nil, "height \(height)")
        }
        #expect(collector.messages.filter { $0.contains("invalid height") }.count == 4)
        await h.engine.setAssistantProductBlockBuilder(RecordingProductBlockBuilder(height: 3))
        #expect(await h.engine.renderProductBlock(block, layout: layout)?.height == 3)
        await h.verify()
    }

    // covers: PR2, PR3
    @Test func emptyProductBlockIsAnEmptyBlockWithAFiniteHeight() async throws {
        let h = await EngineHarness()
        await h.openWithReply(F.reply(items: []))
        let block = try #require(h.presenter.latest?.messages.last?.productBlock)
        #expect(block.products.isEmpty)
        #expect(block.title == "Gifts under 3000")
        let rendering = try #require(
            await h.engine.renderProductBlock(
                block, layout: AssistantProductLayout(availableWidth: 80, isInteractionEnabled: true)))
        #expect(rendering.height > 0)
        // A reply without products has no block at all.
        await h.sendAndLand(F.reply(assistantMessageId: "am-18", items: nil, impressions: []), impressions: [])
        #expect(h.presenter.latest?.messages.last?.productBlock == nil)
        await h.verify()
    }

    // covers: AC5, AC2, AC6
    @Test func supportButtonClosesTheChatThenCallsTheHandlerWithTheRawPayload() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        h.expectEvents(2)  // chat_action, chat_dialog_close
        #expect(await h.engine.performReplyButton(assistantMessageId: "am-17", index: 0) == .accepted)
        #expect(h.order.entries == [.dismissStarted, .dismissEnded, .handedOver("open_support_chat")])
        let payload: [String: JSONValue] = [
            "type": "button", "value": "Write to support", "action": "open_support_chat", "topic": "gifts",
            "priority": 2,
        ]
        #expect(h.handler.actions == [.openSupportChat(payload: payload)])
        await h.engine.flushTracking()
        // No product tracking: the only URL ever requested is the reply's own impression.
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression])
        await h.verify()
    }

    // covers: AC5, AC3, AC6
    @Test func urlButtonClosesTheChatThenCallsTheHandlerOnce() async throws {
        let h = await EngineHarness()
        await h.openWithReply()
        h.expectEvents(2)  // chat_action, chat_dialog_close
        #expect(await h.engine.performReplyButton(assistantMessageId: "am-17", index: 1) == .accepted)
        #expect(h.order.entries == [.dismissStarted, .dismissEnded, .handedOver("follow_url")])
        #expect(h.handler.actions == [.followUrl(URL(string: "https://shop.example/delivery")!)])
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression])
        await h.verify()
    }

    // covers: AC5, AC2, AC3, AC6
    @Test func customButtonClosesTheChatThenCallsTheHandlerOnce() async throws {
        let h = await EngineHarness()
        await h.openWithReply(F.reply(buttons: [F.customButton]))
        h.expectEvents(2)  // chat_action, chat_dialog_close
        #expect(await h.engine.performReplyButton(assistantMessageId: "am-17", index: 0) == .accepted)
        #expect(h.order.entries == [.dismissStarted, .dismissEnded, .handedOver("compare_products")])
        let payload: [String: JSONValue] = [
            "type": "button", "value": "Compare", "action": "compare_products", "items": ["p-1", "p-2"],
        ]
        #expect(h.handler.actions == [.custom(type: "compare_products", payload: payload)])
        await h.engine.flushTracking()
        #expect(await h.trackedURLs().map(\.name) == [F.replyImpression])
        await h.verify()
    }

    // covers: AC3
    @Test func followUrlWithoutHttpUrlIsNotOffered() async throws {
        let collector = LogCollector()
        let h = await EngineHarness(logger: collector.makeLogger(level: .info))
        let buttons: [[String: Any]] = [
            ["type": "button", "value": "FTP", "action": "follow_url", "url": "ftp://shop.example/terms"],
            ["type": "button", "value": "No URL", "action": "follow_url"],
            F.supportButton,
        ]
        await h.openWithReply(F.reply(buttons: buttons))
        let message = try #require(h.presenter.latest?.messages.last)
        #expect(message.buttons.map(\.title) == ["Write to support"])
        #expect(collector.messages.filter { $0.contains("not offered") }.count == 2)
        #expect(collector.errors.isEmpty, "a button not offered is handled: a note, not an error")
        await h.verify()
    }

    // covers: AC4
    @Test func buttonTheHandlerCannotHandleIsDisabledAndLoggedAndTheRestIsUnaffected() async throws {
        let collector = LogCollector()
        let h = await EngineHarness(refuse: ["follow_url"], logger: collector.makeLogger(level: .info))
        await h.openWithReply()
        let message = try #require(h.presenter.latest?.messages.last)
        #expect(message.text == F.replyText)
        #expect(message.productBlock?.products.count == 1)
        #expect(message.buttons.map(\.title) == ["Write to support", "Delivery terms"])
        #expect(message.buttons.map(\.isEnabled) == [true, false])
        #expect(collector.messages.contains { $0.contains("cannot handle follow_url") })
        #expect(collector.errors.isEmpty, "a button not offered is handled: a note, not an error")
        // Pressing it anyway does nothing.
        #expect(await h.engine.performReplyButton(assistantMessageId: "am-17", index: 1) == .notActionable)
        #expect(await h.engine.isAssistantOpen)
        #expect(h.handler.actions.isEmpty)
        // The other button and the products still work.
        h.expectEvents(2)  // chat_action, chat_dialog_close
        #expect(await h.engine.performReplyButton(assistantMessageId: "am-17", index: 0) == .accepted)
        #expect(h.handler.actions.map(\.name) == ["open_support_chat"])
        await h.verify()
    }
}
