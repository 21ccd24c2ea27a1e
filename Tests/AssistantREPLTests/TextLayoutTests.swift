import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct TextLayoutTests {
    /// The work a layout call does, in code points visited.
    private func work(_ body: () -> Void) -> Int {
        let meter = LayoutWorkMeter()
        LayoutWorkMeter.$current.withValue(meter) { body() }
        return meter.count
    }

    // MARK: - Wrapping

    @Test func longWordsBreakAtGraphemeClustersWithinTheWidth() {
        #expect(TextLayout.wrap("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(TextLayout.wrap("日本語の商品", width: 5) == ["日本", "語の", "商品"])
        #expect(TextLayout.wrap("e\u{301}e\u{301}e\u{301}", width: 2) == ["e\u{301}e\u{301}", "e\u{301}"])
        #expect(TextLayout.wrap("ab👨\u{200d}👩\u{200d}👧", width: 3) == ["ab", "👨\u{200d}👩\u{200d}👧"])
        #expect(TextLayout.wrap("ab👨\u{200d}👩\u{200d}👧", width: 4) == ["ab👨\u{200d}👩\u{200d}👧"])
    }

    @Test func aLongWordBreaksAfterItsLastHyphenThatFits() {
        #expect(
            TextLayout.wrap("order 5c6bf593-d1cf-47c1-88f1-2650c4b8ced3, 2 units", width: 20) == [
                "order", "5c6bf593-d1cf-47c1-", "88f1-2650c4b8ced3, 2", "units",
            ])
        // A word that starts mid-line (after `shown:`) breaks there too, not mid-name.
        #expect(
            TextLayout.fit("(in-app campaign shown: demo-c-purchase-thanks)", width: 20) == [
                "(in-app campaign", "  shown: demo-c-", "  purchase-thanks)",
            ])
        // A hyphen that starts the word is no place to break; with nothing better, the break
        // falls where the line ends.
        #expect(TextLayout.wrap("-abcdefgh", width: 4) == ["-abc", "defg", "h"])
    }

    @Test func aClosingMarkTakesTheCharacterBeforeItToTheNextLine() {
        #expect(TextLayout.wrap("abcdefghij, k", width: 5) == ["abcde", "fghi", "j, k"])
        #expect(TextLayout.wrap("abcdefghij.", width: 5) == ["abcde", "fghi", "j."])
    }

    @Test func aClusterWiderThanTheLineBreaksBetweenItsCodePointsWithoutADanglingJoiner() {
        // One grapheme cluster, 6 columns: the skin tones are wide code points of their own.
        let hands = "🧑\u{1F3FB}\u{200D}🤝\u{200D}🧑\u{1F3FF}"
        // The joined emoji stay with the code point they join; no line ends in a joiner, which
        // would join the terminal's next character.
        #expect(TextLayout.wrap(hands, width: 4) == ["🧑\u{1F3FB}\u{200D}🤝\u{200D}🧑", "\u{1F3FF}"])
        #expect(TextLayout.truncate("ab" + hands, to: 4) == "ab…")
    }

    @Test func aWideCharacterThatFitsNoLineIsLeftOutRatherThanOverflowing() {
        #expect(TextLayout.wrap("a日b", width: 1) == ["a", "b"])
    }

    @Test func wrappingWithALineLimitStopsReadingTheText() {
        let long = String(repeating: "x", count: 10_000)
        #expect(TextLayout.wrap(long, width: 8, maxLines: 2) == ["xxxxxxxx", "xxxxxxx…"])
        // The whole text is split once; nothing after the second line is measured.
        #expect(work { _ = TextLayout.wrap(long, width: 8, maxLines: 2) } <= 10_000 + 100)
    }

    @Test func wrappingIsLinearInAWordWithoutSpacesWhereverItsHyphensFall() {
        for count in [1_000, 10_000, 20_000] {
            // Each line's end goes back to a hyphen: every character moves at most once.
            let word = String(repeating: "Щ-Щ", count: count / 3)
            var lines: [String] = []
            let visited = work { lines = TextLayout.wrap(word, width: 20) }
            #expect(lines.joined() == word)
            #expect(lines.allSatisfy { DisplayWidth.of($0) <= 20 })
            #expect(lines.dropLast().allSatisfy { $0.hasSuffix("-") })
            #expect(visited <= 3 * count, "\(visited) code points visited for \(count)")
        }
    }

    @Test func wrappingIsLinearInAWordWithoutSpaces() {
        for count in [1_000, 10_000, 20_000] {
            let word = String(repeating: "Щ", count: count)
            var lines: [String] = []
            let visited = work { lines = TextLayout.wrap(word, width: 20) }
            #expect(lines.count == count / 20)
            #expect(lines.allSatisfy { DisplayWidth.of($0) == 20 })
            #expect(visited <= 3 * count, "\(visited) code points visited for \(count)")
        }
    }

    // MARK: - Truncation

    @Test func truncationReadsNoFurtherThanTheCut() {
        let long = String(repeating: "y", count: 20_000)
        #expect(TextLayout.truncate(long, to: 10) == "yyyyyyyyy…")
        #expect(work { _ = TextLayout.truncate(long, to: 10) } <= 20)
    }

    @Test func truncationDropsTheSpacesBeforeTheEllipsis() {
        #expect(TextLayout.truncate("one two three", to: 5) == "one…")
        #expect(TextLayout.truncate("ab", to: 1, ellipsis: "...") == "a")
    }

    @Test func singleLinesKeepPrefixAndSuffixAroundTheTruncatedText() {
        #expect(TextLayout.singleLine(prefix: "[b1] ", "Short", width: 20) == "[b1] Short")
        #expect(
            TextLayout.singleLine(
                prefix: "(impression: ", String(repeating: "z", count: 10_000), suffix: ")", width: 30)
                == "(impression: zzzzzzzzzzzzzzz…)")
        // Too little room between them: the whole line is cut.
        #expect(
            TextLayout.singleLine(prefix: "[ ", "Спросите помощника", suffix: " ]  ← entry button (:open)", width: 20)
                == "[ Спросите помощник…")
    }

    // MARK: - Fitting any line

    @Test func aFittingLineIsLeftAlone() {
        #expect(TextLayout.fit("  two  spaces  kept", width: 80) == ["  two  spaces  kept"])
    }

    @Test func aWideLineWrapsWithAHangingIndentAndKeepsItsSpaces() {
        let line = "  event chat_message_send uid=demo-u-1  attempt=1 messageId=abc"
        #expect(
            TextLayout.fit(line, width: 30) == [
                "  event chat_message_send", "    uid=demo-u-1  attempt=1", "    messageId=abc",
            ])
        #expect(TextLayout.fit("> " + String(repeating: "q", count: 45), width: 20, hangingIndent: 2).count == 3)
    }

    @Test func newlinesStartNewLines() {
        #expect(TextLayout.fit("one\ntwo", width: 20) == ["one", "two"])
    }

    @Test func aTooWideStyledLineLosesItsEscapesNotItsText() {
        let styled = TerminalStyle.colored.apply(.dim, String(repeating: "w", count: 30))
        let lines = TextLayout.fit(styled, width: 20)
        #expect(lines == [String(repeating: "w", count: 20), "  " + String(repeating: "w", count: 10)])
        #expect(TextLayout.fit(TerminalStyle.colored.apply(.dim, "short"), width: 20) == ["\u{1b}[2mshort\u{1b}[0m"])
    }

    @Test func everyFittedLineIsWithinTheWidthFromTwentyColumnsUp() {
        let text =
            "  日本語 Кроссовки 👨‍👩‍👧 supercalifragilisticexpialidocious e\u{301}e\u{301} ｱｲｳ ❤️❤️❤️ "
            + String(repeating: "長", count: 50)
        for width in 20...120 {
            for line in TextLayout.fit(text, width: width) {
                #expect(DisplayWidth.of(line) <= width, "width \(width): \(line)")
            }
        }
    }
}
