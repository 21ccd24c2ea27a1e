import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The Gravity API V2 wire as the vendor SDKs send and read it. Request bodies are pinned
/// whole (golden bodies); answers are read the way the SDKs' models read them.
@Suite(.timeLimit(.minutes(2))) struct GravityWireConformanceTests {
    /// `eventTime` of an event raised while the harness's manual clock reads zero (DL6).
    static let at = TypedEventWireConformanceTests.at

    // MARK: - Golden request bodies, SDK-managed mode

    // Mirrors: iOS GravityRepository.chooseBySelector (ContentRequest + BySelectorData), and
    // flutter choose_wire_test "a single call produces one POST /choose with the unchanged
    // wire shape" (one POST, the six envelope keys, one data item naming the selector).
    // covers: B5, B4
    @Test func chooseBodyIsTheSDKEnvelopeWithOneSelectorItem() async {
        let h = await EngineHarness(storedUID: "u-8f3c")
        let choose = h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Peer.choose([("banner", #"{"a":1}"#)])))
        let content = await h.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.productPage)
        #expect(h.transport.requests.count == 1)
        let expected: NSDictionary = [
            "sec": Fixtures.section, "device": Peer.device, "user": ["uid": "u-8f3c"], "ctx": Peer.productContext,
            "options": Peer.options, "data": [["selector": "banner", "option": ["skusOnly": false]]],
        ]
        #expect(Peer.golden(h.transport.request(for: choose)) == expected)
        #expect(content?.data.map(\.selector) == ["banner"])
        await h.verify()
    }

    // Mirrors: iOS GravityRepository.visit (VisitRequest) and userForRequest on a first launch.
    // covers: B3, B5
    @Test func visitBodyOnFirstLaunchThenWithTheAnsweredUser() async {
        let h = await EngineHarness(storedUID: nil)
        let first = h.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-new")))
        await h.engine.trackView(pageContext: Fixtures.productPage)
        let expected: NSDictionary = [
            "sec": Fixtures.section, "device": Peer.device, "user": [:] as [String: Any],
            "ctx": Peer.productContext, "options": Peer.options, "type": "screenview",
        ]
        #expect(Peer.golden(h.transport.request(for: first)) == expected)

        let second = h.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await h.engine.trackView(pageContext: Fixtures.productPage)
        #expect(
            Fixtures.body(h.transport.request(for: second))["user"] as? [String: String] == [
                "uid": "u-new", "ses": "s-1",
            ])
        await h.verify()
    }

    // Mirrors: iOS GravityRepository.event (EventRequest) and CustomEvent's encoding (type,
    // name, customProps left out when nil).
    // Every item also carries `eventTime`, the moment of the call on the harness's wall clock.
    // covers: B5, DL6
    @Test func eventBodyCarriesTheCustomEvents() async {
        let h = await EngineHarness(storedUID: "u-8f3c")
        let event = h.transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse()))
        await h.engine.triggerEvent(
            events: [
                CustomEvent(type: "add-to-cart-v1", name: "Add to Cart", customProps: ["sku": "SKU-123"]),
                CustomEvent(type: "ping", name: "Ping"),
            ], pageContext: Fixtures.productPage)
        await h.settle()  // kept when the call returned (DL5); sent by now
        let expected: NSDictionary = [
            "sec": Fixtures.section, "device": Peer.device, "user": ["uid": "u-8f3c"], "ctx": Peer.productContext,
            "options": Peer.options,
            "data": [
                [
                    "type": "add-to-cart-v1", "name": "Add to Cart", "customProps": ["sku": "SKU-123"],
                    "eventTime": Self.at,
                ],
                ["type": "ping", "name": "Ping", "eventTime": Self.at],
            ],
        ]
        #expect(Peer.golden(h.transport.request(for: event)) == expected)
        await h.verify()
    }

    // MARK: - Golden request bodies, manual mode

    // Mirrors: iOS GravitySDK.setUser → User(custom: userId, ses: sessionId), sent as is by
    // GravityRepository.userForRequest; flutter choose_wire_test "different users produce
    // separate POSTs" (custom users travel as `custom`).
    // covers: B3
    @Test func manualModeSendsTheAppsIdAsCustomOnEveryEndpoint() async {
        let h = await EngineHarness(storedUID: "u-8f3c")
        await h.engine.setUser(userId: "crm-42", sessionId: "crm-s-7")
        let visit = h.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse(uid: "u-canonical")))
        await h.engine.trackView(pageContext: Fixtures.productPage)
        let choose = h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Peer.choose([("banner", "{}")], uid: "u-canonical")))
        _ = await h.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.productPage)
        let event = h.transport.expect(
            .request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse(uid: "u-canonical")))
        await h.engine.triggerEvent(
            events: [CustomEvent(type: "ping", name: "Ping")], pageContext: Fixtures.productPage)
        await h.settle()  // kept when the call returned (DL5); sent by now

        let user: NSDictionary = ["custom": "crm-42", "ses": "crm-s-7"]
        let envelope: [String: Any] = [
            "sec": Fixtures.section, "device": Peer.device, "user": user, "ctx": Peer.productContext,
            "options": Peer.options,
        ]
        #expect(
            Peer.golden(h.transport.request(for: visit)) == envelope.merging(["type": "screenview"]) { $1 }
                as NSDictionary)
        #expect(
            Peer.golden(h.transport.request(for: choose))
                == envelope.merging(["data": [["selector": "banner", "option": ["skusOnly": false]]]]) { $1 }
                as NSDictionary)
        #expect(
            Peer.golden(h.transport.request(for: event))
                == envelope.merging(["data": [["type": "ping", "name": "Ping", "eventTime": Self.at]]]) { $1 }
                as NSDictionary)
        await h.verify()
    }

    // MARK: - Reading /choose answers

    // Mirrors: flutter choose_wire_test "a merged request missing from the response resolves
    // to an empty ContentResponse" (part-1 / part-2).
    // covers: B5, C5
    @Test func answerForAnotherSelectorIsNotThisSelectorsContent() async {
        let h = await EngineHarness()
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Peer.choose([("part-1", Fixtures.configurationJSON)])))
        let content = await h.engine.getContentBySelector(selector: "part-2", pageContext: Fixtures.productPage)
        #expect(content?.data.isEmpty == true)
        #expect(AssistantEntry.parse(content) == nil)

        // The assistant's own /choose: another selector's entry is not its configuration (C5).
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Peer.choose([("part-1", Fixtures.configurationJSON)])))
        #expect(
            await h.engine.prepareAssistant(assistantSelector: "part-2", pageContext: Fixtures.productPage)
                == .unavailable(.notFound))
        await h.verify()
    }

    // Mirrors: flutter choose_wire_test "an unrequested selector campaign cannot shadow a
    // direct answer sharing its campaignId": entries the service adds for selectors nobody
    // asked for never count, so they are not "several configurations" (C4).
    // covers: B5, C4
    @Test func unrequestedSelectorEntriesAreIgnored() async {
        let h = await EngineHarness()
        let other = #"{"enabled":true,"title":"Промо","suggests":[]}"#
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"),
            .respond(
                Peer.choose([("promo-unrequested", other), (Fixtures.assistantSelector, Fixtures.configurationJSON)])))
        #expect(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
                == .ready)
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"),
            .respond(
                Peer.choose([
                    ("assistant-entry", #"{"enabled":true,"title":"Спросить"}"#), ("promo-unrequested", other),
                ])))
        let content = await h.engine.getContentBySelector(
            selector: "assistant-entry", pageContext: Fixtures.productPage)
        #expect(content?.data.map(\.selector) == ["assistant-entry"])
        #expect(AssistantEntry.parse(content) == AssistantEntry(enabled: true, title: "Спросить"))
        await h.verify()
    }

    // Mirrors: iOS ContentResponse / Campaign / CampaignVariation / CampaignContent decoding:
    // what hosts need from the answer is kept (selector, events, variables, custom.json).
    // covers: B5
    @Test func contentKeepsSelectorEventsAndVariables() async throws {
        let h = await EngineHarness()
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"),
            .respond(Peer.choose([("banner", #"{"x":1}"#)], loadURLs: ["https://t.example/l"], onLoad: "load")))
        h.transport.expect(.get("https://t.example/l"), .respond(.text(204, "")))
        let content = try #require(
            await h.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage))
        let item = try #require(content.data.first?.payload.first?.contents.first)
        #expect(content.data.first?.selector == "banner")
        #expect(content.data.first?.payload.first?.campaignId == "c-banner")
        #expect(item.custom?.json == #"{"x":1}"#)
        #expect(item.events.map(\.type) == ["load", "impression"])
        #expect(item.variables?["onLoad"]?["action"]?.stringValue == "load")
        #expect(item.variables?["elements"] == .array([]))
        #expect(item.loadTrackingURLs == ["https://t.example/l"])
        await h.verify()
    }

    // Mirrors: flutter choose_wire_test "a failed merged POST propagates to every caller" and
    // iOS GravitySDK.getContentBySelector (nil on a failed request).
    // covers: B5
    @Test func failedChooseIsNilAndLoggedOnce() async {
        let collector = LogCollector()
        let h = await EngineHarness(logger: collector.makeLogger(level: .info))
        // A final status: retrying cannot help (DL1), so it fails at once.
        h.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(.text(400, "{}")))
        #expect(await h.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage) == nil)
        #expect(collector.errors.count == 1)
        #expect(collector.errors.first?.contains("/choose") == true)
        await h.verify()
    }

    // MARK: - Content load tracking (B7)

    // Mirrors: iOS GravitySDK.getContentBySelector → ContentEventService.sendContentLoaded:
    // `variables.onLoad.action` names the event type; every URL of the first `events` entry of
    // that type is requested with GET; a content without onLoad has no load tracking.
    // covers: B7
    @Test func getContentBySelectorRequestsTheLoadURLsOfEveryContent() async {
        let h = await EngineHarness()
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"),
            .respond(
                Peer.choose(
                    [("banner", "{}")], loadURLs: ["https://t.example/l?1", "https://t2.example/l?2"], onLoad: "load")))
        let first = h.transport.expect(.get("https://t.example/l?1"), .respond(.text(204, "")))
        let second = h.transport.expect(.get("https://t2.example/l?2"), .respond(.text(204, "")))
        _ = await h.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage)
        await h.engine.flushTracking()
        // Tracking hosts are third parties: no key, no body (a deliberate difference from iOS).
        for exchange in [first, second] {
            let request = h.transport.request(for: exchange)
            #expect(request?.header("Authorization") == nil)
            #expect(request?.body == nil)
            #expect(request?.header("User-Agent") == Peer.userAgentHeader)
        }
        // Tracking URLs go a few at once (B13): the log has them in the order they ended.
        #expect(await h.engine.trackingLog.map(\.name).sorted() == ["https://t.example/l?1", "https://t2.example/l?2"])

        // No `variables.onLoad`, or an action no event carries: nothing to request.
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"),
            .respond(Peer.choose([("banner", "{}")], loadURLs: ["https://t.example/l?3"])))
        _ = await h.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage)
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"),
            .respond(Peer.choose([("banner", "{}")], loadURLs: ["https://t.example/l?4"], onLoad: "close")))
        _ = await h.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage)
        await h.verify()
    }

    // The assistant configuration's own /choose starts load tracking too (seed 002: every
    // content selection method tracks loads), whatever the configuration says.
    // covers: B7
    @Test func prepareRequestsTheConfigurationsLoadURLs() async {
        let h = await EngineHarness()
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"),
            .respond(
                Peer.choose(
                    [(Fixtures.assistantSelector, Fixtures.configurationJSON)], loadURLs: ["https://t.example/l?cfg"],
                    onLoad: "load")))
        h.transport.expect(.get("https://t.example/l?cfg"), .respond(.text(204, "")))
        #expect(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
                == .ready)
        h.transport.expect(
            .request(.post, pathSuffix: "/choose"),
            .respond(
                Peer.choose(
                    [(Fixtures.assistantSelector, #"{"enabled":false}"#)], loadURLs: ["https://t.example/l?off"],
                    onLoad: "load")))
        h.transport.expect(.get("https://t.example/l?off"), .respond(.text(204, "")))
        #expect(
            await h.engine.prepareAssistant(
                assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
                == .unavailable(.disabled))
        await h.verify()
    }

    // A superseded preparation's late answer is dropped whole: its contents were loaded for
    // nobody, so nothing is tracked for it (P2).
    // covers: B7, P2
    @Test func supersededPreparationsLateAnswerTracksNothing() async {
        let store = RecordingIdentityStore(uid: "u-old")
        let built = await EngineHarness(identityStore: store, wrap: { CancellationIgnoringTransport(inner: $0) })
        let engine = built.engine
        let older = built.transport.expect(.request(.post, pathSuffix: "/choose"), .deferred)
        let t1 = Task {
            await engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        }
        await built.transport.waitForRequests(1)
        built.transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose(uid: nil)))
        #expect(
            await engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
                == .ready)
        #expect(await t1.valueUnlessCancelled == .superseded)
        built.transport.complete(
            older,
            with: Peer.choose(
                [(Fixtures.assistantSelector, Fixtures.configurationJSON)], uid: "u-late",
                loadURLs: ["https://t.example/l?late"], onLoad: "load"))
        await store.waitForSaves(1)  // the late answer was absorbed: its actor turn is over
        await built.verify()  // its load URL was never expected: requesting it fails the test
    }

    // MARK: - Headers and options

    // wire.md: the `User-Agent` header of every request names this SDK and its version, not the
    // HTTP library (Foundation's default would be `assistant (unknown…)`); `device.ua` is the
    // host app's (the vendor SDKs' `App/version (platform)`), this SDK's when the host names none.
    // covers: B4
    @Test func everyRequestNamesTheSDKInItsUserAgent() async {
        let h = await EngineHarness()
        await h.openReady()
        h.transport.expect(.get("https://t.example/ri?m=am-17"), .respond(.text(204, "")))  // shown: impression
        await h.landOneReply()
        await h.engine.flushTracking()
        let agents = Set(h.transport.requests.map { $0.header("User-Agent") })
        #expect(agents == [Peer.userAgentHeader])
        #expect(h.transport.requests.contains { $0.method == .get })  // tracking GETs are included
        await h.verify()
    }

    // Mirrors: iOS GravitySDK.setOptions(options:contentSettings:proxyUrl:), used by every
    // later request; flutter choose_batch_keys_test "differs when options differ".
    @Test func optionsAndContentSettingsAreTheEnginesToSet() async {
        let configured = AssistantEngineConfiguration(
            apiKey: Fixtures.apiKey, section: Fixtures.section, options: GravityOptions(isReturnUserInfo: true),
            contentSettings: GravityContentSettings(skusOnly: true, fields: ["id", "name"]), deviceId: "device-1")
        let built = await EngineHarness(configuration: configured)
        let first = built.transport.expect(
            .request(.post, pathSuffix: "/choose"), .respond(Peer.choose([("banner", "{}")])))
        _ = await built.engine.getContentBySelector(selector: "banner", pageContext: Fixtures.homePage)
        let body = Fixtures.body(built.transport.request(for: first))
        #expect((body["options"] as? [String: Bool])?["isReturnUserInfo"] == true)
        #expect((body["device"] as? [String: Any])?["id"] as? String == "device-1")
        let item = (body["data"] as? [[String: Any]])?.first
        #expect(item?["option"] as? NSDictionary == ["skusOnly": true, "fields": ["id", "name"]])
        #expect(item?["options"] == nil, "the fixed SDKs' key only")

        await built.engine.setOptions(GravityOptions(isImplicitImpression: false))
        let second = built.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(Fixtures.eventResponse()))
        await built.engine.trackView(pageContext: Fixtures.homePage)
        let options = Fixtures.body(built.transport.request(for: second))["options"] as? [String: Bool]
        #expect(options?["isImplicitImpression"] == false)
        #expect(options?["isReturnUserInfo"] == false)
        await built.verify()
    }
}
