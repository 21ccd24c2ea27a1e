import DemoStore
import ShoppingAssistant
import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct REPLCommandTableTests {
    let table = REPLCommandTable.standard

    @Test func everyCommandHasHelpAndANameNoOtherCommandAnswersTo() throws {
        var words = Set<String>()
        for command in table.commands {
            #expect(!command.summary.isEmpty, ":\(command.name) has no help")
            #expect(command.example.hasPrefix(":" + command.name), ":\(command.name)'s example uses it")
            for related in command.related { #expect(table.find(related) != nil, ":\(command.name) → :\(related)") }
            for word in command.words {
                #expect(words.insert(word).inserted, ":\(word) is declared twice")
                let found = try #require(table.find(word), ":\(word)")
                #expect(found.name == command.name)
                #expect(table.help(for: word).first == command.usage)
                #expect(table.help(for: ":" + word) == table.help(for: word))
            }
            let summary = REPLCommandTable.summary(command)
            #expect(
                table.helpLines(messagesWait: false).contains {
                    $0.hasPrefix("  " + command.usage + " ") && $0.hasSuffix(summary)
                }, ":\(command.name) is missing from :help")
        }
        let lines = table.helpLines(messagesWait: false)
        #expect(lines.first == REPLCommand.Group.screens.rawValue + ":")
        #expect(lines.count == table.commands.count + REPLCommand.Group.allCases.count + 3)
    }

    @Test func helpForOneCommandGivesSyntaxExampleRelatedAndGroup() async throws {
        #expect(
            table.help(for: "tap") == [
                ":tap N [twice]", "  tap product card N of the carousel on screen (twice: a double tap)",
                "  example: :tap 2", "  related: :left, :right, :b", "  group:   The chat",
            ])
        #expect(table.help(for: "suggest").contains("  also:    :suggest"))
        // `:queue`'s words are explained where it is: each status it shows, and what counts.
        let queue = table.help(for: "queue").joined(separator: "\n")
        for status: PendingDelivery.Status in [.persisting, .waiting, .sending, .queued, .draining] {
            #expect(queue.contains(status.rawValue + ":"), "\(status) is explained: \(queue)")
        }
        #expect(queue.contains("only server failures"))
        let repl = try await DemoREPL()
        for word in [":h", ":?", ":HELP", ":he"] {
            #expect(await repl.run(word + " wait").printed.first == ":wait DURATION", "\(word)")
        }
        #expect(await repl.run(":help pro").printed.first == ":product SKU", "a prefix names the command")
        #expect(await repl.run(":help wiat").printed == ["no command :wiat — did you mean :wait?"])
    }

    @Test func aUniquePrefixOrAnyCaseRunsTheCommandAndAnAmbiguousOneSaysWhich() async throws {
        let repl = try await DemoREPL()
        #expect(await repl.run(":PRO KIT-1001").printed.first == "(screen: product KIT-1001)")
        #expect(await repl.run(":Op").printed.contains("(presentation lock: assistant)"))
        #expect(
            await repl.run(":l").printed == [":l could be :left, :like, :lock, :log, :login, :logout — type more of it"]
        )
        // Leaving needs the whole word: a prefix never quits by accident.
        #expect(await repl.run(":qu").keepGoing)
        #expect(await repl.run(":ex").keepGoing)
        #expect(await repl.run(":QUIT").keepGoing == false)
    }

    @Test func aMistypedCommandGetsDidYouMean() async throws {
        let repl = try await DemoREPL()
        #expect(await repl.run(":wiat 1s").printed == ["unknown command :wiat — did you mean :wait?"])
        #expect(await repl.run(":prodcut X").printed == ["unknown command :prodcut — did you mean :product?"])
        #expect(await repl.run(":lgo").printed == ["unknown command :lgo — did you mean :log?"])
    }

    @Test func tabCompletesCommandNamesAndArgumentsFromTheTable() {
        let names = REPLSession.completer(":")
        #expect(names == table.commands.map { ":" + $0.name })
        #expect(
            LineCompletion.resolve(textBeforeCursor: ":pro", candidates: REPLSession.completer(":pro"))
                == .insert("duct "))
        #expect(REPLSession.completer(":fault ") == DemoFault.allCases.map(\.rawValue))
        #expect(REPLSession.completer(":fault slow-reply ") == ["once", "sticky"])
        #expect(REPLSession.completer(":tap ") == [], "the first argument is a card number")
        #expect(REPLSession.completer(":tap 2 ") == ["twice"])
        #expect(REPLSession.completer(":tap 2 twice ") == [])
        #expect(REPLSession.completer(":width ") == ["auto"])
        #expect(
            LineCompletion.resolve(textBeforeCursor: ":help pro", candidates: REPLSession.completer(":help pro"))
                == .insert("duct "))
        #expect(REPLSession.completer(":pro ") == [], "a prefix names the command for its arguments too")
    }

    @Test func theHintIsWhatTheCommandTakesNext() {
        #expect(REPLSession.hint(for: ":tap ") == "N [twice]")
        #expect(REPLSession.hint(for: ":tap 2") == "[twice]")
        #expect(REPLSession.hint(for: ":tap 2 twice") == "")
        #expect(REPLSession.hint(for: ":fault ") == "NAME [once|sticky]")
        #expect(REPLSession.hint(for: ":pro ") == "SKU")
        #expect(REPLSession.hint(for: ":tap") == "", "nothing before the command word ends")
        #expect(REPLSession.hint(for: ":open ") == "")
        #expect(REPLSession.hint(for: "подарок ") == "")
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

    // A word after a command that takes none is a slip: the command does not run.
    @Test func aCommandThatTakesNoArgumentRefusesOneAndDoesNothing() async throws {
        let repl = try await DemoREPL()
        let quit = await repl.run(":quit now")
        #expect(quit.keepGoing, "it did not quit")
        #expect(quit.printed == ["usage: :quit (it takes no argument)"])
        await repl.run(lines: [":product KIT-1001", ":cart add KIT-1001 1"])
        #expect(await repl.run(":buy now please").printed == ["usage: :buy (it takes no argument)"])
        #expect(repl.demoStore?.receivedEvents.contains { $0.type == "purchase-v1" } == false, "nothing bought")
        #expect(await repl.run(":restart now").printed == ["usage: :restart (it takes no argument)"])
        #expect(await repl.run(":quit").keepGoing == false)
    }

    @Test func withTheChatOpenAnUnknownCommandSaysHowToSendItAsAMessage() async throws {
        let repl = try await DemoREPL(width: 200)
        await repl.run(lines: [":product KIT-1001", ":open"])
        #expect(
            await repl.run(":) спасибо").printed == [
                "unknown command :) — :help lists them; a message that starts with ':' is sent as ::) спасибо"
            ])
        #expect(await repl.run("::) спасибо").printed.first == "you › :) спасибо")
    }

    @Test func anOutOfRangeWidthSaysTheAllowedRange() async throws {
        let repl = try await DemoREPL()
        for argument in ["1001", "19", "wide", ""] {
            #expect(await repl.run(":width " + argument).printed == ["usage: :width N|auto (N from 20 to 1000)"])
        }
        #expect(await repl.run(":width 1000").printed == ["(width 1000, fixed until :width auto)"])
        #expect(await repl.run(":width auto").printed == ["(width 80, following the terminal)"])
    }
}
