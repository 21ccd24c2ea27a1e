import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The seed's typed events on the wire (B10): a golden `/event` `data` item for every type,
/// with the `type`/`name` pair and the field names of the vendor SDKs' encoders — iOS 1.0.4
/// `models/TriggerEvent.swift` (`encode(to:)`), flutter `trigger_event.g.dart`
/// (`_$…EventToJson`) and Android `TriggerEvent.kt` (kotlinx `@Serializable`), which agree on
/// every pair and name. Optional fields without a value are left out, as iOS's
/// `encodeIfPresent` does (flutter and Android send them as `null`).
@Suite(.timeLimit(.minutes(2))) struct TypedEventWireConformanceTests {
    /// A feed SKU a careless client would change: mixed case, spaces at the ends, a decomposed
    /// "Ä" (A + U+0308) (B10: feed-derived values byte for byte).
    static let trickySKU = " Sku-A\u{308}bC 12 "
    /// The harness's wall clock when its manual clock reads zero (`EngineTestBed.wallClockStart`):
    /// every event these tests raise is stamped with it (DL6), so each golden item pins it.
    static let at = "2026-12-06T10:00:00.000Z"

    /// The `data` of the one `/event` request `events` make, and the request's text.
    private func sent(_ events: [any TriggerEvent]) async -> (data: [NSDictionary], text: String, body: NSDictionary) {
        let h = await EngineHarness(storedUID: "u-8f3c")
        let exchange = h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        await h.engine.triggerEvent(events: events, pageContext: Fixtures.productPage)
        await h.verify()
        let request = h.transport.request(for: exchange)
        let body = Peer.golden(request)
        return (
            (body["data"] as? [NSDictionary]) ?? [], String(decoding: request?.body ?? Data(), as: UTF8.self), body
        )
    }

    // Mirrors: iOS AddToCartEvent.encode (value, productId, quantity, currency?, cart?),
    // flutter _$AddToCartEventToJson, Android AddToCartEvent; CartItem {productId, quantity,
    // itemPrice} in all three.
    // covers: B10, DL6
    @Test func addToCartIsTheSDKsShapeWithItsOptionalFieldsLeftOut() async {
        let (data, text, _) = await sent([
            AddToCartEvent(value: 1990, productId: "sku-123", quantity: 1, currency: "RUB"),
            AddToCartEvent(
                value: 3981, productId: Self.trickySKU, quantity: 2,
                cart: [CartItem(productId: Self.trickySKU, quantity: 2, itemPrice: 1990.5)]),
        ])
        #expect(
            data == [
                [
                    "type": "add-to-cart-v1", "name": "Add to Cart", "value": 1990, "productId": "sku-123",
                    "quantity": 1, "currency": "RUB", "eventTime": Self.at,
                ],
                [
                    "type": "add-to-cart-v1", "name": "Add to Cart", "value": 3981, "productId": Self.trickySKU,
                    "quantity": 2, "cart": [["productId": Self.trickySKU, "quantity": 2, "itemPrice": 1990.5]],
                    "eventTime": Self.at,
                ],
            ])
        // The wire.md example, byte for byte: numbers as JSON numbers, no `.0`, no `null`s, and
        // the moment of the call in UTC with milliseconds (DL6).
        #expect(
            text.contains(
                #"{"currency":"RUB","eventTime":"2026-12-06T10:00:00.000Z","name":"Add to Cart","productId":"sku-123","quantity":1,"type":"add-to-cart-v1","value":1990}"#
            ))
        #expect(!text.contains("null"))
        let skus = data.compactMap { $0["productId"] as? String }.map { Array($0.utf8) }
        #expect(skus.last == Array(Self.trickySKU.utf8), "the feed's SKU byte for byte")
        #expect(text.contains(#""itemPrice":1990.5"#))
    }

    // Mirrors: iOS PurchaseEvent.encode (uniqueTransactionId, value, cart, currency?), flutter
    // _$PurchaseEventToJson, Android PurchaseEvent. The whole request is pinned: the common
    // envelope with the events as `data`.
    // covers: B10, B5, DL6
    @Test func purchaseIsTheSDKsShapeInTheCommonEnvelope() async {
        let (_, text, body) = await sent([
            PurchaseEvent(
                uniqueTransactionId: "ORDER-1001", value: 3600.09,
                cart: [
                    CartItem(productId: "sku-123", quantity: 1, itemPrice: 1990),
                    CartItem(productId: "sku-555", quantity: 1, itemPrice: 1590.10),
                    CartItem(productId: "sku-777", quantity: 1, itemPrice: 19.99),
                ], currency: "RUB")
        ])
        let expected: NSDictionary = [
            "sec": Fixtures.section, "device": Peer.device, "user": ["uid": "u-8f3c"], "ctx": Peer.productContext,
            "options": Peer.options,
            "data": [
                [
                    "type": "purchase-v1", "name": "Purchase", "uniqueTransactionId": "ORDER-1001", "value": 3600.09,
                    "currency": "RUB",
                    "cart": [
                        ["productId": "sku-123", "quantity": 1, "itemPrice": 1990],
                        ["productId": "sku-555", "quantity": 1, "itemPrice": 1590.1],
                        ["productId": "sku-777", "quantity": 1, "itemPrice": 19.99],
                    ],
                    "eventTime": Self.at,
                ]
            ],
        ]
        #expect(body == expected)
        // Decimal-exact: the amounts as written, not their binary neighbours (19.989999999999995).
        #expect(text.contains(#""value":3600.09}"#))
        #expect(text.contains(#""itemPrice":1590.1,"#))
        #expect(text.contains(#""itemPrice":19.99,"#))
    }

    // Mirrors: iOS RemoveFromCartEvent / SyncCartEvent / AddToWishlistEvent, flutter
    // _$RemoveFromCartEventToJson, _$SyncCartEventToJson ("Sync cart", lower-case c, in all
    // three), _$AddToWishlistEventToJson; Android likewise.
    // covers: B10, DL6
    @Test func removeSyncAndWishlistAreTheSDKsShapes() async {
        let (data, _, _) = await sent([
            RemoveFromCartEvent(value: 795, productId: "sku-555", quantity: 1, currency: "RUB"),
            SyncCartEvent(
                value: 1990, currency: "RUB", cart: [CartItem(productId: "sku-123", quantity: 1, itemPrice: 1990)]),
            SyncCartEvent(value: 0, cart: []),
            AddToWishlistEvent(value: 1990, productId: "sku-123"),
        ])
        #expect(
            data == [
                [
                    "type": "remove-from-cart-v1", "name": "Remove from Cart", "value": 795, "productId": "sku-555",
                    "quantity": 1, "currency": "RUB", "eventTime": Self.at,
                ],
                [
                    "type": "sync-cart-v1", "name": "Sync cart", "value": 1990, "currency": "RUB",
                    "cart": [["productId": "sku-123", "quantity": 1, "itemPrice": 1990]], "eventTime": Self.at,
                ],
                ["type": "sync-cart-v1", "name": "Sync cart", "value": 0, "cart": [] as [Any], "eventTime": Self.at],
                [
                    "type": "add-to-wishlist-v1", "name": "Add to Wishlist", "value": 1990, "productId": "sku-123",
                    "eventTime": Self.at,
                ],
            ])
    }

    // Mirrors: iOS SignUpEvent / LoginEvent (hashedEmail?, cuid?, cuidType?, each
    // `encodeIfPresent`), flutter _$SignUpEventToJson ("signup-v1", "Signup"),
    // _$LoginEventToJson, Android; and CustomEvent (customProps? — string values only).
    // covers: B10, DL6
    @Test func signUpLoginAndCustomAreTheSDKsShapes() async {
        let (data, _, _) = await sent([
            SignUpEvent(hashedEmail: "e3b0c442", cuid: "9f86d081", cuidType: "phone_hash"),
            LoginEvent(cuid: "9f86d081", cuidType: "phone_hash"),
            LoginEvent(),
            CustomEvent(
                type: "survey-completed-v1", name: "Survey Completed", customProps: ["score": "9", "variant": "A"]),
        ])
        #expect(
            data == [
                [
                    "type": "signup-v1", "name": "Signup", "hashedEmail": "e3b0c442", "cuid": "9f86d081",
                    "cuidType": "phone_hash", "eventTime": Self.at,
                ],
                [
                    "type": "login-v1", "name": "Login", "cuid": "9f86d081", "cuidType": "phone_hash",
                    "eventTime": Self.at,
                ],
                ["type": "login-v1", "name": "Login", "eventTime": Self.at],
                [
                    "type": "survey-completed-v1", "name": "Survey Completed",
                    "customProps": ["score": "9", "variant": "A"], "eventTime": Self.at,
                ],
            ])
    }

    // An event the seed's rules refuse is never on the wire, half-made or otherwise; the
    // engine's logger says why, and the call's other events go.
    // Mirrors flutter's newest trigger_event_json_test: every typed event carries the app's
    // `customProps` beside its typed fields, and `CustomEvent` carries `cuid`, `cuidType` and a
    // `cart`; without them the items are as before.
    // covers: B10
    @Test func everyTypedEventCarriesCustomPropsAndCustomEventItsIdAndCart() async {
        let props = ["list": "search", "payment_type": "card"]
        let events: [any TriggerEvent] = [
            AddToCartEvent(value: 1, productId: "p", quantity: 1, customProps: props),
            RemoveFromCartEvent(value: 1, productId: "p", quantity: 1, customProps: props),
            SyncCartEvent(value: 1, customProps: props),
            PurchaseEvent(
                uniqueTransactionId: "t", value: 1, cart: [CartItem(productId: "p", quantity: 1, itemPrice: 1)],
                customProps: props),
            AddToWishlistEvent(value: 1, productId: "p", customProps: props),
            SignUpEvent(cuid: "c", customProps: props),
            LoginEvent(cuid: "c", customProps: props),
            CustomEvent(type: "x", name: "X", customProps: props),
        ]
        let (data, _, _) = await sent(events)
        #expect(data.count == events.count)
        for (item, event) in zip(data, events) {
            #expect(item["customProps"] as? [String: String] == props, "\(event.type)")
            #expect(item["type"] as? String == event.type)
        }
        let (loyalty, text, _) = await sent([
            CustomEvent(
                type: "loyalty-v1", name: "Loyalty", cuid: "user@example.com", cuidType: "email",
                cart: [CartItem(productId: "sku-1", quantity: 2, itemPrice: 10.5)], customProps: props),
            CustomEvent(type: "x", name: "X"),
        ])
        #expect(
            loyalty == [
                [
                    "type": "loyalty-v1", "name": "Loyalty", "cuid": "user@example.com", "cuidType": "email",
                    "cart": [["productId": "sku-1", "quantity": 2, "itemPrice": 10.5]], "customProps": props,
                    "eventTime": Self.at,
                ],
                ["type": "x", "name": "X", "eventTime": Self.at],
            ])
        #expect(
            text.contains(
                #"{"cart":[{"itemPrice":10.5,"productId":"sku-1","quantity":2}],"cuid":"user@example.com","cuidType":"email","customProps":{"list":"search","payment_type":"card"},"eventTime":"2026-12-06T10:00:00.000Z","name":"Loyalty","type":"loyalty-v1"}"#
            ), "\(text)")
    }

    // covers: B10, DL6
    @Test func aRefusedEventIsLeftOutOfTheRequestAndLogged() async {
        let h = await EngineHarness(storedUID: "u-8f3c")
        let exchange = h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        await h.engine.triggerEvent(
            events: [
                PurchaseEvent(uniqueTransactionId: "ORDER-1", value: 10, cart: []),
                AddToCartEvent(value: 1990, productId: "sku-123", quantity: 1),
            ], pageContext: Fixtures.productPage)
        await h.settle()  // kept when the call returned (DL5); sent by now
        let data = Peer.golden(h.transport.request(for: exchange))["data"] as? [[String: Any]]
        #expect(data?.map { $0["type"] as? String } == ["add-to-cart-v1"])
        #expect(h.logs.errors == ["triggerEvent: purchase-v1 refused, not sent: cart is empty"])

        // Nothing left to send: no request at all.
        await h.engine.triggerEvent(
            events: [AddToCartEvent(value: 1990, productId: "", quantity: 1)], pageContext: Fixtures.productPage)
        await h.verify()
        #expect(h.transport.requests.count == 1)
    }

    // MARK: - eventTime (DL6)

    // A first launch: the event waits at the session gate (B8) while the wall clock moves on
    // 3 s; the request that finally leaves carries the moment of the call, not of the send.
    // covers: DL6, B8
    @Test func eventTimeIsTheMomentOfTheCallNotOfTheSend() async throws {
        let h = await EngineHarness(storedUID: nil)
        let gate = h.transport.expect(.request(.post, pathSuffix: "/choose"), .deferred)
        let event = h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        h.bed.start { await $0.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage) != nil }
        try await h.bed.runUntilIdle()
        #expect(h.transport.request(for: gate) != nil, "the first request holds the gate")
        h.bed.start { engine -> Bool in
            await engine.triggerEvent(
                events: [AddToCartEvent(value: 1990, productId: "sku-123", quantity: 1)], pageContext: Fixtures.homePage
            )
            return true
        }
        try await h.bed.runUntilIdle()
        #expect(h.transport.request(for: event) == nil, "the event waits at the gate")
        h.clock.advance(by: .seconds(3))
        try await h.bed.runUntilIdle()
        h.transport.complete(gate, with: Peer.choose([("banner", "{}")], uid: "server-uid"))
        try await h.bed.runUntilIdle()
        let request = try #require(h.transport.request(for: event), "sent once the gate opened")
        #expect(h.clock.now.offset == .seconds(3), "at 3 s on the engine's clock")
        let data = Peer.golden(request)["data"] as? [NSDictionary]
        #expect(data?.map { $0["eventTime"] as? String } == [Self.at], "the moment of the call")
        #expect(Self.user(request)?["uid"] == "server-uid", "sent with the gate's answer (B8)")
        await h.verify()
    }

    // An event given its own time keeps it, to the millisecond and in UTC, beside one stamped
    // with the moment of the call.
    // covers: DL6, B10
    @Test func anExplicitEventTimeIsKept() async throws {
        let given = Date(timeIntervalSince1970: 1_700_000_000.125)  // 2023-11-14T22:13:20.125Z
        let (data, text, _) = await sent([
            PurchaseEvent(
                uniqueTransactionId: "ORDER-1001", value: 1990,
                cart: [CartItem(productId: "sku-123", quantity: 1, itemPrice: 1990)], currency: "RUB",
                eventTime: given),
            CustomEvent(type: "ping", name: "Ping", eventTime: given.addingTimeInterval(-86_400)),
            LoginEvent(),
        ])
        #expect(
            data.map { $0["eventTime"] as? String } == [
                "2023-11-14T22:13:20.125Z", "2023-11-13T22:13:20.125Z", Self.at,
            ])
        #expect(text.contains(#""eventTime":"2023-11-14T22:13:20.125Z""#))
    }

    private static func user(_ request: HTTPRequest?) -> [String: String]? {
        Fixtures.body(request)["user"] as? [String: String]
    }
}
