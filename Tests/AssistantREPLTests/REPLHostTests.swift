import Foundation
import Testing

@testable import AssistantREPL
@testable import ShoppingAssistant

@Suite(.timeLimit(.minutes(2))) struct REPLHostTests {
    static let entryButton = "[ Спросите помощника ]  ← entry button (:open)"

    @Test func loggingInRunsTheScreenFlowAgainForTheNewIdentity() async throws {
        let repl = try await DemoREPL()
        await repl.run(":product KIT-1001")
        #expect(repl.visits == 1)
        let printed = await repl.run(":user alice").printed
        #expect(printed == ["(identity changed to alice)", "(screen: product KIT-1001)", Self.entryButton])
        #expect(repl.visits == 2)
        #expect(await repl.run(":state").printed.contains("user.uid:    demo-u-2"))  // the uid Gravity gives alice
        #expect(await repl.session.prompt() == "product KIT-1001 [Спросите помощника]> ")
    }

    @Test func loggingOutRunsTheScreenFlowAgainForTheNextVisitor() async throws {
        let repl = try await DemoREPL()
        await repl.run(":product KIT-1001")
        #expect(await repl.run(":state").printed.contains("user.uid:    demo-u-1"))
        let printed = await repl.run(":logout").printed
        #expect(printed == ["(identity reset)", "(screen: product KIT-1001)", Self.entryButton])
        #expect(repl.visits == 2)
        #expect(await repl.run(":state").printed.contains("user.uid:    demo-u-2"))
    }

    @Test func anIdentityChangeBeforeAnyScreenOnlyChangesTheIdentity() async throws {
        let repl = try await DemoREPL()
        #expect(await repl.run(":user alice").printed == ["(identity changed to alice)"])
        #expect(repl.visits == 0)
    }

    @Test func aProductTapNavigatesToThatProductsPageAfterTheChatCloses() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":product KIT-1001", ":open", "подарок"])
        let printed = await repl.run(":tap 2").printed
        let closed = try #require(printed.firstIndex(of: "── chat closed ──"))
        let navigated = try #require(printed.firstIndex { $0.hasPrefix("→ navigate: product page SKU ELC-2001") })
        let shown = try #require(printed.firstIndex(of: "(screen: product ELC-2001)"))
        #expect(closed < navigated && navigated < shown)
        // The headphones' page view brings an in-app campaign (the demo's campaign screens): it is
        // shown after the entry button, which never waits for the page view (E5).
        #expect(printed.suffix(2) == [Self.entryButton, "(in-app campaign shown: demo-c-promo-headphones)"])
        #expect(repl.visits == 2)
        #expect(await repl.session.prompt() == "product ELC-2001 [Спросите помощника]> ")
        // The new screen's button opens the same dialog (D14): the reply is still there.
        #expect(await repl.run(":open").printed.contains { $0.hasPrefix("assistant › Подобрал") })
    }

    // The session of issue 20: a tap whose handler navigates to a screen that shows an in-app
    // campaign. The handler's navigation reports the page view while the hand-over is still
    // under way; the campaign is shown meanwhile, and the session goes on.
    // covers: H1, E5, PR10
    @Test func aTapToAScreenThatShowsACampaignEndsAndTheSessionGoesOn() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":product KIT-1001", ":open", "Нужны наушники"])
        let printed = await repl.run(":tap 1").printed
        #expect(
            printed == [
                "── chat closed ──", "(presentation lock: none)",
                "→ navigate: product page SKU ELC-2001 (Наушники беспроводные Tune 520BT)",
                "(screen: product ELC-2001)", Self.entryButton, "(in-app campaign shown: demo-c-promo-headphones)",
            ])
        #expect(await repl.run(":open").printed.contains("(presentation lock: assistant)"))
    }

    @Test func aStaleTapNavigatesNowhere() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":product KIT-1001", ":open", "подарок", ":new"])
        #expect(await repl.run(":tap 1").printed == ["tap ignored: it is from a chat that is gone (staleReference)"])
        #expect(await repl.session.prompt() == "chat[product KIT-1001]> ")
    }

    @Test func productsLeadToTheirSKUPageOrTheirURL() throws {
        func product(sku: String? = nil, url: String? = nil) -> AssistantAction {
            .openProduct(
                AssistantProduct(
                    itemId: "p-1", ref: AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: 0),
                    name: "Кружка", sku: sku,
                    url: url))
        }
        #expect(HostActionHandler.destination(of: product(sku: "KIT-1001")) == REPLHost.productPage("KIT-1001"))
        #expect(
            HostActionHandler.destination(of: product(sku: "KIT-1001", url: "https://shop.example/p/1"))
                == REPLHost.productPage("KIT-1001"))
        let page = HostActionHandler.destination(of: product(url: "https://shop.example/p/1"))
        #expect(page == PageContext(type: .other, location: "https://shop.example/p/1"))
        #expect(page.map(REPLHost.describe) == "other https://shop.example/p/1")
        #expect(HostActionHandler.destination(of: product(sku: "", url: "")) == nil)
        let delivery = try #require(URL(string: "https://shop.example/delivery"))
        #expect(HostActionHandler.destination(of: .followUrl(delivery)) == nil)
        #expect(HostActionHandler.destination(of: .openSupportChat(payload: [:])) == nil)
        #expect(HostActionHandler.destination(of: .custom(type: "add_to_cart", payload: [:])) == nil)
    }
}
