import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

// A regression that loses a result makes a test wait forever; the limit turns that into a failure.
@Suite(.timeLimit(.minutes(2))) struct GravityClientTests {
    /// A page whose values a careless client would change: mixed case, spaces at the ends,
    /// a decomposed "Ä" (A + U+0308), percent escapes (B4).
    static let trickyPage = PageContext(
        type: .product, data: ["Sku-A\u{308}bC 12 ", " Mixed-Case/Cat"],
        location: "app://Product/Sku-A\u{308}bC%2012?Ref=Home ", lng: "Ru-ru", pageNumber: 2,
        referrer: "app://Home", utm: ["utm_Source": "News Letter "], attributes: ["Color": " Red "])

    private func object(_ value: Any?) -> [String: Any] { value as? [String: Any] ?? [:] }

    private func bytes(_ value: Any?) -> [UInt8]? { (value as? String).map { Array($0.utf8) } }

    // covers: B5
    @Test func chooseCarriesHeadersSectionAndSelector() async {
        let h = await EngineHarness()
        let choose = h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose()))
        _ = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        let request = h.transport.request(for: choose)
        #expect(request?.method == .post)
        #expect(request?.url.absoluteString == "https://evs-01.gravityfield.ai/v2/choose")
        #expect(request?.maximumResponseBytes == 1024 * 1024, "content answers may be large; events' are not")
        #expect(request?.header("Authorization") == "Bearer \(Fixtures.apiKey)")
        #expect(request?.header("Content-Type") == "application/json")
        let body = Fixtures.body(request)
        #expect(body["sec"] as? String == Fixtures.section)
        let text = PrepFixtures.bodyText(request)
        // As the SDKs encode ContentSettings (`fields` left out when nil), under the fixed SDKs'
        // key `option` (flutter "Options -> Option"; iOS 1.0.4 says `options`).
        #expect(text.contains(#""data":[{"option":{"skusOnly":false},"selector":"shopping-assistant"}]"#))
        let device = object(body["device"])
        let configuration = AssistantEngineConfiguration(apiKey: "k", section: "s")
        // `device.ua` describes the host app (this SDK, when the host names none); the header
        // names this SDK.
        #expect(device["ua"] as? String == sdkUserAgent)
        #expect(device["userAgent"] == nil, "the fixed SDKs' key only")
        #expect(request?.header("User-Agent") == configuration.userAgent)
        #expect(device["id"] == nil, "no device id unless the host gives one")
        #expect(device["permission"] as? String == "unknown")
        #expect(device["tracking"] as? String == "notSupported")
        await h.verify()
    }

    // covers: B5
    @Test func optionsAreTheSixBooleansWithTheSDKDefaults() async {
        let h = await EngineHarness()
        let choose = h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose()))
        _ = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        let text = PrepFixtures.bodyText(h.transport.request(for: choose))
        let options = object(Fixtures.body(h.transport.request(for: choose))["options"])
        // The iOS SDK's `Options()`: implicit impressions and engagement URLs on, the rest off.
        let defaults = [
            "isReturnCounter": false, "isReturnUserInfo": false, "isReturnAnalyticsMetadata": false,
            "isImplicitPageview": false, "isImplicitImpression": true, "isBuildEngagementUrl": true,
        ]
        #expect(Set(options.keys) == Set(defaults.keys))
        for (name, value) in defaults {
            // A JSON boolean, not 0/1 or a string.
            #expect(text.contains(#""\#(name)":\#(value)"#), "\(name)")
        }
        await h.verify()
    }

    // covers: B3
    @Test func firstLaunchSendsAnEmptyUserThenTheReturnedOne() async {
        let h = await EngineHarness(storedUID: nil)
        let first = h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose(uid: "u-8f3c", ses: "s-1")))
        let result = await h.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        #expect(result == .ready)
        let user = Fixtures.body(h.transport.request(for: first))["user"] as? [String: Any]
        #expect(user != nil)
        #expect(user?.isEmpty == true)
        #expect(PrepFixtures.bodyText(h.transport.request(for: first)).contains(#""user":{}"#))

        let visit = h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        let next = object(Fixtures.body(h.transport.request(for: visit))["user"])
        #expect(next["uid"] as? String == "u-8f3c")
        #expect(next["ses"] as? String == "s-1")
        await h.verify()
    }

    // covers: B4
    @Test func pageContextTravelsByteForByteWithTheSDKAttributes() async {
        let h = await EngineHarness()
        let choose = h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose()))
        _ = await h.engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Self.trickyPage)
        let ctx = object(Fixtures.body(h.transport.request(for: choose))["ctx"])
        let page = Self.trickyPage
        #expect(ctx["type"] as? String == "PRODUCT")
        #expect((ctx["data"] as? [String])?.map { Array($0.utf8) } == page.data.map { Array($0.utf8) })
        #expect(bytes(ctx["location"]) == Array(page.location.utf8))
        #expect(bytes(ctx["lng"]) == Array("Ru-ru".utf8))
        #expect(ctx["pageNumber"] as? Int == 2)
        #expect(bytes(ctx["referrer"]) == Array("app://Home".utf8))
        #expect(
            object(ctx["utm"]).mapValues { ($0 as? String).map { Array($0.utf8) } } == [
                "utm_Source": Array("News Letter ".utf8)
            ])
        let attributes = object(ctx["attributes"])
        #expect(bytes(attributes["Color"]) == Array(" Red ".utf8))
        #expect(attributes["app_version"] as? String == AssistantEngineConfiguration.sdkVersion)
        #expect(attributes["sdk_version"] as? String == "\(AssistantEngineConfiguration.sdkVersion)+shopping-assistant")
        #expect(attributes["app_platform"] as? String == AssistantEngineConfiguration.platform)
        #expect(attributes.count == 4)
        await h.verify()
    }

    // The host app's name and version describe it as the vendor SDKs do: `device.ua` is
    // `App/version (platform)` (iOS DeviceUtils.getUserAgent), `app_version` its version; this
    // SDK's `sdk_version` carries a build suffix no vendor release has.
    // covers: B4
    @Test func theHostAppsNameAndVersionComeFromTheConfiguration() async {
        let built = await EngineHarness(
            configuration: AssistantEngineConfiguration(
                apiKey: Fixtures.apiKey, section: Fixtures.section, appName: "Hoff", appVersion: "3.2.1-Beta"))
        let visit = built.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await built.engine.trackView(pageContext: Fixtures.homePage)
        let body = Fixtures.body(built.transport.request(for: visit))
        let ctx = object(body["ctx"])
        #expect(
            ctx["attributes"] as? [String: String] == [
                "app_version": "3.2.1-Beta",
                "sdk_version": "\(AssistantEngineConfiguration.sdkVersion)+shopping-assistant",
                "app_platform": AssistantEngineConfiguration.platform,
            ])
        #expect(
            object(body["device"])["ua"] as? String == "Hoff/3.2.1-Beta (\(AssistantEngineConfiguration.platformName))")
        #expect(built.transport.request(for: visit)?.header("User-Agent") == sdkUserAgent)
        await built.verify()
    }

    // covers: B5
    @Test func trackViewPostsAScreenview() async {
        let h = await EngineHarness()
        let visit = h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await h.engine.trackView(pageContext: Fixtures.homePage)
        let request = h.transport.request(for: visit)
        #expect(request?.url.absoluteString == "https://evs-01.gravityfield.ai/v2/visit")
        #expect(request?.maximumResponseBytes == 256 * 1024)
        #expect(request?.header("Authorization") == "Bearer \(Fixtures.apiKey)")
        let body = Fixtures.body(request)
        #expect(body["type"] as? String == "screenview")
        #expect(body["sec"] as? String == Fixtures.section)
        #expect(object(body["ctx"])["location"] as? String == "app://home")
        #expect(object(body["user"])["uid"] as? String == "u-8f3c")
        #expect(body["options"] != nil)
        #expect(body["data"] == nil)
        await h.verify()
    }

    // covers: B5
    @Test func triggerEventPostsCustomEvents() async {
        let h = await EngineHarness()
        let event = h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        await h.engine.triggerEvent(
            events: [
                CustomEvent(type: "add-to-cart", name: "Add to cart", customProps: ["sku": "SKU-123", "Qty": "2"])
            ],
            pageContext: Fixtures.productPage)
        await h.settle()  // kept when the call returned (DL5); sent by now
        let request = h.transport.request(for: event)
        #expect(request?.url.absoluteString == "https://evs-01.gravityfield.ai/v2/event")
        #expect(request?.maximumResponseBytes == 256 * 1024)
        #expect(request?.header("Authorization") == "Bearer \(Fixtures.apiKey)")
        let body = Fixtures.body(request)
        #expect(body["type"] == nil)
        let data = body["data"] as? [[String: Any]] ?? []
        #expect(data.count == 1)
        #expect(data.first?["type"] as? String == "add-to-cart")
        #expect(data.first?["name"] as? String == "Add to cart")
        #expect(data.first?["customProps"] as? [String: String] == ["sku": "SKU-123", "Qty": "2"])
        await h.verify()
    }

    // covers: B5
    @Test func getContentBySelectorReturnsNilOnFailure() async {
        let h = await EngineHarness(logger: AssistantLogger(level: .error))
        let lines = CollectedValues<String>()
        h.engine.logger.setListener { _, message in lines.append(message) }
        // Retried within the deadline where another attempt may help (DL1): four attempts each.
        for _ in 0..<4 { h.transport.expect(.request(.post, pathSuffix: "/choose"), .fail(.cannotConnect("offline"))) }
        h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(.text(200, "<html>")))
        for _ in 0..<4 { h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(.text(500, ""))) }
        for attempt in 1...3 {
            let before = lines.all.count
            let content = await h.passingTime { engine in
                await engine.getContentBySelector(selector: "entry", pageContext: Fixtures.homePage)
            }
            #expect(content == .some(nil))
            #expect(lines.all.count > before, "failure #\(attempt) is logged")
        }
        h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose(selector: "entry")))
        let content = await h.engine.getContentBySelector(selector: "entry", pageContext: Fixtures.homePage)
        #expect(content?.data.first?.selector == "entry")
        #expect(content?.variations.first?.campaignId == "c-1")
        #expect(content?.variations.first?.contents.first?.custom?.json == Fixtures.configurationJSON)
        await h.verify()
    }

    // covers: B1
    @Test func customBaseURLsReceiveTheRequests() async {
        let configuration = AssistantEngineConfiguration(
            apiKey: Fixtures.apiKey, section: Fixtures.section,
            gravityBaseURL: URL(string: "https://proxy.shop.example/gravity/v2")!,
            shoppingBaseURL: URL(string: "https://assistant.shop.example/api")!)
        let built = await EngineHarness(configuration: configuration)
        let choose = built.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose()))
        let result = await built.engine.prepareAssistant(
            assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
        #expect(result == .ready)
        #expect(
            built.transport.request(for: choose)?.url.absoluteString == "https://proxy.shop.example/gravity/v2/choose")

        let message = built.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m")))
        built.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        built.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        _ = await built.engine.sendMessage("Помогите выбрать подарок")
        await built.engine.waitForReply()
        #expect(
            built.transport.request(for: message)?.url.absoluteString
                == "https://assistant.shop.example/api/v1/messages")
        await built.verify()
        #expect(
            built.transport.requests.filter { $0.url.path.hasSuffix("/event") }.allSatisfy {
                $0.url.absoluteString == "https://proxy.shop.example/gravity/v2/event"
            })
    }

    // covers: B1, S1
    @Test func defaultBaseURLs() {
        let configuration = AssistantEngineConfiguration(apiKey: "k", section: "s")
        #expect(configuration.gravityBaseURL.absoluteString == "https://evs-01.gravityfield.ai/v2")
        #expect(configuration.shoppingBaseURL.absoluteString == "https://shopping-assistant-api.gravityfield.ai")
        #expect(configuration.logLevel == .error)
    }
}

/// `device.ua` and `User-Agent` when the host names no app: this SDK, on the platform the
/// package was built for.
private let sdkUserAgent =
    "ShoppingAssistant-Swift/\(AssistantEngineConfiguration.sdkVersion) (\(AssistantEngineConfiguration.platformName))"
