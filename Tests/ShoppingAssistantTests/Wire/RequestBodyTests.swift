import Foundation
import Testing

@testable import ShoppingAssistant

/// Every request body, byte for byte, as wire.md shapes it: keys in ascending UTF-8 order,
/// optional fields left out (never `null`), numbers as JSON numbers, strings escaped only where
/// JSON requires it (`/` and non-ASCII travel as they are). Each body has one description (its
/// `JSONBodyWritable` conformance); these bytes are what a retry repeats (D6), what the
/// delivery store keeps (DL2) and what the recorded transcripts compare.
@Suite struct RequestBodyTests {
    static func text(_ body: Data) -> String { String(decoding: body, as: UTF8.self) }

    /// The dialog's page as sent: upper-case type, the SDK attributes added (B4, D14).
    static let page = PageContext(type: .product, data: ["SKU-123"], location: "app://product/SKU-123")
        .withSDKAttributes(appVersion: "1.0", sdkVersion: "0.9.0", platform: "linux")
    static let pageBytes =
        #"{"attributes":{"app_platform":"linux","app_version":"1.0","sdk_version":"0.9.0"},"#
        + #""data":["SKU-123"],"location":"app://product/SKU-123","type":"PRODUCT"}"#

    static let device = GravityDevice(userAgent: "App/1.0 (Linux)")
    static let deviceBytes = #"{"permission":"unknown","tracking":"notSupported","ua":"App/1.0 (Linux)"}"#
    /// The iOS SDK's `Options()`, all six keys.
    static let optionsBytes =
        #"{"isBuildEngagementUrl":true,"isImplicitImpression":true,"isImplicitPageview":false,"#
        + #""isReturnAnalyticsMetadata":false,"isReturnCounter":false,"isReturnUserInfo":false}"#

    static func gravity<Payload: JSONBodyWritable & Sendable>(
        user: GravityUser = GravityUser(uid: "u-8f3c", ses: "s-1"), device: GravityDevice = device,
        type: String? = nil, data: Payload?
    ) -> String {
        text(
            WireJSON.encode(
                GravityRequest(
                    sec: "shop-1", device: device, user: user, ctx: page, options: GravityOptions(), type: type,
                    data: data)))
    }

    /// The envelope's keys around `data` and `type`, in their order.
    static func envelope(
        data: String? = nil, type: String? = nil, user: String = #"{"ses":"s-1","uid":"u-8f3c"}"#,
        device: String = deviceBytes
    ) -> String {
        #"{"ctx":"# + pageBytes + (data.map { #","data":"# + $0 } ?? "") + #","device":"# + device
            + #","options":"# + optionsBytes + #","sec":"shop-1""# + (type.map { #","type":""# + $0 + "\"" } ?? "")
            + #","user":"# + user + "}"
    }

    static let runtimeBytes =
        #"{"campaignId":"c-1","page":"# + pageBytes
        + #","selector":"shopping-assistant","tenant_id":"shop-1","uid":"u-8f3c"}"#

    static let runtime = ShoppingRuntimeContext(
        tenantId: "shop-1", uid: "u-8f3c", selector: "shopping-assistant", campaignId: "c-1", page: page)

    // MARK: - Gravity API V2

