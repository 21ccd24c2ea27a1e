import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@testable import AssistantREPL
@testable import ShoppingAssistant

/// The host screen flow of behavior.md § E, on an engine test bed: what the entry button waits
/// for, and what a superseded screen may still do.
@Suite(.timeLimit(.minutes(2)))
struct ScreenControllerTests {
    static let page = PageContext(type: .product, data: ["SKU-1"], location: "app://product/SKU-1")
    static let other = PageContext(type: .cart, data: ["SKU-2"], location: "app://cart")
    static let entryButton = "[ Спросить ]  ← entry button (:open)"

    static func choose(selector: String, json: String) -> HTTPResponse {
        .json(
            200,
            [
                "user": ["uid": "u-1", "ses": "s-1"],
                "data": [
                    [
                        "selector": selector,
                        "payload": [["campaignId": "c-\(selector)", "contents": [["custom": ["json": json]]]]],
                    ]
                ],
            ])
    }

    static func isChoose(of selector: String) -> ScriptedTransport.Matcher {
        .request(.post, pathSuffix: "/choose") { body in
            ((body["data"] as? [[String: Any]])?.first?["selector"] as? String) == selector
        }
    }

    /// A bed whose engine has a session (a first page view answered), and a screen flow on it.
    static func world() async throws -> (EngineTestBed, ScreenController, REPLOutput) {
        let bed = await EngineTestBed(identityStore: InMemoryIdentityStore(uid: "u-1"))
        bed.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(.json(200, ["user": ["uid": "u-1", "ses": "s-1"]])))
        _ = try await bed.run { await $0.trackView(pageContext: Self.other) }
        let output = REPLOutput.capturing()
        let screens = ScreenController(
            engine: bed.engine, output: output, entrySelector: "assistant-entry",
            assistantSelector: "shopping-assistant", activity: bed.activity)
        return (bed, screens, output)
    }

    static func expectEntryAndAssistant(_ bed: EngineTestBed) {
        bed.transport.expect(
            isChoose(of: "assistant-entry"),
            .respond(choose(selector: "assistant-entry", json: #"{"enabled":true,"title":"Спросить"}"#)))
        bed.transport.expect(
            isChoose(of: "shopping-assistant"),
            .respond(
                choose(
                    selector: "shopping-assistant",
                    json: #"{"enabled":true,"title":"Помощник","subtitle":"Спросите","suggests":[]}"#)))
    }

    // A page view that never answers (a stalled Gravity host) does not hold the button back:
    // the flow reports it and goes on.
    // covers: E5
    @Test func aPageViewThatNeverAnswersNeverDelaysTheEntryButton() async throws {
        let (bed, screens, output) = try await Self.world()
        let visit = bed.transport.expect(.request(.post, pathSuffix: "/visit"), .deferred)
        Self.expectEntryAndAssistant(bed)
        try await bed.run { _ in await screens.show(Self.page) }
        #expect(await screens.entryButton == "Спросить")
        #expect(output.lines.last == Self.entryButton)
        #expect(
            bed.transport.requests.filter { $0.url.path.hasSuffix("/visit") }.count == 2,
            "the page view went out and is still unanswered")
        bed.transport.complete(visit, with: .json(200, ["campaigns": []]))
        try await bed.runUntilIdle()
        await screens.settle()
    }

    // On a first launch the page view goes alone (B8); when it fails, the flow still shows the
    // button: nothing on the screen path waits for the page view itself.
    // covers: E5, B8
    @Test func onAFirstLaunchAFailedPageViewDoesNotKeepTheButtonAway() async throws {
        let bed = await EngineTestBed()
        // A rejected page view is final (a refused connection would be tried again, DL1).
        bed.transport.expect(.request(.post, pathSuffix: "/visit"), .respond(.text(400, "")))
        Self.expectEntryAndAssistant(bed)
        let output = REPLOutput.capturing()
        let screens = ScreenController(
            engine: bed.engine, output: output, entrySelector: "assistant-entry",
            assistantSelector: "shopping-assistant", activity: bed.activity)
        try await bed.run { _ in await screens.show(Self.page) }
        #expect(await screens.entryButton == "Спросить")
        #expect(bed.transport.unmetExpectations.isEmpty)
    }

    // A screen shown while the previous one is still reporting its page view: the older one
    // stops at the generation check after that await — it asks for no entry content and cannot
    // take the screen task over from the newer one.
    // covers: E3, E5
    @Test func aScreenSupersededWhileItsPageViewIsReportedSendsNoEntryRequest() async throws {
        let bed = await EngineTestBed(identityStore: InMemoryIdentityStore(uid: "u-1"))
        bed.transport.expect(
            .request(.post, pathSuffix: "/visit"), .respond(.json(200, ["user": ["uid": "u-1", "ses": "s-1"]])))
        _ = try await bed.run { await $0.trackView(pageContext: Self.other) }
        Self.expectEntryAndAssistant(bed)
        let firstReported = OneTimeSignal(activity: bed.activity)
        let released = OneTimeSignal(activity: bed.activity)
        let calls = Locked(0)
        let output = REPLOutput.capturing()
        let screens = ScreenController(
            engine: bed.engine, output: output, entrySelector: "assistant-entry",
            assistantSelector: "shopping-assistant", activity: bed.activity,
            pageViewReported: {
                let call = calls.withLock { count -> Int in
                    count += 1
                    return count
                }
                guard call == 1 else { return }
                firstReported.fire()
                await released.wait()  // the first screen waits here while the second is shown
            })
        let first = bed.start { _ in await screens.show(Self.page) }
        try await bed.runUntilIdle()
        _ = try await bed.run { _ in await screens.show(Self.other) }
        released.fire()
        try await bed.runUntilIdle()
        #expect(first.returnedValue != nil)
        let entryRequests = bed.transport.requests.filter { request in
            ((Fixtures.body(request)["data"] as? [[String: Any]])?.first?["selector"] as? String) == "assistant-entry"
        }
        #expect(entryRequests.count == 1, "only the latest screen asks for its entry")
        let context = Fixtures.body(entryRequests.first)["ctx"] as? [String: Any]
        #expect((context?["location"] as? String) == Self.other.location)
        #expect(await screens.page == Self.other)
        #expect(output.lines.filter { $0 == Self.entryButton }.count == 1)
    }

    /// At 20 columns the button keeps both brackets, its title cut, and its hint goes below
    /// instead of being cut off.
    @Test func aNarrowTerminalKeepsTheEntryButtonWholeAndPutsItsHintBelow() async throws {
        let repl = try await DemoREPL(width: 20)
        let printed = await repl.run(":home").printed
        #expect(printed.contains("[ Спросите помощн… ]"), "\(printed)")
        #expect(printed.contains("  ← entry button"), "\(printed)")
        let wide = try await DemoREPL(width: 80)
        #expect(await wide.run(":home").printed.contains("[ Спросите помощника ]  ← entry button (:open)"))
    }
}

/// JSON bodies of the requests a bed's transport received.
enum Fixtures {
    static func body(_ request: HTTPRequest?) -> [String: Any] {
        guard let data = request?.body, let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }
}
