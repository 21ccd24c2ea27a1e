import ShoppingAssistant
import Testing

@testable import AssistantREPL

@Suite struct ScriptLineReaderTests {
    @Test func handsOutEventsInOrderThenEndOfInputForever() async {
        let reader = ScriptLineReader(events: [.line(":home"), .interrupt, .line("hello")])
        #expect(await reader.nextEvent(prompt: "a> ") == .line(":home"))
        #expect(await reader.nextEvent(prompt: "b> ") == .interrupt)
        #expect(reader.readLine(prompt: "c> ") == .line("hello"))
        #expect(await reader.nextEvent(prompt: "d> ") == .endOfInput)
        #expect(await reader.nextEvent(prompt: "e> ") == .endOfInput)
        #expect(reader.prompts == ["a> ", "b> ", "c> ", "d> ", "e> "])
        #expect(reader.remaining.isEmpty)
    }

    @Test func recordsPrintedText() {
        let reader = ScriptLineReader(lines: ["x"])
        reader.printAsync("reply one")
        reader.printAsync("reply two\n")
        #expect(reader.printed == ["reply one", "reply two\n"])
        #expect(reader.remaining == [.line("x")])
    }
}

@Suite struct StdinLineReaderTests {
    @Test func printAsyncWritesWholeLines() {
        let written = Locked<[String]>([])
        let reader = StdinLineReader { text in written.withLock { $0.append(text) } }
        reader.printAsync("one")
        reader.printAsync("two\n")
        reader.printAsync("")
        #expect(written.withLock { $0 } == ["one\n", "two\n"])
    }
}

@Suite struct LineCompletionTests {
    private let commands = CommandCompletion([
        .init(":help"),
        .init(":home"),
        .init(":product", arguments: ["SKU-1001", "SKU-1002"]),
        .init(":screen", arguments: ["home", "product", "search"]),
        .init(":quit"),
    ])

    private func complete(_ text: String) -> LineCompletion {
        LineCompletion.resolve(textBeforeCursor: text, candidates: commands.candidates(for: text))
    }

    @Test func uniqueCommandIsCompletedWithASpace() {
        #expect(complete(":q") == .insert("uit "))
        #expect(complete(":sc") == .insert("reen "))
    }

    @Test func sharedPrefixIsInsertedBeforeListing() {
        #expect(complete(":") == .list([":help", ":home", ":product", ":screen", ":quit"]))
        #expect(complete("") == .insert(":"))
        #expect(complete(":h") == .list([":help", ":home"]))
        #expect(complete(":he") == .insert("lp "))
    }

    @Test func firstArgumentCompletesFromTheCommandsTable() {
        #expect(complete(":screen p") == .insert("roduct "))
        #expect(complete(":screen ") == .list(["home", "product", "search"]))
        #expect(complete(":product SKU-") == .insert("100"))
        #expect(complete(":product SKU-1002") == .insert(" "))
    }

    @Test func laterWordsAndUnknownCommandsHaveNoCompletion() {
        #expect(complete(":screen search red") == .none)
        #expect(complete(":bogus x") == .none)
        #expect(complete(":x") == .none)
        #expect(complete("plain chat text") == .none)
    }

    @Test func duplicateCandidatesCollapse() {
        #expect(LineCompletion.resolve(textBeforeCursor: "a", candidates: ["ab", "ab"]) == .insert("b "))
    }

    @Test func listingIsLaidOutInColumnsThatFit() {
        let items = [":help", ":home", ":product", ":screen", ":quit"]
        #expect(LineCompletion.columns(items, width: 40) == [":help     :home     :product  :screen", ":quit"])
        #expect(LineCompletion.columns(items, width: 5) == items)
        #expect(LineCompletion.columns([], width: 80) == [])
    }
}
