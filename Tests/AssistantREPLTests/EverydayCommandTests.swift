import DemoStore
import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// The small things a person meets in the first ten minutes: every command answers, says only
/// what is true, and a fixed width can follow the terminal again.
@Suite(.timeLimit(.minutes(2))) struct EverydayCommandTests {
    private func withReply(width: Int = 80) async throws -> DemoREPL {
        let repl = try await DemoREPL(width: width)
        await repl.run(lines: [":product KIT-1001", ":open", "подарок"])
        return repl
    }

    @Test func aMissingSuggestSaysWhyOnlyWhenItIsTrue() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: [":product KIT-1001", ":open"])
        #expect(await repl.run(":s 99").printed == ["no suggest 99 on screen (there are 3: :s 1 to :s 3)"])
        await repl.run(":fault slow-reply")
        // A message on its way hides the suggests: then, and only then, that is the reason.
        let pending = await repl.run(":s 1 &").printed
        #expect(!pending.contains { $0.contains("no suggest") })
        #expect(
            await repl.run(":s 2").printed == [
                "no suggest 2 on screen (suggests are hidden while a message is on its way)"
            ])
    }

    @Test func scrollingPastAnEndSaysSoAndDrawsNothing() async throws {
        let repl = try await withReply()
        #expect(await repl.run(":left").printed == ["(at the first card already)"])
        #expect(await repl.run(":right").printed.first == "Подарки (4–6 of 6)")
        #expect(await repl.run(":right").printed == ["(at the last card already)"])
        #expect(await repl.run(":left").printed.first == "Подарки (1–3 of 6)")
    }

    @Test func aSecondCloseSaysTheChatIsNotOpen() async throws {
        let repl = try await withReply()
        #expect(await repl.run(":close").printed.first == "── chat closed ──")
        #expect(await repl.run(":close").printed == ["the chat is not open"])
    }

    @Test func impressionsThatCountTogetherShareOneLine() async throws {
        let repl = try await withReply(width: 200)
        let printed = await repl.run(":wait 2s").printed
        #expect(printed.count == 2, "\(printed)")
        let line = try #require(printed.first)
        #expect(line.hasPrefix("(impressions: Термокружка 450 мл · Наушники беспроводные Tune 520BT · Умная"))
        #expect(line.filter { $0 == "·" }.count == 5, "six cards, one line")
        #expect(line.hasSuffix("…)"), "a long name is shortened: the carousel shows it whole")
        #expect(printed.last == "(2s later)")
    }

    @Test func widthAutoFollowsTheTerminalAgain() async throws {
        let state = CarouselState(width: 80, style: .plain)
        state.setWidth(30)
        #expect(!state.terminalResized(TerminalResize(columns: 100, sequence: 1)), "a fixed width ignores resizes")
        #expect(state.width == 30)
        #expect(state.followTerminal() == 100, "auto goes to the terminal's latest width")
        #expect(state.terminalResized(TerminalResize(columns: 60, sequence: 2)), "and follows it from then on")
        #expect(state.width == 60)

        // --width in a terminal starts fixed; auto goes to the terminal's own width.
        let fixed = CarouselState(width: 40, terminalWidth: 120, style: .plain)
        #expect(!fixed.terminalResized(TerminalResize(columns: 130, sequence: 1)))
        #expect(fixed.width == 40)
        #expect(fixed.followTerminal() == 130)

        let repl = try await withReply()
        let narrowed = await repl.run(":width 30").printed
        #expect(narrowed.prefix(2) == ["(width 30, fixed until :width", "  auto)"])
        #expect(narrowed.allSatisfy { DisplayWidth.of($0) <= 30 })
        let back = await repl.run(":width auto").printed
        #expect(back.first == "(width 80, following the terminal)")
        #expect(back.contains("Подарки (1–3 of 6)"), "redrawn for 80 columns")
        let policy = REPLEnvironment.Policy.commandLine(
            CommandLineOptions(), interactive: true, width: 40, terminalWidth: 120, stateDirectory: nil)
        #expect(policy.settings.terminalWidth == 120)
        var recording = CommandLineOptions()
        recording.recordPath = "x.transcript"
        let recorded = REPLEnvironment.Policy.commandLine(
            recording, interactive: true, width: 40, terminalWidth: 120, stateDirectory: nil)
        #expect(recorded.settings.terminalWidth == nil, "a recording knows only its %width")
    }

    @Test func liveServicesGetALiveBannerAndNoDemoFaults() async throws {
        let options = try CommandLineOptions.parse(
            ["--gravity-url", "http://127.0.0.1:9", "--shopping-url", "http://127.0.0.1:9"], environment: [:])
        let printed = Locked<[String]>([])
        let environment = await REPLEnvironment(
            policy: .commandLine(options, interactive: false, width: 80, stateDirectory: nil),
            output: REPLOutput { line in printed.withLock { $0.append(line) } })
        await environment.session.run(reader: ScriptLineReader(lines: [":clear-faults", ":fault conflict"]))
        let lines = printed.withLock { $0 }
        #expect(
            lines.prefix(2) == [
                "Shopping assistant REPL — live services",
                "Type :help for commands. Start with :home or :product SKU (a SKU of your shop).",
            ])
        #expect(!lines.contains { $0.contains("KIT-1001") })
        #expect(lines.filter { $0 == "faults are a demo store feature" }.count == 2)
        #expect(!lines.contains("(faults cleared)"))
    }
}