    // covers: B5
    @Test func chooseIsTheEnvelopeWithOneItemPerSelectorUnderOption() {
        let one = [
            GravitySelectorRequest(selector: "shopping-assistant", options: GravityContentSettings())
        ]
        #expect(
            Self.gravity(data: one)
                == Self.envelope(data: #"[{"option":{"skusOnly":false},"selector":"shopping-assistant"}]"#))
        let two = [
            GravitySelectorRequest(selector: "assistant-entry", options: GravityContentSettings()),
            GravitySelectorRequest(
                selector: "recommendations", options: GravityContentSettings(skusOnly: true, fields: ["name", "price"])),
        ]
        #expect(
            Self.gravity(data: two)
                == Self.envelope(
                    data: #"[{"option":{"skusOnly":false},"selector":"assistant-entry"},"#
                        + #"{"option":{"fields":["name","price"],"skusOnly":true},"selector":"recommendations"}]"#))
    }

    // covers: B3, B5, B11
    @Test func visitIsTheEnvelopeWithScreenviewAndTheUserAsKnown() {
        let none = [GravityEvent]?.none
        #expect(
            Self.gravity(user: GravityUser(), type: "screenview", data: none)
                == Self.envelope(type: "screenview", user: "{}"))
        #expect(
            Self.gravity(type: "screenview", data: none) == Self.envelope(type: "screenview"))
        // Manual mode: the app's id as `custom`, never as `uid`.
        #expect(
            Self.gravity(user: GravityUser(custom: "crm-42", ses: "crm-s-7"), type: "screenview", data: none)
                == Self.envelope(type: "screenview", user: #"{"custom":"crm-42","ses":"crm-s-7"}"#))
        // `device.id` only when the host gives one; the permission as last set.
        var device = Self.device
        device.id = "device-1"
        device.permission = NotificationPermissionStatus.granted.rawValue
        #expect(
            Self.gravity(device: device, type: "screenview", data: none)
                == Self.envelope(
                    type: "screenview",
                    device:
                        #"{"id":"device-1","permission":"granted","tracking":"notSupported","ua":"App/1.0 (Linux)"}"#))
    }

    // covers: B10, DL6
    @Test func eventCarriesEachEventWithItsFieldsInKeyOrder() {
        var custom = CustomEvent(type: "ping", name: "Ping", customProps: ["b": "2", "a": "1"]).wire
        custom.fields["eventTime"] = .text("2026-12-06T10:15:30.123Z")
        var bare = CustomEvent(type: "pong", name: "Pong").wire
        bare.fields["eventTime"] = .text("2026-12-06T10:15:30.123Z")
        #expect(
            Self.gravity(data: [custom, bare])
                == Self.envelope(
                    data: #"[{"customProps":{"a":"1","b":"2"},"eventTime":"2026-12-06T10:15:30.123Z","#
                        + #""name":"Ping","type":"ping"},"#
                        + #"{"eventTime":"2026-12-06T10:15:30.123Z","name":"Pong","type":"pong"}]"#))
    }

    /// The wire.md example of a typed event, and amounts digit for digit: no `.0`, no binary
    /// neighbour (`19.989999999999995`), trailing zeros dropped as a JSON number drops them.
    // covers: B10
    @Test func typedEventsAreTheSDKsShapesWithAmountsAsWritten() {
        let addToCart = AddToCartEvent(value: 1990, productId: "sku-123", quantity: 1, currency: "RUB").wire
        #expect(
            Self.text(WireJSON.encode(addToCart))
                == #"{"currency":"RUB","name":"Add to Cart","productId":"sku-123","quantity":1,"#
                + #""type":"add-to-cart-v1","value":1990}"#)
        let purchase = PurchaseEvent(
            uniqueTransactionId: "ORDER-1001", value: 3600.09,
            cart: [
                CartItem(productId: "sku-555", quantity: 1, itemPrice: 1590.10),
                CartItem(productId: "sku-777", quantity: 2, itemPrice: 19.99),
            ]
        ).wire
        #expect(
            Self.text(WireJSON.encode(purchase))
                == #"{"cart":[{"itemPrice":1590.1,"productId":"sku-555","quantity":1},"#
                + #"{"itemPrice":19.99,"productId":"sku-777","quantity":2}],"name":"Purchase","#
                + #""type":"purchase-v1","uniqueTransactionId":"ORDER-1001","value":3600.09}"#)
        let login = LoginEvent(cuid: "c-1").wire
        #expect(Self.text(WireJSON.encode(login)) == #"{"cuid":"c-1","name":"Login","type":"login-v1"}"#)
    }

    // covers: AN1
    @Test func aLifecycleEventIsACustomEventOfTheEngine() {
        let send = GravityEvent(
            GravityCustomEvent(
                type: LifecycleEvent.messageSend.rawValue, name: LifecycleEvent.messageSend.displayName,
                customProps: ["threadId": "t-1", "messageId": "m-1", "attempt": "1"],
                eventTime: "2026-12-06T10:00:00.000Z"))
        #expect(
            Self.text(WireJSON.encode(send))
                == #"{"customProps":{"attempt":"1","messageId":"m-1","threadId":"t-1"},"#
                + #""eventTime":"2026-12-06T10:00:00.000Z","name":"chat message send","type":"chat_message_send"}"#)
    }

    // MARK: - Shopping API

    // covers: S2
    @Test func messageIsTheWireMdShapeWithTheDialogsPage() {
        let body = ShoppingClient.messageBody(
            ShoppingMessageRequest(
                threadId: "0c1d-uuid", messageId: "5a7e-uuid", resourceId: "u-8f3c",
                text: "Помогите выбрать подарок", runtimeContext: Self.runtime))
        #expect(
            Self.text(body)
                == #"{"messageId":"5a7e-uuid","resourceId":"u-8f3c","runtimeContext":"# + Self.runtimeBytes
                + #","text":"Помогите выбрать подарок","threadId":"0c1d-uuid"}"#)
    }

    // covers: S2
    @Test func feedbackIsTheWireMdShapeWithoutAnAbsentCampaign() {
        var runtime = Self.runtime
        runtime.campaignId = nil
        let body = WireJSON.encode(
            ShoppingFeedbackRequest(
                threadId: "0c1d-uuid", messageId: "am-17", resourceId: "u-8f3c", rating: "like",
                runtimeContext: runtime))
        #expect(
            Self.text(body)
                == #"{"messageId":"am-17","rating":"like","resourceId":"u-8f3c","runtimeContext":{"page":"#
                + Self.pageBytes + #","selector":"shopping-assistant","tenant_id":"shop-1","uid":"u-8f3c"},"#
                + #""threadId":"0c1d-uuid"}"#)
    }

    // MARK: - Values inside bodies

    /// Every optional field of a page, and the host's values byte for byte (B4): `"`, `\`, a
    /// newline and a control character escaped, a slash, a decomposed "Ä" and Cyrillic as they
    /// are; dictionary keys in UTF-8 order (upper case before lower, `é` after ASCII).
    // covers: B4
    @Test func aPageWritesEveryFieldAndEscapesOnlyWhatJSONRequires() {
        let page = PageContext(
            type: .category, data: ["Mixed-Case/Cat", "A\u{308}", "say \"hi\"\\\n\u{1}"], location: "app://c?q=a&b=c",
            lng: "Ru-ru", pageNumber: -2, referrer: "", utm: ["utm_source": "News", "utm_Medium": "mail"],
            attributes: ["é": "1", "b": "2", "Z": "3"])
        #expect(
            Self.text(WireJSON.encode(page))
                == #"{"attributes":{"Z":"3","b":"2","é":"1"},"data":["Mixed-Case/Cat","A\#u{308}","#
                + #""say \"hi\"\\\n\u0001"],"lng":"Ru-ru","location":"app://c?q=a&b=c","pageNumber":-2,"#
                + #""referrer":"","type":"CATEGORY","utm":{"utm_Medium":"mail","utm_source":"News"}}"#)
    }

    /// The same request writes the same bytes, whatever order its fields were gathered in: a
    /// retry is byte-identical (D6).
    // covers: D6
    @Test func theSameRequestWritesTheSameBytes() {
        let forward = GravityEvent(
            type: "t", name: "n",
            [("value", .amount(Decimal(1999) / 100)), ("productId", .text("p")), ("quantity", .integer(2))])
        let backward = GravityEvent(
            type: "t", name: "n",
            [("quantity", .integer(2)), ("productId", .text("p")), ("value", .amount(Decimal(1999) / 100))])
        #expect(WireJSON.encode(forward) == WireJSON.encode(backward))
        let request = ShoppingMessageRequest(
            threadId: "t", messageId: "m", resourceId: "r", text: "x", runtimeContext: Self.runtime)
        #expect(ShoppingClient.messageBody(request) == ShoppingClient.messageBody(request))
    }
}
