import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The base SDK's e-commerce calls through the public API: the push-permission status on
/// every request (B11), and the engagement of a recommendation widget the host renders
/// itself (B12).
@Suite(.timeLimit(.minutes(2))) struct CommerceEngineTests {
    private static func permission(_ request: HTTPRequest?) -> String? {
        (Fixtures.body(request)["device"] as? [String: Any])?["permission"] as? String
    }

    // Mirrors: iOS DeviceUtils.getDevice (`permission: GravitySDK.instance.notificationPermissionStatus`,
    // `.unknown` until set), flutter DeviceUtils.getDevice (`permission.name`), Android Device.
    // covers: B11
    @Test func thePermissionStatusSetIsOnEveryLaterRequestTheEnginesOwnEventsIncluded() async {
        let h = await EngineHarness()
        let before = h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        #expect(Self.permission(h.transport.request(for: before)) == "unknown")

        await h.engine.setNotificationPermissionStatus(.granted)
        let visit = h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        await h.openReady()  // its /choose, and chat_dialog_open through /event
        let event = h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        await h.engine.triggerEvent(
            events: [AddToCartEvent(value: 1990, productId: "SKU-123", quantity: 1)], pageContext: Fixtures.productPage)
        await h.engine.setNotificationPermissionStatus(.denied)
        h.expectEvents(1)  // chat_dialog_close
        await h.engine.closeAssistant()
        await h.verify()

        let later = h.transport.requests.dropFirst()
        #expect(Self.permission(h.transport.request(for: visit)) == "granted")
        #expect(Self.permission(h.transport.request(for: event)) == "granted")
        #expect(
            later.filter { $0.url.path.hasSuffix("/choose") }.map(Self.permission) == ["granted"],
            "the assistant's own /choose")
        let lifecycle = later.filter { request in
            (Fixtures.body(request)["data"] as? [[String: Any]])?.first?["type"] as? String == "chat_dialog_open"
                || (Fixtures.body(request)["data"] as? [[String: Any]])?.first?["type"] as? String
                    == "chat_dialog_close"
        }
        #expect(lifecycle.map(Self.permission) == ["granted", "denied"], "lifecycle events carry it too")
    }

    // MARK: - B12

    /// A recommendation widget's `/choose` answer, shaped as the service sends one and the SDKs'
    /// `Products`/`Slot` read it.
    private static func widget(uid: String = "u-8f3c") -> HTTPResponse {
        let slot: [String: Any] = [
            "item": [
                "sku": "KIT-1001", "name": "Термокружка 450 мл", "price": 1990, "currency": "RUB",
                "url": "https://demo.example/p/KIT-1001", "custom_field": ["nested": true],
            ],
            "fallback": false, "strId": 7, "slotId": "slot-1",
            "events": [
                ["type": "visible_impression", "urls": ["https://t.example/w/vi?s=1"]],
                ["type": "click", "urls": ["https://t.example/w/c?s=1", "https://t.example/w/c?s=1"]],
            ],
        ]
        let content: [String: Any] = [
            "contentId": "ct-w", "deliveryMethod": "inline", "contentType": "products",
            "variables": [
                "onLoad": ["action": "load"], "onImpression": ["action": "impression"],
                "onVisibleImpression": ["action": "visible_impression"], "onClose": ["action": "close"],
                "elements": [["type": "text", "text": "Вам понравится"], ["type": "products-container"]],
            ],
            "products": [
                "strategyId": "popular", "fallback": false, "name": "Популярное", "slots": [slot, ["no": "item"]],
            ],
            "events": [
                ["type": "load", "urls": ["https://t.example/w/l"]],
                ["type": "impression", "urls": ["https://t.example/w/i"]],
                ["type": "visible_impression", "urls": ["https://t.example/w/v"]],
                ["type": "close", "urls": ["https://t.example/w/x"]],
            ],
        ]
        return .json(
            200,
            [
                "user": ["uid": uid, "ses": "s-1"],
                "data": [
                    [
                        "selector": "recommendations",
                        "payload": [
                            ["campaignId": "c-w", "decisionId": "d-w", "contents": [content]]
                        ],
                    ]
                ],
            ])
    }

    // Mirrors: iOS Products/Slot decoding (item, fallback, strId, slotId, events) and
    // ContentEventService/ProductEventService: the content's `variables` name its event
    // types; a slot's click and visible impression request its own URLs; GET, no key (as B7).
    // covers: B12, AN5
    @Test func aWidgetsSlotsAreDecodedAndItsEngagementsRequestTheirURLsOnce() async throws {
        let h = await EngineHarness()
        h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Self.widget()))
        h.transport.expect(.get("https://t.example/w/l"), .respond(.text(204, "")))  // load tracking (B7)
        let response = try #require(
            await h.engine.getContentBySelector(selector: "recommendations", pageContext: Fixtures.homePage))
        let campaign = try #require(response.data.first)
        let content = try #require(campaign.payload.first?.contents.first)
        let products = try #require(content.products)
        #expect(products.strategyId == "popular")
        #expect(products.name == "Популярное")
        #expect(products.slots?.count == 1, "a slot without an item is dropped")
        let slot = try #require(products.slots?.first)
        #expect(slot.item["sku"] == "KIT-1001")
        #expect(slot.item["price"] == 1990)
        #expect(slot.item["custom_field"] == ["nested": true], "the feed's own fields, as received")
        #expect(slot.strId == 7)
        #expect(slot.slotId == "slot-1")
        #expect(slot.events.map(\.type) == ["visible_impression", "click"])
        await h.engine.flushTracking()

        let impression = h.transport.expect(.get("https://t.example/w/i"), .respond(.text(204, "")))
        await h.engine.sendContentEngagement(ContentImpressionEngagement(content: content, campaign: campaign))
        h.transport.expect(.get("https://t.example/w/v"), .respond(.text(204, "")))
        await h.engine.sendContentEngagement(ContentVisibleImpressionEngagement(content: content, campaign: campaign))
        h.transport.expect(.get("https://t.example/w/vi?s=1"), .respond(.text(204, "")))
        await h.engine.sendProductEngagement(
            ProductVisibleImpressionEngagement(slot: slot, content: content, campaign: campaign))
        h.transport.expect(.get("https://t.example/w/c?s=1"), .respond(.text(204, "")))  // listed twice, asked once
        await h.engine.sendProductEngagement(ProductClickEngagement(slot: slot, content: content, campaign: campaign))
        h.transport.expect(.get("https://t.example/w/x"), .respond(.text(204, "")))
        await h.engine.sendContentEngagement(ContentCloseEngagement(content: content, campaign: campaign))
        await h.verify()
        let request = h.transport.request(for: impression)
        #expect(request?.header("Authorization") == nil)
        #expect(request?.body == nil)
        #expect(
            // First attempts run side by side: the log is in the order they ended.
            await h.engine.trackingLog.suffix(5).map(\.name).sorted() == [
                "https://t.example/w/c?s=1", "https://t.example/w/i", "https://t.example/w/v",
                "https://t.example/w/vi?s=1", "https://t.example/w/x",
            ])
        #expect(await h.engine.trackingLog.suffix(5).allSatisfy { $0.uid == "u-8f3c" }, "as the answer's user")
    }

    // A widget fetched for one user and engaged with after the user changed is not reported as
    // the new user (AN3), nor as the old one: its content is stale (as a product ref is, PR8).
    // covers: B12, AN3
    @Test func aWidgetFromBeforeAnIdentityChangeSendsNoEngagement() async throws {
        let h = await EngineHarness()
        h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Self.widget()))
        h.transport.expect(.get("https://t.example/w/l"), .respond(.text(204, "")))
        let response = try #require(
            await h.engine.getContentBySelector(selector: "recommendations", pageContext: Fixtures.homePage))
        let campaign = try #require(response.data.first)
        let content = try #require(campaign.payload.first?.contents.first)
        let slot = try #require(content.products?.slots?.first)
        await h.engine.setUser(userId: "crm-42", sessionId: "crm-s")
        await h.engine.sendContentEngagement(ContentImpressionEngagement(content: content, campaign: campaign))
        await h.engine.sendProductEngagement(ProductClickEngagement(slot: slot, content: content, campaign: campaign))
        await h.verify()  // no tracking URL was expected: requesting one fails here
        #expect(h.logs.messages.filter { $0.contains("before an identity change") }.count == 2)
    }
}
