import DemoStore
import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@Suite(.timeLimit(.minutes(2))) struct DemoStoreTests {
    // MARK: - Catalogue

    @Test func catalogueHasAtLeastSixtyProductsInEightCategories() {
        let products = DemoCatalog.products
        #expect(products.count >= 60)
        #expect(Set(products.compactMap(\.category)).count >= 5)
        #expect(Set(products.map(\.itemId)).count == products.count, "itemIds are unique")
        let skus = products.compactMap(\.sku)
        #expect(Set(skus).count == skus.count, "SKUs are unique")
    }

    // The demo backend's side of PR1, AN5 (the awkward products the engine must survive)
    @Test func catalogueContainsEveryAwkwardProductKind() {
        let products = DemoCatalog.products
        #expect(products.filter { $0.sku == nil && $0.url == nil }.count == 1, "exactly one with neither SKU nor URL")
        #expect(products.contains { $0.sku != nil && $0.url == nil }, "SKU-only products")
        #expect(products.contains { $0.price == nil }, "products without price")
        #expect(products.contains { $0.imageUrl == nil }, "products without picture")
        #expect(products.contains { $0.pricesAsText && $0.price != nil }, "string prices")
        #expect(products.filter { $0.oldPrice != nil }.count >= 5, "discounted products")
        #expect(products.contains { $0.tracking == .none && $0.clickURLs.isEmpty }, "products without events")
        #expect(
            products.contains { $0.clickURLs.count == 2 && Set($0.clickURLs).count == 1 },
            "products with a duplicated click URL")
        #expect(products.contains { Set($0.clickURLs).count == 2 }, "products with two click hosts")
        #expect(products.filter { !$0.pricesAsText }.count > products.count / 2, "prices are mostly numbers")
    }

    @Test func catalogueItemsGoOnTheWireWithStringPricesAndEvents() async {
        let store = DemoStore(clock: ManualClock())
        // "Набор кружек для капучино" has a string price; the search finds it by name.
        let reply = Wire.object(
            await send(store, Wire.message(Wire.messageBody(message: "m-1", text: "набор кружек для капучино"))))
        let item = Wire.items(reply).first { $0["itemId"] as? String == "p-003" }
        #expect(item?["price"] as? String == "1 290 ₽")
        #expect(item?["currency"] as? String == "RUB")
        let events = item?["events"] as? [[String: Any]] ?? []
        #expect(events.map { $0["type"] as? String } == ["visible_impression", "click"])
    }

    // MARK: - Gravity

    // The demo backend's side of E1
    @Test func chooseAnswersTheEntrySelectorWithTheEntryCampaign() async throws {
        let store = DemoStore(clock: ManualClock())
        let body = Wire.object(await send(store, Wire.choose(["assistant-entry"])))
        let data = try #require(body["data"] as? [[String: Any]])
        #expect(data.count == 1)
        #expect(data.first?["selector"] as? String == "assistant-entry")
        let campaign = try #require((data.first?["payload"] as? [[String: Any]])?.first)
        #expect(campaign["campaignId"] as? String == "demo-c-entry")
        let content = try #require((campaign["contents"] as? [[String: Any]])?.first)
        #expect(content["contentType"] as? String == "custom")
        let custom = try #require(content["custom"] as? [String: Any])
        #expect(custom["json"] as? String == #"{"enabled":true,"title":"Спросите помощника"}"#)
        let events = try #require(content["events"] as? [[String: Any]])
        #expect(events.first?["type"] as? String == "load")
        let loadURL = try #require((events.first?["urls"] as? [String])?.first)
        #expect(loadURL.hasPrefix("https://\(DemoStore.trackingHost)/"))
    }

    // The demo backend's side of C1
    @Test func chooseAnswersTheAssistantSelectorWithTheAssistantConfiguration() async throws {
        let store = DemoStore(clock: ManualClock())
        let body = Wire.object(await send(store, Wire.choose(["shopping-assistant"])))
        let data = try #require(body["data"] as? [[String: Any]])
        let campaign = try #require((data.first?["payload"] as? [[String: Any]])?.first)
        let content = try #require((campaign["contents"] as? [[String: Any]])?.first)
        let json = try #require((content["custom"] as? [String: Any])?["json"] as? String)
        let config = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(config["enabled"] as? Bool == true)
        #expect(config["title"] as? String == "Помощник магазина")
        #expect(config["subtitle"] as? String == "Помогу выбрать подходящий товар.")
        #expect((config["suggests"] as? [String])?.count == 3)
    }

    // The demo backend's side of C5
    @Test func chooseAnswersAnUnknownSelectorWithEmptyData() async {
        let store = DemoStore(clock: ManualClock())
        let response = await send(store, Wire.choose(["shoping-assistant"]))
        #expect(response.status == 200)
        let body = Wire.object(response)
        #expect((body["data"] as? [Any])?.isEmpty == true)
        #expect((body["user"] as? [String: Any])?["uid"] as? String == "demo-u-1")
    }

    @Test func chooseAnswersBothSelectorsInOneRequest() async {
        let store = DemoStore(clock: ManualClock())
        let body = Wire.object(await send(store, Wire.choose(["assistant-entry", "shopping-assistant", "other"])))
        let selectors = (body["data"] as? [[String: Any]])?.compactMap { $0["selector"] as? String }
        #expect(selectors == ["assistant-entry", "shopping-assistant"])
    }

    // The demo backend's side of C2, C5, E1 (configurable availability for the REPL)
    @Test func disablingAndPageTargetingChangeWhatChooseReturns() async throws {
        let store = DemoStore(clock: ManualClock())
        store.updateConfiguration {
            $0.assistantEnabled = false
            $0.entryEnabled = false
        }
        let disabled = Wire.object(await send(store, Wire.choose(["assistant-entry", "shopping-assistant"])))
        let jsons = (disabled["data"] as? [[String: Any]] ?? []).compactMap { selection -> String? in
            let campaign = (selection["payload"] as? [[String: Any]])?.first
            let content = (campaign?["contents"] as? [[String: Any]])?.first
            return (content?["custom"] as? [String: Any])?["json"] as? String
        }
        #expect(jsons == [#"{"enabled":false,"title":"Спросите помощника"}"#, #"{"enabled":false}"#])

        store.updateConfiguration {
            $0.assistantEnabled = true
            $0.assistantPageTypes = [.product]
        }
        let offTarget = Wire.object(await send(store, Wire.choose(["shopping-assistant"], pageType: "CART")))
        #expect((offTarget["data"] as? [Any])?.isEmpty == true)
        let onTarget = Wire.object(await send(store, Wire.choose(["shopping-assistant"], pageType: "PRODUCT")))
        #expect((onTarget["data"] as? [Any])?.count == 1)
    }

    // The demo backend's side of C4
    @Test func conflictingAssistantCampaignsCarryTwoDifferentConfigurations() async throws {
        let store = DemoStore(
            configuration: { () -> DemoStore.Configuration in
                var configuration = DemoStore.Configuration()
                configuration.assistantCampaignShape = .conflicting
                return configuration
            }(), clock: ManualClock())
        let body = Wire.object(await send(store, Wire.choose(["shopping-assistant"])))
        let payload = try #require((body["data"] as? [[String: Any]])?.first?["payload"] as? [[String: Any]])
        #expect(payload.count == 2)
    }

    @Test func gravityAssignsAUidOnFirstLaunchAndKeepsAKnownOne() async {
        let store = DemoStore(clock: ManualClock())
        let first = Wire.object(await send(store, Wire.gravity("visit", ["type": "screenview", "user": [:]])))
        let user = first["user"] as? [String: String]
        #expect(user == ["uid": "demo-u-1", "ses": "demo-s-1"])
        #expect((first["campaigns"] as? [Any])?.isEmpty == true)

        let again = Wire.object(await send(store, Wire.gravity("visit", ["user": ["uid": "demo-u-1"]])))
        #expect(again["user"] as? [String: String] == ["uid": "demo-u-1", "ses": "demo-s-1"])

        // A manual user's app id comes as `custom` and gets a uid of its own, kept per app id.
        let manual = Wire.object(await send(store, Wire.gravity("visit", ["user": ["custom": "alice", "ses": "s-9"]])))
        #expect(manual["user"] as? [String: String] == ["uid": "demo-u-2", "ses": "s-9"])
        let manualAgain = Wire.object(await send(store, Wire.gravity("visit", ["user": ["custom": "alice"]])))
        #expect(manualAgain["user"] as? [String: String] == ["uid": "demo-u-2", "ses": "s-9"])

        let another = Wire.object(await send(store, Wire.gravity("visit", [:])))
        #expect(another["user"] as? [String: String] == ["uid": "demo-u-3", "ses": "demo-s-2"])
    }

    /// The store reads requests as a strict server would, so a regression of the wire shows.
    @Test func gravityRefusesWhatTheRealServiceWouldMisread() async {
        let store = DemoStore(clock: ManualClock())
        let lowerCase = await send(
            store, Wire.gravity("visit", ["ctx": ["type": "product", "data": ["KIT-1001"], "location": "app://p"]]))
        #expect(lowerCase.status == 400)
        #expect(Wire.errorCode(lowerCase) == "INVALID_CONTEXT")
        let noContext = await send(store, Wire.gravity("visit", ["ctx": NSNull()]))
        #expect(noContext.status == 400)
        let unknownUID = await send(store, Wire.gravity("visit", ["user": ["uid": "alice"]]))
        #expect(unknownUID.status == 400)
        #expect(Wire.errorCode(unknownUID) == "UNKNOWN_UID")
        let both = await send(store, Wire.gravity("visit", ["user": ["uid": "demo-u-1", "custom": "alice"]]))
        #expect(both.status == 400)
        #expect(Wire.errorCode(both) == "INVALID_USER")
        let page: [String: Any] = ["type": "product", "data": ["KIT-1001"]]
        let lowerCasePage = await send(store, Wire.message(Wire.messageBody(message: "m-1", text: "hi", page: page)))
        #expect(lowerCasePage.status == 400)
    }

    @Test func gravityRequiresABearerKey() async {
        let store = DemoStore(clock: ManualClock())
        let missing = await send(store, Wire.gravity("choose", ["data": []], key: nil))
        #expect(missing.status == 401)
        #expect(Wire.errorCode(missing) == "UNAUTHORIZED")

        store.updateConfiguration { $0.apiKey = "right-key" }
        let wrong = await send(store, Wire.gravity("choose", ["data": []], key: "wrong-key"))
        #expect(wrong.status == 401)
        let right = await send(store, Wire.gravity("choose", ["data": []], key: "right-key"))
        #expect(right.status == 200)
    }

    // The demo backend's side of AN1
    @Test func eventEndpointRecordsCustomEvents() async {
        let store = DemoStore(clock: ManualClock())
        let event: [String: Any] = [
            "type": "chat_dialog_open", "name": "Chat opened",
            "customProps": ["selector": "shopping-assistant", "campaignId": "demo-c-assistant"],
        ]
        let response = await send(store, Wire.gravity("event", ["user": ["custom": "app-user-7"], "data": [event]]))
        #expect(response.status == 200)
        #expect(
            store.receivedEvents == [
                DemoGravityEvent(
                    type: "chat_dialog_open", name: "Chat opened",
                    customProps: ["selector": "shopping-assistant", "campaignId": "demo-c-assistant"], uid: "demo-u-1")
            ])
    }

    @Test func visitCanAnnounceAnInAppCampaign() async {
        let store = DemoStore(clock: ManualClock())
        store.updateConfiguration { $0.promoCampaignOnVisit = true }
        let body = Wire.object(await send(store, Wire.gravity("visit", ["user": [:]])))
        let campaigns = body["campaigns"] as? [[String: Any]]
        #expect(campaigns?.first?["campaignId"] as? String == "demo-c-promo")
    }

    // MARK: - Replies

    @Test func giftQuestionReturnsGiftsWithSuggestsButtonsAndImpression() async throws {
        let reply = await ask("Помогите выбрать подарок")
        let products = Wire.catalogueProducts(reply)
        #expect((3...8).contains(products.count))
        #expect(products.allSatisfy { $0.tags.contains(.gift) })
        #expect((2...3).contains(Wire.suggests(reply).count))
        let buttons = Wire.buttons(reply)
        #expect(buttons.contains { $0["action"] as? String == "open_support_chat" })
        let link = try #require(buttons.first { $0["action"] as? String == "follow_url" })
        let url = try #require((link["url"] as? String).flatMap(URL.init(string:)))
        #expect(url.scheme == "https" && url.host() != nil)
        #expect(buttons.allSatisfy { $0["type"] as? String == "button" && $0["value"] is String })
        let events = try #require(reply["events"] as? [[String: Any]])
        #expect(events.first?["type"] as? String == "impression")
        #expect((events.first?["urls"] as? [String])?.first?.hasPrefix("https://") == true)
        #expect(reply["assistantMessageId"] as? String == "am-1")
        #expect(reply["threadId"] as? String == "thread-1")
        #expect(reply["messageId"] as? String == "m-1")
        #expect((reply["text"] as? String)?.isEmpty == false)
    }

    @Test func giftForAManReturnsMensGifts() async {
        let products = Wire.catalogueProducts(await ask("подарок для мужчины"))
        #expect(products.count >= 3)
        #expect(products.allSatisfy { $0.tags.contains(.gift) && $0.tags.contains(.men) })
    }

    @Test func mugQuestionReturnsKitchenwareWithMugsFirst() async {
        let reply = await ask("Нужна кружка")
        let products = Wire.catalogueProducts(reply)
        #expect((3...8).contains(products.count))
        #expect(products.allSatisfy { $0.category == .kitchen })
        #expect(products.first?.name.lowercased().contains("кружк") == true)
    }

    @Test func headphonesQuestionReturnsHeadphonesFirst() async {
        let reply = await ask("Посоветуйте наушники")
        let products = Wire.catalogueProducts(reply)
        #expect((3...8).contains(products.count))
        #expect(products.allSatisfy { $0.category == .electronics })
        #expect(products.prefix(2).allSatisfy { $0.name.hasPrefix("Наушники") })
    }

    @Test func englishQuestionsMatchToo() async {
        let products = Wire.catalogueProducts(await ask("Show me HEADPHONES"))
        #expect(products.first?.category == .electronics)
    }

    @Test func budgetFiltersByPriceAndAnEmptyMatchGivesAnEmptyBlock() async throws {
        let products = Wire.catalogueProducts(await ask("подарок до 1000 ₽"))
        #expect(!products.isEmpty)
        #expect(products.allSatisfy { ($0.price ?? .max) <= 1000 && $0.tags.contains(.gift) })

        let empty = await ask("наушники до 10 рублей")
        let block = try #require(empty["products"] as? [String: Any])
        #expect((block["items"] as? [Any])?.isEmpty == true)
        #expect(block["title"] is String)
    }

    // The demo backend's side of D14 (the dialog's page context drives the answer)
    @Test func productPageAnswerMentionsTheSkuAndShowsSimilarItems() async throws {
        let reply = await ask("Что посоветуете?", page: ["type": "PRODUCT", "data": ["KIT-1004"]])
        let text = try #require(reply["text"] as? String)
        #expect(text.contains("KIT-1004"))
        let products = Wire.catalogueProducts(reply)
        #expect((3...8).contains(products.count))
        #expect(products.allSatisfy { $0.category == .kitchen && $0.sku != "KIT-1004" })
        let cart = Wire.buttons(reply).first { $0["action"] as? String == "add_to_cart" }
        #expect(cart?["sku"] as? String == "KIT-1004")
    }

    @Test func skuLookupFindsTheProduct() async {
        let reply = await ask("артикул elc-2001")
        #expect(Wire.catalogueProducts(reply).first?.sku == "ELC-2001")
        #expect((reply["text"] as? String)?.contains("ELC-2001") == true)
    }

    @Test func cheaperReturnsProductsCheaperThanTheLastCarousel() async throws {
        let store = DemoStore(clock: ManualClock())
        let first = Wire.object(await send(store, Wire.message(Wire.messageBody(message: "m-1", text: "наушники"))))
        let shown = Wire.catalogueProducts(first)
        let prices = shown.compactMap(\.price).sorted()
        let typical = try #require(prices.isEmpty ? nil : prices[(prices.count - 1) / 2], "the lower median")
        let second = Wire.object(
            await send(store, Wire.message(Wire.messageBody(message: "m-2", text: "Покажи дешевле"))))
        let products = Wire.catalogueProducts(second)
        #expect(products.count >= 3)
        #expect(products.allSatisfy { ($0.price ?? .max) < typical && !shown.contains($0) })
        #expect((second["text"] as? String)?.contains(DemoProduct.formatPrice(typical)) == true)
    }

    @Test func unmatchedQuestionFallsBackGentlyToPopularProducts() async {
        let reply = await ask("zzz qqq")
        let products = Wire.catalogueProducts(reply)
        #expect((3...8).contains(products.count))
        #expect(products.allSatisfy { $0.tags.contains(.popular) })
        #expect((reply["text"] as? String)?.contains("популярные") == true)
        #expect(Wire.buttons(reply).contains { $0["action"] as? String == "open_support_chat" })
    }

    @Test func deliveryQuestionAnswersWithoutProducts() async {
        let reply = await ask("Какие условия доставки?")
        #expect(reply["products"] == nil)
        #expect(Wire.buttons(reply).contains { $0["action"] as? String == "follow_url" })
    }

    // MARK: - Messages, history, feedback

    // covers: D19
    /// A store started again on the file an earlier one kept its threads in is the same server:
    /// the reply stored for a message is in its history, and a resend gets the same reply.
    @Test func aStoreStartedAgainOnItsThreadsFileHasTheEarlierThreadsAndReplies() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("demo-threads-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let first = DemoStore(clock: ManualClock())
        first.keepThreads(in: file)
        let request = Wire.message(Wire.messageBody(message: "m-1", text: "подарок"))
        let reply = Wire.object(await send(first, request))
        _ = await send(
            first, Wire.feedback(message: try #require(reply["assistantMessageId"] as? String), rating: "like"))

        let second = DemoStore(clock: ManualClock())
        second.keepThreads(in: file)
        let history = Wire.object(await send(second, Wire.history()))
        let messages = try #require(history["messages"] as? [[String: Any]])
        #expect(messages.map { $0["id"] as? String } == ["m-1", reply["assistantMessageId"] as? String])
        #expect(
            Wire.object(await send(second, request))["assistantMessageId"] as? String == reply["assistantMessageId"]
                as? String)
        #expect(second.feedback.isEmpty, "what this run received is what it reports")
    }

    // The demo backend's side of D5 (history holds the reply to M)
    @Test func historyHoldsTheUserMessageAndTheReplyWithReplyTo() async throws {
        let store = DemoStore(clock: ManualClock())
        let reply = Wire.object(await send(store, Wire.message(Wire.messageBody(message: "m-1", text: "подарок"))))
        let response = await send(store, Wire.history())
        #expect(response.status == 200)
        let body = Wire.object(response)
        #expect(body["threadId"] as? String == "thread-1")
        let messages = try #require(body["messages"] as? [[String: Any]])
        #expect(messages.count == 2)
        try #require(messages.count > 1)
        #expect(messages[0]["id"] as? String == "m-1")
        #expect(messages[0]["role"] as? String == "user")
        #expect(messages[0]["text"] as? String == "подарок")
        #expect(messages[0]["createdAt"] as? String == "2026-01-01T10:00:00Z")
        #expect(messages[1]["id"] as? String == reply["assistantMessageId"] as? String)
        #expect(messages[1]["role"] as? String == "assistant")
        #expect(messages[1]["replyTo"] as? String == "m-1")
        #expect(messages[1]["text"] as? String == reply["text"] as? String)
        #expect(Wire.items(messages[1]).count == Wire.items(reply).count)
        #expect(messages[1]["ui"] is [String: Any])
        #expect(messages[1]["events"] is [[String: Any]])
    }

    // The demo backend's side of D6
    @Test func resendingTheSameBodyReturnsTheStoredReply() async throws {
        let store = DemoStore(clock: ManualClock())
        let request = Wire.message(Wire.messageBody(message: "m-1", text: "кружка"))
        let first = await send(store, request)
        let second = await send(store, request)
        #expect(second == first)
        let history = Wire.object(await send(store, Wire.history()))
        #expect((history["messages"] as? [Any])?.count == 2)
    }

    // The demo backend's side of D8
    @Test func reusingAMessageIdWithADifferentBodyIsAConflict() async {
        let store = DemoStore(clock: ManualClock())
        _ = await send(store, Wire.message(Wire.messageBody(message: "m-1", text: "кружка")))
        let conflict = await send(store, Wire.message(Wire.messageBody(message: "m-1", text: "наушники")))
        #expect(conflict.status == 409)
        #expect(Wire.errorCode(conflict) == "MESSAGE_ID_CONFLICT")
        let history = Wire.object(await send(store, Wire.history()))
        let texts = (history["messages"] as? [[String: Any]])?.compactMap { $0["text"] as? String }
        #expect(texts?.first == "кружка", "the stored exchange is not overwritten")
    }

    // The demo backend's side of D9
    @Test func historyOfAnUnknownThreadIsNotFound() async {
        let store = DemoStore(clock: ManualClock())
        let response = await send(store, Wire.history(thread: "nope"))
        #expect(response.status == 404)
        #expect(Wire.errorCode(response) == "SHOPPING_HISTORY_NOT_FOUND")

        _ = await send(store, Wire.message(Wire.messageBody(message: "m-1", text: "кружка")))
        let otherUser = await send(store, Wire.history(uid: "demo-u-2"))
        #expect(otherUser.status == 404, "another user's thread is not visible")
    }

    @Test func messagesMustUseTheCanonicalUidAsResourceId() async {
        let store = DemoStore(clock: ManualClock())
        var body = Wire.messageBody(message: "m-1", text: "кружка")
        body["resourceId"] = "someone-else"
        let response = await send(store, Wire.message(body))
        #expect(response.status == 400)
        #expect(Wire.errorCode(response) == "INVALID_REQUEST")
    }

    // The demo backend's side of D11
    @Test func feedbackRecordsARatingAndRejectsOthers() async {
        let store = DemoStore(clock: ManualClock())
        _ = await send(store, Wire.message(Wire.messageBody(message: "m-1", text: "кружка")))
        let liked = await send(store, Wire.feedback(message: "am-1", rating: "like"))
        #expect(liked.status == 204)
        #expect(liked.body.isEmpty)
        #expect(store.feedback.map(\.rating) == ["like"])
        #expect(store.feedback.first?.messageId == "am-1")

        let bad = await send(store, Wire.feedback(message: "am-1", rating: "meh"))
        #expect(bad.status == 400)
        let unknown = await send(store, Wire.feedback(message: "m-1", rating: "dislike"))
        #expect(unknown.status == 404, "ratings are keyed by the assistant message ID")
    }

    // The demo backend's side of S5
    @Test func shoppingRequestsCarryingCredentialsAreRejected() async {
        let store = DemoStore(clock: ManualClock())
        let body = Wire.messageBody(message: "m-1", text: "кружка")
        let withHeader = await send(store, Wire.message(body, headers: ["Authorization": "Bearer \(Wire.apiKey)"]))
        #expect(withHeader.status == 400)
        #expect(Wire.errorCode(withHeader) == "CREDENTIALS_NOT_ALLOWED")

        var withField = body
        withField["apiKey"] = "x"
        #expect(await send(store, Wire.message(withField)).status == 400)

        // Once Gravity has seen the key, the key anywhere in a Shopping body is rejected.
        _ = await send(store, Wire.choose(["assistant-entry"]))
        var leaked = body
        leaked["runtimeContext"] = Wire.runtimeContext(uid: "demo-u-1", page: ["type": "OTHER", "data": [Wire.apiKey]])
        #expect(await send(store, Wire.message(leaked)).status == 400)

        var history = Wire.history()
        history.headers["authorization"] = "Bearer k"
        #expect(await send(store, history).status == 400)

        #expect(await send(store, Wire.message(body)).status == 200, "a clean request is answered")
        let typed = Wire.messageBody(message: "m-2", text: "мой ключ \(Wire.apiKey)")
        #expect(await send(store, Wire.message(typed)).status == 200, "the shopper's own text is not a credential")
    }

    @Test func postsWithoutJSONContentTypeAreRejected() async {
        let store = DemoStore(clock: ManualClock())
        var request = Wire.message(Wire.messageBody(message: "m-1", text: "кружка"))
        request.headers["Content-Type"] = "text/plain"
        #expect(await send(store, request).status == 415)
    }

    // MARK: - Routing and logs

    @Test func trackingGetsAreAnsweredAndRecorded() async {
        let store = DemoStore(clock: ManualClock())
        let url = Wire.url("https://\(DemoStore.trackingHost)/c?i=p-001")
        let response = await send(store, HTTPRequest(method: .get, url: url))
        #expect(response.status == 204)
        #expect(store.trackingHits == [url])

        let withKey = HTTPRequest(method: .get, url: url, headers: ["Authorization": "Bearer \(Wire.apiKey)"])
        #expect(await send(store, withKey).status == 400, "tracking requests carry no key")
        #expect(store.trackingHits == [url])
    }

    @Test func unknownPathsAreNotFoundWithAnErrorBody() async {
        let store = DemoStore(clock: ManualClock())
        let response = await send(store, HTTPRequest(method: .get, url: Wire.url("https://example.com/nothing")))
        #expect(response.status == 404)
        #expect(Wire.errorCode(response) == "NOT_FOUND")
    }

    @Test func routingIgnoresTheHost() async {
        let store = DemoStore(clock: ManualClock())
        let request = HTTPRequest(
            method: .post, url: Wire.url("https://proxy.example/gravity/v2/choose"),
            headers: ["Content-Type": "application/json", "Authorization": "Bearer k"],
            body: Wire.data([
                "data": [["selector": "assistant-entry"]], "ctx": ["type": "HOMEPAGE", "data": [], "location": "/"],
            ]))
        let body = Wire.object(await send(store, request))
        #expect((body["data"] as? [Any])?.count == 1)
    }

    @Test func requestLogRecordsMethodPathAndStatus() async {
        let store = DemoStore(clock: ManualClock())
        _ = await send(store, Wire.choose(["assistant-entry"]))
        _ = await send(store, Wire.history(thread: "t-x"))
        let log = store.requestLog
        #expect(log.map(\.method) == ["POST", "GET"])
        #expect(
            log.map(\.path) == ["/v2/choose", "/v1/threads/t-x/messages?resourceId=demo-u-1&tenant_id=demo-section"])
        #expect(log.map(\.status) == [200, 404])
        #expect(log.map(\.service) == [.gravity, .shopping])
        #expect(log.first?.description == "#1 POST /v2/choose → 200")
        store.clearLogs()
        #expect(store.requestLog.isEmpty)
    }

    @Test func sameRequestsGiveByteIdenticalResponses() async {
        func run() async -> [Data] {
            let store = DemoStore(clock: ManualClock())
            var bodies: [Data] = []
            bodies.append(await send(store, Wire.choose(["assistant-entry", "shopping-assistant"])).body)
            bodies.append(await send(store, Wire.message(Wire.messageBody(message: "m-1", text: "подарок"))).body)
            bodies.append(await send(store, Wire.history()).body)
            return bodies
        }
        let first = await run()
        let second = await run()
        #expect(first == second)
    }
}
