import DemoStore
import ShoppingAssistant
import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct ScriptLineReaderTests {
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

@Suite(.timeLimit(.minutes(2))) struct StdinLineReaderTests {
    @Test func printAsyncWritesWholeLines() {
        let written = Locked<[String]>([])
        let reader = StdinLineReader { text in written.withLock { $0.append(text) } }
        reader.printAsync("one")
        reader.printAsync("two\n")
        reader.printAsync("")
        #expect(written.withLock { $0 } == ["one\n", "two\n"])
    }
}

@Suite(.timeLimit(.minutes(2))) struct LineCompletionTests {
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

    @Test func repeatedArgumentsCompleteEveryLaterWord() {
        let table = CommandCompletion([.init(":cart", arguments: ["KIT-1001", "ELC-2001"], repeats: true)])
        let complete = { (text: String) in
            LineCompletion.resolve(textBeforeCursor: text, candidates: table.candidates(for: text))
        }
        #expect(complete(":cart K") == .insert("IT-1001 "))
        #expect(complete(":cart KIT-1001 E") == .insert("LC-2001 "))
    }

    @Test func theDemoCatalogueCompletesSkusAndCategories() {
        let table = CommandCompletion([.init(":product"), .init(":category"), .init(":cart"), .init(":home")])
            .addingDemoCatalogue()
        let complete = { (text: String) in
            LineCompletion.resolve(textBeforeCursor: text, candidates: table.candidates(for: text))
        }
        #expect(complete(":product KIT-100") == .list((1...8).map { "KIT-100\($0)" }))
        #expect(complete(":product ELC-2005") == .insert(" "))
        #expect(complete(":category Эл") == .insert("ектроника "))
        #expect(complete(":cart KIT-1001 TOY-700") == .list((1...8).map { "TOY-700\($0)" }))
        #expect(complete(":home ") == .none)
        #expect(table.candidates(for: ":product ").count == DemoCatalog.products.compactMap(\.sku).count)
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

@Suite(.timeLimit(.minutes(2))) struct HistorySearchTests {
    private let history = [":product KIT-1002", "подарок для мамы", ":product KIT-1001", ":open", "подарок"]

    @Test func typingFindsTheNewestLineContainingThePattern() {
        var search = HistorySearch(entries: history)
        #expect(search.match == nil)
        #expect(search.prompt == "(history search)`': ")
        search.type("р")
        #expect(search.match == "подарок для мамы")
        search.type("ок")
        #expect(search.match == "подарок для мамы")
        #expect(search.prompt == "(history search)`рок': ")
        search.older()
        #expect(search.match == "подарок")
    }

    @Test func ctrlRAgainGoesOlderAndFailsAtTheEndKeepingTheLastMatch() {
        var search = HistorySearch(entries: history)
        search.type("KIT")
        #expect(search.match == ":product KIT-1002")
        search.older()
        #expect(search.match == ":product KIT-1001")
        search.older()
        #expect(search.match == ":product KIT-1001")
        #expect(search.isFailing)
        #expect(search.prompt == "(failed history search)`KIT': ")
    }

    @Test func backspaceSearchesAgainFromTheNewestLine() {
        var search = HistorySearch(entries: history)
        for character in "KIT-1001x" { search.type(String(character)) }
        #expect(search.isFailing)
        #expect(search.match == ":product KIT-1001")
        search.deleteBackward()
        #expect(!search.isFailing)
        search.deleteBackward()
        search.deleteBackward()
        #expect(search.match == ":product KIT-1002")
    }

    @Test func withNothingTypedCtrlRBrowsesTheHistoryOnceEach() {
        var search = HistorySearch(entries: [":open", ":home", ":open"])
        search.older()
        #expect(search.match == ":open")
        search.older()
        #expect(search.match == ":home")
        search.older()
        #expect(search.isFailing)
        #expect(HistorySearch(entries: []).match == nil)
    }
}

@Suite(.timeLimit(.minutes(2))) struct PromptFittingTests {
    @Test func aPromptThatFitsIsLeftAlone() {
        #expect(LibeditLineReader.fittedPrompt("chat[product KIT-1001]> ", columns: 80) == "chat[product KIT-1001]> ")
    }

    @Test func aLongPromptKeepsItsEndAndLeavesRoomToType() {
        #expect(LibeditLineReader.fittedPrompt("chat[product KIT-1001]> ", columns: 20) == "chat[p…]> ")
        let title = String(repeating: "Спросите помощника ", count: 600)
        let fitted = LibeditLineReader.fittedPrompt("product KIT-1001 [\(title)]> ", columns: 60)
        #expect(DisplayWidth.of(fitted) == LibeditLineReader.promptLimit(columns: 60))
        #expect(fitted.hasSuffix("…]> "))
    }

    @Test func theInputKeepsHalfANarrowTerminalAndTwentyColumnsOfAWideOne() {
        #expect(LibeditLineReader.promptLimit(columns: 20) == 10)
        #expect(LibeditLineReader.promptLimit(columns: 60) == 40)
        #expect(LibeditLineReader.promptLimit(columns: 200) == 180)
    }
}
