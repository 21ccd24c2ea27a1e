import DemoStore
import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@testable import AssistantREPL

/// A chat presenter drawing into a captured output fitted to `width`, its carousels drawn by
/// `CarouselBuilder` for the same width.
func chatScreen(width: Int) -> (ChatPresenter, REPLOutput) {
    let output = REPLOutput.capturing()
    output.fitLines { width }
    let presenter = ChatPresenter(
        output: output, width: { width }, elapsed: { .zero },
        render: { block in
            let rendering = CarouselBuilder().render(
                block: block, layout: AssistantProductLayout(availableWidth: width, isInteractionEnabled: true))
            return (rendering.lines, [])
        },
        onVisibleCardsChanged: { _ in })
    return (presenter, output)
}

/// The chat screen laid out for the terminal: every line within the width from 20 columns up,
/// one-line contexts truncated, and a resize followed unless a width was set.
@Suite(.timeLimit(.minutes(2))) struct ChatScreenLayoutTests {
    // MARK: - Presenter

    private static let longTitle = String(repeating: "Очень длинное название ", count: 20)

    private func presenter(width: Int) -> (ChatPresenter, REPLOutput) { chatScreen(width: width) }

    private func reply(buttons: [String], suggests: [String], text: String = "Подобрал идеи") -> AssistantChatSnapshot {
        let message = AssistantChatMessage(
            id: "am-1", role: .assistant, text: text,
            buttons: buttons.enumerated().map { index, title in
                AssistantReplyButton(
                    title: title, action: .followUrl(URL(fileURLWithPath: "/b")), isEnabled: index == 0)
            },
            canRate: true)
        return AssistantChatSnapshot(
            title: Self.longTitle, subtitle: "Помогу выбрать", messages: [message], suggests: suggests,
            isSending: false, canSend: true)
    }

    @Test func atTwentyColumnsEveryLineFitsAndNarrowRoomMovesTextBelowItsLabel() async throws {
        let (presenter, output) = presenter(width: 20)
        let text = "Подобрал 6 идей для подарка для женщины, могу показать дешевле или из другой категории"
        await presenter.presentAssistant(reply(buttons: [Self.longTitle, Self.longTitle], suggests: [], text: text))
        for line in output.lines {
            #expect(DisplayWidth.of(line) <= 20, "\(line.debugDescription)")
        }
        // Eight columns behind 'assistant › ' are too few: the reply goes below it.
        let reply = try #require(output.lines.firstIndex(of: "assistant › "))
        #expect(output.lines[reply + 1] == "  Подобрал 6 идей")
        // Behind 'you › ' there is room enough.
        let (user, userOutput) = self.presenter(width: 20)
        await user.updateAssistant(
            AssistantChatSnapshot(
                title: "", subtitle: nil, messages: [AssistantChatMessage(id: "u", role: .user, text: text)],
                suggests: [], isSending: false, canSend: true))
        #expect(userOutput.lines.prefix(2) == ["you › Подобрал 6", "      идей для"])
    }

    @Test func theStartScreensBoxStaysWholeWhenItsSubtitleWraps() async {
        let (presenter, output) = presenter(width: 20)
        await presenter.presentAssistant(
            AssistantChatSnapshot(
                title: "Помощник", subtitle: "Помогу выбрать подходящий товар.", messages: [], suggests: [],
                isSending: false, canSend: true))
        #expect(output.lines.prefix(3) == ["┌─ Помощник", "│  Помогу выбрать", "│  подходящий товар."])
    }

    @Test func buttonTitlesAndTheChatTitleAreTruncatedToOneLine() async {
        let (presenter, output) = presenter(width: 40)
        await presenter.presentAssistant(reply(buttons: [Self.longTitle, Self.longTitle], suggests: []))
        let lines = output.lines
        #expect(lines.first == "┌─ Очень длинное название Очень длинное…")
        #expect(lines.contains("[b1] Очень длинное название Очень длинн…"))
        #expect(lines.contains("[--] Очень длинное назв… (not available)"))
        #expect(lines.contains("rate this reply: :like or :dislike"))
    }

    @Test func suggestsGoOneUnderTheOtherWhenTheyDoNotFitOnOneLine() async throws {
        let (wide, wideOutput) = presenter(width: 80)
        await wide.presentAssistant(reply(buttons: [], suggests: ["Покажи дешевле", "А для мужчины?"]))
        #expect(wideOutput.lines.contains("suggests: [s1] Покажи дешевле  [s2] А для мужчины?"))

        let (narrow, narrowOutput) = presenter(width: 20)
        await narrow.presentAssistant(reply(buttons: [], suggests: ["Покажи дешевле", "А для мужчины?"]))
        let lines = narrowOutput.lines
        let start = try #require(lines.firstIndex(of: "suggests:"))
        #expect(
            Array(lines[(start + 1)...].prefix(4)) == [
                "  [s1] Покажи", "       дешевле", "  [s2] А для", "       мужчины?",
            ])
    }

    // MARK: - Width source

    @Test func aResizeIsFollowedUntilAWidthIsSet() {
        let state = CarouselState(width: 80, style: .plain)
        #expect(state.terminalResized(TerminalResize(columns: 60, sequence: 1)))
        #expect(state.width == 60)
        #expect(!state.terminalResized(TerminalResize(columns: 60, sequence: 2)))  // same width: no redraw
        #expect(!state.terminalResized(TerminalResize(columns: 200, sequence: 1)))  // older than the last one
        #expect(state.width == 60)
        #expect(state.terminalResized(TerminalResize(columns: 12, sequence: 3)))
        #expect(state.width == CarouselState.minimumWidth)
        state.setWidth(100)
        #expect(!state.terminalResized(TerminalResize(columns: 70, sequence: 4)))
        #expect(state.width == 100)
    }

    // MARK: - Session

    /// A piped session on the demo store, on virtual time.
    private struct DemoSession {
        let session: REPLSession
        let output: REPLOutput
        let time: VirtualTime

        init(width: Int) async {
            let time = VirtualTime()
            let store = DemoStore(clock: time.clock, activity: time.activity)
            let uuids = SequentialUUIDs()
            let engine = AssistantEngine(
                configuration: AssistantEngineConfiguration(apiKey: "demo-key", section: "demo"), transport: store,
                clock: time.clock, identityStore: InMemoryIdentityStore(), uuid: { uuids.next() },
                activity: time.activity)
            output = REPLOutput.capturing()
            session = await REPLSession(
                engine: engine, demoStore: store, output: output,
                settings: REPLSettings(
                    width: width, entrySelector: "assistant-entry", assistantSelector: "shopping-assistant",
                    interactive: false),
                clock: time.clock, time: time, replaying: false)
            self.time = time
        }

        func type(_ lines: String...) async {
            for line in lines {
                _ = await time.run { _ = await session.handle(line) }
                await time.activity.waitUntilIdle()
            }
        }

        /// Lines printed by `body`.
        func printed(_ body: () async -> Void) async -> [String] {
            let before = output.lines.count
            await body()
            await time.activity.waitUntilIdle()
            return Array(output.lines.dropFirst(before))
        }
    }

    @Test func aResizeRedrawsTheOpenChatsCarouselForTheNewWidth() async throws {
        let demo = await DemoSession(width: 200)
        await demo.type(":product KIT-1001", ":open", "подарок для мамы")
        let wide = demo.output.lines.filter { $0.hasPrefix("┌─ 1") }
        #expect(wide.count == 1)
        #expect(DisplayWidth.of(try #require(wide.first)) > 60)

        let redrawn = await demo.printed {
            await demo.session.terminalResized(TerminalResize(columns: 60, sequence: 1))
        }
        #expect(redrawn.first == "(width 60)")
        #expect(redrawn.contains { $0.hasPrefix("┌─ 1 ") })
        #expect(redrawn.allSatisfy { DisplayWidth.of($0) <= 60 })

        // The next scroll is drawn for 60 columns too.
        let scrolled = await demo.printed { await demo.type(":right") }
        #expect(!scrolled.isEmpty)
        #expect(scrolled.allSatisfy { DisplayWidth.of($0) <= 60 })
    }

    @Test func aSetWidthIsKeptThroughResizes() async {
        let demo = await DemoSession(width: 200)
        await demo.type(":product KIT-1001", ":open", "подарок для мамы", ":width 100")
        let ignored = await demo.printed {
            await demo.session.terminalResized(TerminalResize(columns: 40, sequence: 1))
        }
        #expect(ignored.isEmpty)
        let scrolled = await demo.printed { await demo.type(":right") }
        #expect(scrolled.contains { DisplayWidth.of($0) > 40 })
    }

    @Test func aResizeWithTheChatClosedRedrawsNothingButTheNextLinesFollowIt() async {
        let demo = await DemoSession(width: 80)
        await demo.type(":product KIT-1001")
        let nothing = await demo.printed {
            await demo.session.terminalResized(TerminalResize(columns: 20, sequence: 1))
        }
        #expect(nothing.isEmpty)
        let help = await demo.printed { await demo.type(":help") }
        #expect(help.count > 30)
        #expect(help.allSatisfy { DisplayWidth.of($0) <= 20 })
    }
}
