import DemoStore
import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// What a line typed with the chat open does: the words that leave other tools are answered
/// with the way out, `::` sends a message that starts with `:`, and ` &` is special only where
/// `:help` says so.
@Suite(.timeLimit(.minutes(2))) struct ChatModeInputTests {
    private func openChat(width: Int = 200) async throws -> DemoREPL {
        let repl = try await DemoREPL(width: width)
        await repl.run(lines: [":product KIT-1001", ":open"])
        return repl
    }

    /// The user's messages in the dialog, each of which the demo store received once.
    private func sentTexts(_ repl: DemoREPL) async -> [String] {
        let posts = (repl.demoStore?.requestLog ?? []).filter { $0.path.hasSuffix("/v1/messages") }
        let texts = await repl.environment.engine.chatSnapshot.messages.filter { $0.role == .user }.map(\.text)
        #expect(posts.count == texts.count)
        return texts
    }

    @Test func theWordsThatLeaveOtherToolsAreAnsweredWithTheWayOutAndNotSent() async throws {
        let repl = try await openChat()
        for word in ["exit", "quit", "\\q", ".quit", "EXIT", "Quit"] {
            let result = await repl.run(word)
            #expect(result.keepGoing, "\(word) does not leave")
            #expect(
                result.printed == [
                    "'\(word)' was not sent: :quit leaves, :close closes the chat; to send the word, type ::\(word)"
                ])
        }
        #expect(await sentTexts(repl) == [], "nothing reached the assistant")
        #expect(await repl.run("::exit").printed.first == "you › exit", "the way to send the word")
        #expect(await sentTexts(repl) == ["exit"])
    }

    @Test func aDoubleColonSendsAMessageThatStartsWithAColon() async throws {
        let repl = try await openChat()
        let printed = await repl.run("::) спасибо").printed
        #expect(printed.first == "you › :) спасибо")
        #expect(await sentTexts(repl) == [":) спасибо"])
    }

    @Test func inATerminalAnAmpersandIsPartOfAMessage() async throws {
        // A terminal session: messages never wait, so ' &' has nothing to do and is text.
        var options = CommandLineOptions()
        options.width = 120
        let printed = Locked<[String]>([])
        var policy = REPLEnvironment.Policy.commandLine(options, interactive: true, width: 120, stateDirectory: nil)
        let time = VirtualTime()
        policy.time = .virtual(time)
        let environment = await REPLEnvironment(
            policy: policy, output: REPLOutput { line in printed.withLock { $0.append(line) } })
        #expect(environment.policy.settings.interactive)
        for line in [":product KIT-1001", ":open", "рок &"] {
            _ = await time.run { _ = await environment.session.handle(line) }
        }
        let messages = environment.demoStore?.requestLog.filter { $0.path.hasSuffix("/v1/messages") } ?? []
        #expect(messages.count == 1)
        let texts = await environment.engine.chatSnapshot.messages.filter { $0.role == .user }.map(\.text)
        #expect(texts == ["рок &"])
        #expect(printed.withLock { $0 }.contains("you › рок &"))
    }

    @Test func inAPipeAnAmpersandRunsTheMessageWithoutWaitingAsTheHelpSays() async throws {
        let repl = try await openChat()
        let printed = await repl.run("рок &").printed
        #expect(await sentTexts(repl) == ["рок"])
        #expect(printed.contains("you › рок"))
        let help = await repl.run(":help").printed
        #expect(help.contains("End a line with ' &' to run it without waiting for it: a command, or a message."))
    }

    @Test func theHelpOfATerminalSessionSaysAMessageKeepsItsAmpersand() {
        let lines = REPLCommandTable.standard.helpLines(messagesWait: false)
        #expect(
            lines.contains(
                "End a :command with ' &' to run it without waiting (a message never waits: its '&' is sent)."))
        #expect(
            lines.contains(
                "Anything not starting with ':' is a chat message; '::text' sends ':text' ('::exit' sends the word)."))
    }
}
