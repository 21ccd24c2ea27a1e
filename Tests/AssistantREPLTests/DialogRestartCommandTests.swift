import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// The conversation across restarts in the REPL (D18): `:restart` in place, a new process on
/// the same state directory, and `--new-chat`.
@Suite(.timeLimit(.minutes(2))) struct DialogRestartCommandTests {
    private static let chat = [":product KIT-1001", ":open", "подарок"]

    // covers: D18
    @Test func restartInPlaceBringsTheChatBackOnTheNextOpen() async throws {
        let repl = try await DemoREPL()
        await repl.run(lines: Self.chat)
        await repl.run(":restart")
        let reopened = await repl.run(lines: [":home", ":open"])
        #expect(reopened.contains("you › подарок"), "\(reopened)")
        #expect(reopened.contains { $0.hasPrefix("assistant › Подобрал") }, "\(reopened)")
        #expect(reopened.contains { $0.contains("Термокружка 450 мл") }, "the carousel: \(reopened)")
        let fresh = await repl.run(":new")
        #expect(!fresh.printed.contains("you › подарок"))
    }

    // covers: D18
    @Test func aNewProcessOnTheSameStateDirectoryBringsTheChatBackAndNewChatStartsWithout() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "repl-dialog-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = StateDirectory(path: directory.path)
        let first = try await DemoREPL(dialog: .file(state.dialogFile), identity: .file(state.demoIdentityFile))
        await first.run(lines: Self.chat)
        await first.session.engine.shutdown()  // :quit
        #expect(FileManager.default.fileExists(atPath: state.dialogFile.path))

        let second = try await DemoREPL(dialog: .file(state.dialogFile), identity: .file(state.demoIdentityFile))
        let reopened = await second.run(lines: [":home", ":open"])
        #expect(reopened.contains("you › подарок"), "\(reopened)")
        #expect(reopened.contains { $0.contains("Термокружка 450 мл") }, "the carousel: \(reopened)")
        await second.session.engine.shutdown()

        let third = try await DemoREPL(
            dialog: .file(state.dialogFile), identity: .file(state.demoIdentityFile), newChat: true)
        let fresh = await third.run(lines: [":home", ":open"])
        #expect(!fresh.contains("you › подарок"), "\(fresh)")
        #expect(!FileManager.default.fileExists(atPath: state.dialogFile.path))
    }

    @Test func aCommandLineSessionKeepsItsDialogAndTheDemoIdentityBesideTheQueue() throws {
        let state = StateDirectory(path: "/tmp/assistant-state")
        func policy(interactive: Bool, explicit: Bool, recording: Bool, newChat: Bool = false)
            -> REPLEnvironment.Policy
        {
            var options = CommandLineOptions()
            options.stateDirectory = explicit ? state.path : nil
            options.recordPath = recording ? "x.transcript" : nil
            options.newChat = newChat
            return REPLEnvironment.Policy.commandLine(
                options, interactive: interactive, width: 80, stateDirectory: state)
        }
        let file = REPLEnvironment.Dialog.file(URL(fileURLWithPath: "/tmp/assistant-state/dialog.bin"))
        #expect(policy(interactive: true, explicit: false, recording: false).dialog == file)
        #expect(policy(interactive: false, explicit: true, recording: false).dialog == file)
        #expect(policy(interactive: false, explicit: false, recording: false).dialog == .memory, "piped")
        #expect(policy(interactive: true, explicit: true, recording: true).dialog == .memory, "a recording")
        #expect(
            policy(interactive: true, explicit: false, recording: false).identity
                == .file(URL(fileURLWithPath: "/tmp/assistant-state/demo-identity.json")))
        #expect(policy(interactive: false, explicit: false, recording: false).identity == .memory(uid: nil))
        #expect(policy(interactive: true, explicit: false, recording: false, newChat: true).startsNewChat)
        #expect(
            policy(interactive: true, explicit: false, recording: false).demoThreads
                == URL(fileURLWithPath: "/tmp/assistant-state/demo-threads.jsonl"))
        #expect(policy(interactive: false, explicit: false, recording: false).demoThreads == nil)
        #expect(try CommandLineOptions.parse(["--new-chat"], environment: [:]).newChat)
    }
}
