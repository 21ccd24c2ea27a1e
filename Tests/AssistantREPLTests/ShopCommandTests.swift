import DemoStore
import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// The REPL plays the shop around the chat (issue 23): its commands send the base SDK's typed
/// events, the push permission and a widget's engagement as an app would, with the demo
/// catalogue's prices on the demo store and the prices it was shown on live services. Checked
/// on what the demo store received.
@Suite(.timeLimit(.minutes(2))) struct ShopCommandTests {
    private func events(_ repl: DemoREPL, _ type: String) -> [DemoGravityEvent] {
        (repl.demoStore ?? repl.liveStore)?.receivedEvents.filter { $0.type == type } ?? []
    }

    /// An event's fields but its `eventTime`, which every event carries (DL6).
    private func fieldsButTime(_ event: DemoGravityEvent) -> [String: JSONValue] {
        #expect(event.fields["eventTime"]?.stringValue?.hasSuffix("Z") == true, "\(event.type) has an eventTime")
        return event.fields.filter { $0.key != "eventTime" }
    }

    private func cart(_ event: DemoGravityEvent?) -> [JSONValue]? { event?.fields["cart"]?.arrayValue }

    private static let twoMugs: JSONValue = ["productId": "KIT-1001", "quantity": 2, "itemPrice": 1990]

    // MARK: - The cart and the purchase

    @Test func aPipedDemoPurchaseSendsTheCartWithTheSKUTwiceAtItsCataloguePrice() async throws {
        let repl = try await DemoREPL()
        await repl.run(":product KIT-1001")
        let added = await repl.run(":cart add KIT-1001 2").printed
        #expect(
            added == [
                "(add-to-cart-v1: 2 × KIT-1001, 3980 RUB; cart: 2 units, 3980 RUB)",
                "(in-app campaign shown: demo-c-cart-reminder)",
            ])
        let bought = await repl.run(":buy").printed
        #expect(bought.first?.hasPrefix("(purchase-v1: order 00000000-0000-4000-8000-") == true, "\(bought)")
        // The purchase is kept once it is in the store (DL5), before Gravity's answer brings the
        // campaign: the cart empties first.
        #expect(bought.dropFirst() == ["(the cart is empty now)", "(in-app campaign shown: demo-c-purchase-thanks)"])

        let add = try #require(events(repl, "add-to-cart-v1").first)
        #expect(add.fields["productId"] == "KIT-1001")
        #expect(add.fields["quantity"] == 2)
        #expect(add.fields["value"] == 3980)
        #expect(add.fields["currency"] == "RUB")
        #expect(cart(add) == [Self.twoMugs], "the cart after the addition")
        // Two units at the catalogue's 1990 each: one line of quantity 2, `itemPrice` the unit's.
        let purchase = try #require(events(repl, "purchase-v1").first)
        #expect(cart(purchase) == [Self.twoMugs])
        #expect(purchase.fields["value"] == 3980)
        #expect(purchase.fields["uniqueTransactionId"]?.stringValue?.isEmpty == false)
        #expect(await repl.run(":cart").printed == ["(the cart is empty: :cart add SKU [QTY] puts a product in it)"])
    }

    @Test func everyPurchaseHasATransactionIdOfItsOwn() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":product KIT-1001", ":cart add KIT-1001", ":buy", ":cart add ELC-2001", ":buy"])
        let ids = events(repl, "purchase-v1").compactMap { $0.fields["uniqueTransactionId"]?.stringValue }
        #expect(ids.count == 2 && Set(ids).count == 2, "\(ids)")
        #expect(events(repl, "purchase-v1").map { cart($0)?.count } == [1, 1], "the cart was empty after the first")
    }

    @Test func nothingIsSentWithoutAScreenOrForAnEmptyCart() async throws {
        let repl = try await DemoREPL()
        #expect(
            await repl.run(":cart add KIT-1001").printed == [
                "go to a screen first (:home or :product SKU): an event carries the screen it",
                "  happened on (nothing was sent)",
            ])
        await repl.run(":home")
        #expect(await repl.run(":buy").printed == ["the cart is empty: :cart add SKU [QTY] first (nothing was sent)"])
        #expect(repl.demoStore?.receivedEvents.isEmpty == true)
    }

    @Test func aMistypedCartSubcommandIsNamedNotTakenForTheCartScreen() async throws {
        let repl = try await DemoREPL()
        await repl.run(":home")
        #expect(
            await repl.run(":cart ad KIT-1001").printed == [
                "did you mean :cart add KIT-1001? (nothing was sent)"
            ])
        #expect(
            await repl.run(":cart remvoe KIT-1001").printed == [
                "did you mean :cart remove KIT-1001? (nothing was sent)"
            ])
        #expect(repl.demoStore?.receivedEvents.filter { $0.type != "screenview" }.isEmpty == true)
        // SKUs are still the cart screen.
        #expect(await repl.run(":cart KIT-1001 red").printed.first == "(screen: cart KIT-1001,red)")
    }

    @Test func aRemovalSendsWhatWentOutAndTheCartAfter() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":product KIT-1001", ":cart add KIT-1001 3", ":cart add ELC-2001"])
        #expect(
            await repl.run(":cart remove KIT-1001 5").printed == [
                "the cart holds 3 units of KIT-1001: :cart remove KIT-1001 takes them all out",
                "  (nothing was sent)",
            ])
        await repl.run(":cart remove kit-1001 1")
        await repl.run(":cart remove ELC-2001")
        let removals = events(repl, "remove-from-cart-v1")
        #expect(removals.map { $0.fields["productId"] } == ["KIT-1001", "ELC-2001"], "the cart's spelling of the SKU")
        #expect(removals.map { $0.fields["quantity"] } == [1, 1])
        #expect(removals.map { $0.fields["value"] } == [1990, 4990])
        #expect(
            cart(removals.first) == [
                ["productId": "KIT-1001", "quantity": 2, "itemPrice": 1990],
                ["productId": "ELC-2001", "quantity": 1, "itemPrice": 4990],
            ])
        #expect(cart(removals.last) == [["productId": "KIT-1001", "quantity": 2, "itemPrice": 1990]])
        #expect(await repl.run(":cart remove ELC-2001").printed == ["ELC-2001 is not in the cart (nothing was sent)"])
        #expect(
            await repl.run(":cart").printed == [
                "cart: 2 units, 1 line", "  2 × KIT-1001 at 1990 RUB = 3980 RUB — Термокружка 450 мл",
                "  total 3980 RUB",
            ])
    }

    @Test func theCatalogueNamesTheSKUAndAPriceCanBeGiven() async throws {
        let repl = try await DemoREPL()
        await repl.run(":product KIT-1001")
        await repl.run(":cart add kit-1001")
        #expect(events(repl, "add-to-cart-v1").first?.fields["productId"] == "KIT-1001", "as the feed spells it")
        #expect(
            await repl.run(":cart add NOPE-1").printed == [
                "no product NOPE-1 in the demo catalogue: Tab lists its SKUs (nothing was sent)"
            ])
        #expect(
            await repl.run(":cart add KIT-1008").printed == [
                "KIT-1008 has no price in the demo catalogue: give one, :cart add KIT-1008 1 @990",
                "  (nothing was sent)",
            ])
        await repl.run(":cart add KIT-1008 3 @19.99")
        let given = try #require(events(repl, "add-to-cart-v1").last)
        #expect(given.fields["value"] == 59.97)
        #expect(cart(given)?.last == ["productId": "KIT-1008", "quantity": 3, "itemPrice": 19.99])
        #expect(events(repl, "add-to-cart-v1").count == 2, "refusals sent nothing")
    }

    @Test func aWishIsSentAtTheProductsPrice() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":product KIT-1001", ":wish ELC-2002"])
        let wish = try #require(events(repl, "add-to-wishlist-v1").first)
        #expect(fieldsButTime(wish) == ["productId": "ELC-2002", "value": 32990])
        #expect(await repl.run(":cart").printed.last == "wishlist: ELC-2002")
    }

    // MARK: - Account, push permission and events of the app's own

    @Test func loginAndSignupSendThePhoneHashOrTheIdAsTypedAndKeepTheIdentity() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":home", ":login +7 (999) 123-45-67", ":signup alice", ":login"])
        let logins = events(repl, "login-v1")
        #expect(
            logins.map(fieldsButTime) == [
                [
                    "cuid": "3ea3b0328a0f8f8056414a434a80f7625bfe7f5317c055fac455076b255e6716",
                    "cuidType": "phone_hash",
                ],
                [:],
            ])
        #expect(events(repl, "signup-v1").map(fieldsButTime) == [["cuid": "alice"]])
        #expect(Set(logins.map(\.uid)) == ["demo-u-1"], "a login event is no identity change (that is :user)")
        #expect(repl.visits == 1)
    }

    @Test func thePushPermissionGoesWithEveryLaterRequest() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":home", ":login"])
        #expect(
            await repl.run(":push denied").printed == [
                "(notification permission: denied, sent as device.permission from now on)"
            ])
        await repl.run(lines: [":login", ":push GRANTED", ":event app-opened-v1 App Opened"])
        #expect(repl.demoStore?.receivedEvents.map(\.permission) == ["unknown", "denied", "granted"])
        #expect(
            await repl.run(":push").printed == [
                "(notification permission: granted; :push granted|denied|unknown changes it)"
            ])
        #expect(await repl.run(":push maybe").printed == ["usage: :push [STATUS] (granted, denied or unknown)"])
    }

    @Test func aCustomEventCarriesItsNameAndProperties() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":home", ":event survey-completed-v1 Survey Completed score=9 variant=A"])
        let event = try #require(events(repl, "survey-completed-v1").first)
        #expect(event.name == "Survey Completed")
        #expect(event.customProps == ["score": "9", "variant": "A"])
        #expect(
            await repl.run(":event t n a=1 a=2").printed == [
                "usage: :event TYPE NAME [k=v…] (a type, a name, then key=value properties, each",
                "  key once)",
            ])
    }

    // MARK: - The recommendation widget (B12 as the host app reports it)

    private func widgetHits(_ repl: DemoREPL) -> [String] {
        (repl.demoStore ?? repl.liveStore)?.trackingHits.map(\.absoluteString).filter { $0.contains("/w/") }
            .map { $0.replacingOccurrences(of: "https://t.demo-store.example/w/", with: "") } ?? []
    }

    @Test func aWidgetReportsItsImpressionItsViewsAClickAndNoMore() async throws {
        let repl = try await DemoREPL()
        await repl.run(":product KIT-1001")
        let drawn = await repl.run(":widget").printed
        #expect(drawn.first == "Похожие товары (1–3 of 4)")
        #expect(drawn.contains { $0.hasPrefix("┌─ 1 ───") })
        #expect(drawn.last == "(widget impression: Похожие товары)")
        let decision = try #require(widgetHits(repl).first?.split(separator: "=").last)
        // Tracking URLs go up to four at a time: which lands first is not defined.
        #expect(widgetHits(repl).sorted() == ["i?d=\(decision)", "l?d=\(decision)"], "load (B7) and the drawing")
        let seen = await repl.run(":wait 2s").printed
        #expect(seen.first?.hasPrefix("(widget seen: Похожие товары · Кружка керамическая") == true, "\(seen)")
        #expect(
            widgetHits(repl).dropFirst(2).sorted() == [
                "v?d=\(decision)", "vi?d=\(decision)&s=KIT-1002", "vi?d=\(decision)&s=KIT-1004",
                "vi?d=\(decision)&s=KIT-1005",
            ])
        await repl.run(lines: [":widget right", ":wait 2s", ":wait 5s"])
        #expect(widgetHits(repl).last == "vi?d=\(decision)&s=KIT-1006", "the card scrolled into view, once")
        #expect(widgetHits(repl).count == 7)
        #expect(
            await repl.run(":widget tap 1").printed == [
                "no card 1 of the widget on screen to tap (:widget left and right scroll)"
            ])
        let tapped = await repl.run(":widget tap 2").printed
        #expect(tapped.prefix(2) == ["(widget click: Сковорода антипригарная 28 см)", "(screen: product KIT-1004)"])
        #expect(widgetHits(repl).last == "c?d=\(decision)&s=KIT-1004")
        await repl.run(":wait 5s")
        #expect(widgetHits(repl).count == 8, "another screen took the widget away: no close, no more views")
        #expect(await repl.run(":widget close").printed == ["no widget on screen: :widget fetches one"])
    }

    @Test func aWidgetCountsAsSeenOnlyWhileNeitherTheChatNorTheBackgroundHidesIt() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":product KIT-1001", ":widget", ":background", ":wait 2s"])
        #expect(widgetHits(repl).count == 2, "load and impression only: a window in the background is not seen")
        await repl.run(lines: [":foreground", ":wait 500ms", ":open", ":wait 2s"])
        #expect(widgetHits(repl).count == 2, "the chat covers the widget")
        await repl.run(lines: [":close", ":wait 400ms"])
        #expect(widgetHits(repl).count == 2, "half a second is not a second")
        await repl.run(":wait 700ms")
        #expect(widgetHits(repl).count == 6, "the widget and its three cards in view, once the chat closed")
        let closed = await repl.run(":widget close").printed
        #expect(closed == ["(widget closed)"])
        #expect(widgetHits(repl).last?.hasPrefix("x?d=") == true)
    }

    @Test func aWidgetSaysWhyItCannotBeDrawn() async throws {
        let repl = try await DemoREPL()
        #expect(
            await repl.run(":widget").printed == [
                "go to a screen first (:home or :product SKU): a widget belongs to a screen"
            ])
        await repl.run(":home")
        #expect(
            await repl.run(":widget nothing-here").printed == ["no widget: nothing for nothing-here on this screen"])
        #expect(
            await repl.run(":widget shopping-assistant").printed == [
                "no widget: the content of shopping-assistant has no products to draw"
            ])
        await repl.run(":open")
        #expect(
            await repl.run(":widget").printed == [
                "the chat is open: :close it first — a widget is on the app's screen, under the",
                "  chat",
            ])
    }

    // MARK: - Live services: no catalogue

    @Test func onLiveServicesAPriceComesFromWhatTheSessionWasShownOrTheCommand() async throws {
        let repl = try await DemoREPL(liveServices: true)
        #expect(repl.demoStore == nil)
        await repl.run(":product KIT-1001")
        #expect(
            await repl.run(":cart add KIT-1002").printed == [
                "no price known for KIT-1002: live services have no catalogue here; add a product",
                "  a reply or :widget has shown, or give its price: :cart add KIT-1002 1 @PRICE",
                "  (nothing was sent)",
            ])
        await repl.run(lines: [":widget", ":cart add KIT-1002 2", ":cart add OWN-1 @5.50"])
        await repl.run(lines: [":widget close", ":open", "Нужны наушники", ":cart add ELC-2002"])
        let adds = events(repl, "add-to-cart-v1")
        #expect(adds.map { $0.fields["productId"] } == ["KIT-1002", "OWN-1", "ELC-2002"])
        #expect(adds.map { $0.fields["value"] } == [1380, 5.5, 32990], "the widget's, the command's, the reply's")
        #expect(adds.map { $0.fields["currency"] } == ["RUB", nil, "RUB"], "the currency the answer gave, if any")
        #expect(adds.last?.fields["cart"]?.arrayValue?.count == 3)
    }

    @Test func onLiveServicesAProductAReplyShowedKeepsItsPriceAfterANewChatOrAClose() async throws {
        let repl = try await DemoREPL(liveServices: true)
        await repl.run(lines: [":product KIT-1001", ":open", "Нужны наушники", ":new", ":cart add ELC-2002"])
        await repl.run(lines: [":close", ":cart add ELC-2002"])
        let adds = events(repl, "add-to-cart-v1")
        #expect(adds.map { $0.fields["productId"] } == ["ELC-2002", "ELC-2002"])
        #expect(adds.map { $0.fields["value"] } == [32990, 32990], "the price the earlier reply showed")
    }

    // MARK: - Typing

    @Test func tabCompletesTheShopsSubcommandsStatusesAndOnTheDemoStoreItsSKUsAndWidget() {
        let plain = REPLSession.completion
        let demo = plain.addingDemoCatalogue()
        let skus = DemoCatalog.products.compactMap(\.sku)
        #expect(plain.candidates(for: ":cart ") == ["add", "remove"])
        #expect(plain.candidates(for: ":cart add ") == [], "live services: no catalogue")
        #expect(demo.candidates(for: ":cart ") == ["add", "remove"] + skus, "or the cart screen's SKUs")
        #expect(demo.candidates(for: ":cart add ") == skus)
        #expect(demo.candidates(for: ":cart remove ") == skus)
        #expect(demo.candidates(for: ":cart add KIT-1001 ") == [], "a quantity")
        #expect(demo.candidates(for: ":cart KIT-1001 ") == skus, "the cart screen takes any number of SKUs")
        #expect(demo.candidates(for: ":wish ") == skus)
        #expect(plain.candidates(for: ":push ") == ["granted", "denied", "unknown"])
        #expect(plain.candidates(for: ":widget ") == ["tap", "left", "right", "close", "on", "off"])
        #expect(demo.candidates(for: ":widget ") == ["tap", "left", "right", "close", "on", "off", "recommendations"])
        #expect(
            LineCompletion.resolve(
                textBeforeCursor: ":cart add KIT-100", candidates: demo.candidates(for: ":cart add KIT-100"))
                == .list((1...8).map { "KIT-100\($0)" }))
        #expect(REPLSession.hint(for: ":cart ") == "add|remove SKU [QTY]")
        #expect(REPLSession.hint(for: ":cart add KIT-1001") == "[QTY]")
        #expect(REPLSession.hint(for: ":event ") == "TYPE NAME [k=v…]")
    }
}
