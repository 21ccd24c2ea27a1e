import DemoStore
import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The demo store's side of the base SDK's e-commerce calls: `/event` read as strictly as
/// `ctx.type`, the recommendation widget with product slots, and the campaigns events bring.
@Suite(.timeLimit(.minutes(2))) struct DemoStoreCommerceTests {
    private static func event(_ data: [Any], device: [String: Any]? = nil) -> HTTPRequest {
        var body: [String: Any] = ["user": [:] as [String: Any], "data": data]
        if let device { body["device"] = device }
        return Wire.gravity("event", body)
    }

    private static var addToCart: [String: Any] {
        [
            "type": "add-to-cart-v1", "name": "Add to Cart", "value": 1990, "productId": "KIT-1001", "quantity": 2,
            "currency": "RUB",
        ]
    }

    /// An engine on a fresh store, with a logger that keeps its errors.
    private static func engine(_ store: DemoStore) -> (AssistantEngine, Locked<[String]>) {
        let errors = Locked<[String]>([])
        let logger = AssistantLogger(level: .error) { _, message in errors.withLock { $0.append(message) } }
        let engine = AssistantEngine(
            configuration: AssistantEngineConfiguration(apiKey: Wire.apiKey, section: "demo-section"), transport: store,
            clock: ManualClock(), logger: logger)
        return (engine, errors)
    }

    // MARK: - /event

    @Test func typedEventsAreRecordedWithTheirFieldsAndTheRequestsPermission() async {
        let store = DemoStore(clock: ManualClock())
        let response = await send(store, Self.event([Self.addToCart], device: ["ua": "t", "permission": "granted"]))
        #expect(response.status == 200)
        #expect(
            store.receivedEvents == [
                DemoGravityEvent(
                    type: "add-to-cart-v1", name: "Add to Cart", customProps: [:], uid: "demo-u-1",
                    fields: ["value": 1990, "productId": "KIT-1001", "quantity": 2, "currency": "RUB"],
                    permission: "granted")
            ])
    }

    @Test func eventsTheRealServiceWouldMisreadAreRefusedWithACodeAndNotRecorded() async {
        let cases: [(String, [String: Any], String)] = [
            (
                "an unknown type with typed fields",
                ["type": "add-to-cart", "name": "Add to Cart", "value": 1990, "productId": "KIT-1001", "quantity": 1],
                "UNKNOWN_EVENT_TYPE"
            ),
            ("a string value", Self.addToCart.merging(["value": "1990"]) { $1 }, "INVALID_EVENT_FIELD"),
            (
                "a purchase without a cart",
                ["type": "purchase-v1", "name": "Purchase", "uniqueTransactionId": "ORDER-1", "value": 10],
                "MISSING_EVENT_FIELD"
            ),
            (
                "a purchase with an empty cart",
                [
                    "type": "purchase-v1", "name": "Purchase", "uniqueTransactionId": "ORDER-1", "value": 10,
                    "cart": [] as [Any],
                ], "MISSING_EVENT_FIELD"
            ),
            ("a negative quantity", Self.addToCart.merging(["quantity": -1]) { $1 }, "INVALID_EVENT_FIELD"),
            ("a fractional quantity", Self.addToCart.merging(["quantity": 1.5]) { $1 }, "INVALID_EVENT_FIELD"),
            ("an empty productId", Self.addToCart.merging(["productId": ""]) { $1 }, "MISSING_EVENT_FIELD"),
            (
                "a field the type does not have", Self.addToCart.merging(["sku": "KIT-1001"]) { $1 },
                "INVALID_EVENT_FIELD"
            ),
            (
                "a cart item without its price",
                Self.addToCart.merging(["cart": [["productId": "KIT-1001", "quantity": 1]]]) { $1 },
                "MISSING_EVENT_FIELD"
            ),
            ("an event without a name", ["type": "chat_dialog_open"], "MISSING_EVENT_FIELD"),
            (
                "a custom event with a number property",
                ["type": "survey-completed-v1", "name": "Survey", "customProps": ["score": 9]], "INVALID_EVENT_FIELD"
            ),
        ]
        let store = DemoStore(clock: ManualClock())
        for (label, event, code) in cases {
            let response = await send(store, Self.event([event]))
            #expect(response.status == 400, "\(label)")
            #expect(Wire.errorCode(response) == code, "\(label)")
        }
        let empty = await send(store, Wire.gravity("event", ["user": [:] as [String: Any]]))
        #expect(Wire.errorCode(empty) == "INVALID_EVENTS")
        #expect(store.receivedEvents.isEmpty)
    }

    // flutter and Android send an optional field without a value as `null`: it reads as absent.
    @Test func optionalFieldsMayBeNullAsTheOtherSDKsSendThem() async {
        let store = DemoStore(clock: ManualClock())
        let flutterShaped: [String: Any] = [
            "type": "login-v1", "name": "Login", "hashedEmail": NSNull(), "cuid": "9f86d081", "cuidType": NSNull(),
        ]
        #expect(await send(store, Self.event([flutterShaped])).status == 200)
    }

    // Every event the engine encodes reads as the store's strict section reads it.
    @Test func everyEventTheEngineSendsIsAccepted() async throws {
        let store = DemoStore(clock: ManualClock())
        let (engine, errors) = Self.engine(store)
        let product = try #require(DemoCatalog.product(sku: "KIT-1001"))
        let line = try #require(product.cartItem(quantity: 2))
        await engine.triggerEvent(
            events: [
                AddToCartEvent(value: 3980, productId: "KIT-1001", quantity: 2, currency: "RUB", cart: [line]),
                RemoveFromCartEvent(value: 1990, productId: "KIT-1001", quantity: 1, currency: "RUB"),
                SyncCartEvent(
                    value: 1990, currency: "RUB", cart: [CartItem(productId: "KIT-1001", quantity: 1, itemPrice: 1990)]),
                PurchaseEvent(uniqueTransactionId: "ORDER-1", value: 3980, cart: [line], currency: "RUB"),
                AddToWishlistEvent(value: 4990, productId: "ELC-2001"),
                SignUpEvent(cuid: "9f86d081", cuidType: "phone_hash"),
                LoginEvent(hashedEmail: "e3b0c442"),
                CustomEvent(type: "survey-completed-v1", name: "Survey Completed", customProps: ["score": "9"]),
            ], pageContext: PageContext(type: .cart, data: ["KIT-1001"], location: "app://cart"))
        await engine.flushTracking()  // kept when the call returned; sent by now
        await engine.shutdown()
        #expect(errors.withLock { $0 } == [])
        #expect(
            store.receivedEvents.map(\.type) == [
                "add-to-cart-v1", "remove-from-cart-v1", "sync-cart-v1", "purchase-v1", "add-to-wishlist-v1",
                "signup-v1", "login-v1", "survey-completed-v1",
            ])
        let purchase = try #require(store.receivedEvents.first { $0.type == "purchase-v1" })
        #expect(purchase.fields["cart"] == [["productId": "KIT-1001", "quantity": 2, "itemPrice": 1990]])
        #expect(purchase.permission == "unknown")
    }

    // MARK: - Campaigns after events

    @Test func addToCartAndPurchaseAnswerWithTheirCampaigns() async {
        let store = DemoStore(clock: ManualClock())
        let purchase: [String: Any] = [
            "type": "purchase-v1", "name": "Purchase", "uniqueTransactionId": "ORDER-1", "value": 1990,
            "cart": [["productId": "KIT-1001", "quantity": 1, "itemPrice": 1990]],
        ]
        func campaigns(_ events: [Any]) async -> [[String: Any]] {
            Wire.object(await send(store, Self.event(events)))["campaigns"] as? [[String: Any]] ?? []
        }
        let afterAdd = await campaigns([Self.addToCart])
        #expect(afterAdd.map { $0["campaignId"] as? String } == ["demo-c-cart-reminder"])
        #expect(afterAdd.first?["trigger"] as? String == "add-to-cart-v1")
        #expect(
            await campaigns([Self.addToCart, purchase, Self.addToCart]).map { $0["campaignId"] as? String } == [
                "demo-c-cart-reminder", "demo-c-purchase-thanks",
            ])
        #expect(await campaigns([["type": "chat_dialog_open", "name": "chat dialog open"]]).isEmpty)
        store.updateConfiguration { $0.eventCampaigns = false }
        #expect(await campaigns([Self.addToCart]).isEmpty)
    }

    @Test func theEnginesAddToCartBringsTheCartReminderToTheCampaignHandler() async {
        let store = DemoStore(clock: ManualClock())
        // The engine's work counted, so the test can wait until nothing of it can run.
        let activity = ActivityMonitor()
        let engine = AssistantEngine(
            configuration: AssistantEngineConfiguration(apiKey: Wire.apiKey, section: "demo-section"), transport: store,
            clock: ManualClock(activity: activity), activity: activity)
        let shown = Locked<[String]>([])
        await engine.setInAppCampaignHandler { campaign in shown.withLock { $0.append(campaign.campaignId) } }
        await engine.triggerEvent(
            events: [AddToCartEvent(value: 1990, productId: "KIT-1001", quantity: 1, currency: "RUB")],
            pageContext: PageContext(type: .product, data: ["KIT-1001"], location: "app://product/KIT-1001"))
        // triggerEvent returns once the event is in the store (DL5); the answer, and the campaign
        // it brings, come with its first attempt.
        await activity.waitUntilIdle()
        #expect(shown.withLock { $0 } == ["demo-c-cart-reminder"], "the answer's campaign reaches the handler")
        await engine.shutdown()
    }

    // MARK: - The recommendation widget

    private static func widget(_ store: DemoStore, pageType: String = "HOMEPAGE", data: [String] = []) async
        -> [String: Any]
    {
        let request = Wire.gravity(
            "choose",
            [
                "user": [:] as [String: Any], "ctx": ["type": pageType, "data": data, "location": "app://p"],
                "data": [["selector": "recommendations", "option": ["skusOnly": false]]],
            ])
        let body = Wire.object(await send(store, request))
        let entry = (body["data"] as? [[String: Any]])?.first
        let variation = (entry?["payload"] as? [[String: Any]])?.first
        return (variation?["contents"] as? [[String: Any]])?.first ?? [:]
    }

    private static func slots(_ content: [String: Any]) -> [[String: Any]] {
        (content["products"] as? [String: Any])?["slots"] as? [[String: Any]] ?? []
    }

    @Test func theRecommendationSelectorAnswersAWidgetWithCatalogueSlots() async throws {
        let store = DemoStore(clock: ManualClock())
        let home = await Self.widget(store)
        let popular = Self.slots(home).compactMap { ($0["item"] as? [String: Any])?["sku"] as? String }
        #expect(popular.count == 4)
        #expect(popular.allSatisfy { DemoCatalog.product(sku: $0)?.tags.contains(.popular) == true })
        let variables = try #require(home["variables"] as? [String: Any])
        #expect((variables["onImpression"] as? [String: Any])?["action"] as? String == "impression")
        #expect(
            (home["events"] as? [[String: Any]])?.map { $0["type"] as? String } == [
                "load", "impression", "visible_impression", "close",
            ])

        let page = await Self.widget(store, pageType: "PRODUCT", data: ["KIT-1001"])
        let slots = Self.slots(page)
        let skus = slots.compactMap { ($0["item"] as? [String: Any])?["sku"] as? String }
        #expect(!skus.isEmpty)
        #expect(!skus.contains("KIT-1001"), "the page's own product is not recommended")
        #expect(skus.allSatisfy { DemoCatalog.product(sku: $0)?.category == .kitchen })
        let first = try #require(slots.first)
        let item = try #require(first["item"] as? [String: Any])
        let product = try #require(DemoCatalog.product(sku: skus[0]))
        #expect(item["price"] as? Int == product.price, "the catalogue price, a JSON number")
        #expect(item["name"] as? String == product.name)
        #expect(first["strId"] as? Int == 1)
        let events = try #require(first["events"] as? [[String: Any]])
        #expect(events.map { $0["type"] as? String } == ["visible_impression", "click"])
        #expect(
            (events.last?["urls"] as? [String])?.first?.hasPrefix("https://\(DemoStore.trackingHost)/w/c?d=") == true)
    }

    // The widget through the engine: decoded slots, and the engagement calls reach the demo's
    // tracking host.
    @Test func theEnginesWidgetEngagementReachesTheTrackingHost() async throws {
        let store = DemoStore(clock: ManualClock())
        let (engine, errors) = Self.engine(store)
        let response = try #require(
            await engine.getContentBySelector(
                selector: "recommendations", pageContext: PageContext(type: .homepage, location: "app://home")))
        let campaign = try #require(response.data.first)
        let content = try #require(campaign.payload.first?.contents.first)
        let slot = try #require(content.products?.slots?.first)
        let sku = try #require(slot.item["sku"]?.stringValue)
        await engine.sendContentEngagement(ContentImpressionEngagement(content: content, campaign: campaign))
        await engine.sendProductEngagement(ProductClickEngagement(slot: slot, content: content, campaign: campaign))
        await engine.flushTracking()
        await engine.shutdown()
        #expect(errors.withLock { $0 } == [])
        let paths = store.trackingHits.map { $0.path + "?" + ($0.query ?? "") }
        // Tracking URLs go up to four at a time: which lands first is not defined.
        #expect(paths.map { $0.prefix(5) }.sorted() == ["/w/c?", "/w/i?", "/w/l?"])
        #expect(paths.first { $0.hasPrefix("/w/c?") }?.hasSuffix("&s=\(sku)") == true)
    }

    @Test func aCatalogueProductGoesIntoACartAtItsExactPrice() throws {
        let product = try #require(DemoCatalog.product(sku: "ELC-2001"))
        #expect(product.cartItem(quantity: 3) == CartItem(productId: "ELC-2001", quantity: 3, itemPrice: 4990))
        #expect(product.eventPrice?.decimal == Decimal(4990))
        #expect(DemoCatalog.products.first { $0.sku == nil }?.cartItem(quantity: 1) == nil, "no SKU, no cart line")
        #expect(DemoCatalog.products.first { $0.price == nil }?.cartItem(quantity: 1) == nil, "no price, no cart line")
    }
}
