import DemoStore
import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct REPLCommandTableTests {
    let table = REPLCommandTable.standard

    @Test func everyCommandHasHelpAndANameNoOtherCommandAnswersTo() throws {
        var words = Set<String>()
        for command in table.commands {
            #expect(!command.summary.isEmpty, ":\(command.name) has no help")
            for word in [command.name] + command.aliases {
                #expect(words.insert(word).inserted, ":\(word) is declared twice")
                let found = try #require(table.find(word), ":\(word)")
                #expect(found.name == command.name)
                #expect(table.help(for: word)?.hasPrefix(command.usage + " — " + command.summary) == true)
                #expect(table.help(for: ":" + word) == table.help(for: word))
            }
            let summary = REPLCommandTable.summary(command)
            #expect(
                table.helpLines.contains { $0.hasPrefix("  " + command.usage + " ") && $0.hasSuffix(summary) },
                ":\(command.name) is missing from :help")
        }
        #expect(table.helpLines.first == "Commands:")
        #expect(table.helpLines.count == table.commands.count + 2)
    }

    @Test func aliasesAreListedWithTheirCommand() {
        #expect(table.help(for: "suggest") == ":s N — send suggest N (also :suggest)")
        #expect(table.helpLines.contains { $0.hasSuffix("leave (also :exit, :q)") })
    }

    @Test func tabCompletesCommandNamesAndArgumentsFromTheTable() {
        let names = REPLSession.completer(":")
        #expect(names == table.commands.map { ":" + $0.name })
        #expect(
            LineCompletion.resolve(textBeforeCursor: ":pro", candidates: REPLSession.completer(":pro"))
                == .insert("duct "))
        #expect(REPLSession.completer(":fault ") == DemoFault.allCases.map(\.rawValue))
        #expect(REPLSession.completer(":tap 2 ") == [])
    }

    @Test func everyCommandRunsItsOwnHandler() async throws {
        // Each command, with no argument, on a fresh session: it either does its work or says
        // how it is used, and never falls through to "unknown command".
        for command in table.commands where command.name != "quit" {
            let repl = try await DemoREPL()
            let result = await repl.run(":" + command.name)
            #expect(result.keepGoing, ":\(command.name)")
            #expect(!result.printed.contains { $0.hasPrefix("unknown command") }, ":\(command.name)")
        }
    }

    @Test func aliasesDispatchLikeTheirCommand() async throws {
        for word in ["quit", "exit", "q"] {
            let repl = try await DemoREPL()
            #expect(await repl.run(":" + word).keepGoing == false, ":\(word)")
        }
        let repl = try await DemoREPL()
        await repl.run(lines: [":product KIT-1001", ":open"])
        let bySuggest = await repl.run(":suggest 2").printed
        #expect(bySuggest.first == "you › Нужны наушники")
        #expect(await repl.run(":button 9").printed == ["usage: :b N (a button of the latest reply)"])
        #expect(await repl.run(":b 9").printed == ["usage: :b N (a button of the latest reply)"])
    }

    @Test func anUnknownCommandIsNamedAndNothingElseHappens() async throws {
        let repl = try await DemoREPL()
        let result = await repl.run(":frobnicate now")
        #expect(result.keepGoing)
        #expect(result.printed == ["unknown command :frobnicate — :help lists them"])
        #expect(await repl.run(":").printed == ["unknown command ':' alone — :help lists them"])
        #expect(await repl.run(":help frobnicate").printed == ["no command :frobnicate — :help lists them"])
    }

    @Test func anOutOfRangeWidthSaysTheAllowedRange() async throws {
        let repl = try await DemoREPL()
        for argument in ["1001", "19", "wide", ""] {
            #expect(await repl.run(":width " + argument).printed == ["usage: :width N (N from 20 to 1000)"])
        }
        #expect(await repl.run(":width 1000").printed == ["(width 1000)"])
    }
}
