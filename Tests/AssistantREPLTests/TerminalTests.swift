import Foundation
import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct TerminalStyleTests {
    @Test func colourOnlyOnATerminalWithoutNoColor() {
        #expect(TerminalStyle.colorEnabled(isTerminal: true, environment: [:], noColorFlag: false))
        #expect(!TerminalStyle.colorEnabled(isTerminal: false, environment: [:], noColorFlag: false))
        #expect(!TerminalStyle.colorEnabled(isTerminal: true, environment: ["NO_COLOR": "1"], noColorFlag: false))
        #expect(!TerminalStyle.colorEnabled(isTerminal: true, environment: [:], noColorFlag: true))
        #expect(!TerminalStyle.colorEnabled(isTerminal: true, environment: ["TERM": "dumb"], noColorFlag: false))
    }

    @Test func emptyNoColorDoesNotDisableColour() {
        #expect(TerminalStyle.colorEnabled(isTerminal: true, environment: ["NO_COLOR": ""], noColorFlag: false))
    }

    @Test func plainStyleWritesNoEscapes() {
        for role in TerminalStyle.Role.allCases {
            #expect(TerminalStyle.plain.apply(role, "text") == "text")
        }
    }

    @Test func colouredStyleWrapsTextInSGRAndReset() {
        #expect(TerminalStyle.colored.apply(.error, "boom") == "\u{1b}[31mboom\u{1b}[0m")
        #expect(DisplayWidth.of(TerminalStyle.colored.apply(.bold, "abc")) == 3)
    }
}

@Suite(.timeLimit(.minutes(2))) struct TerminalSizeTests {
    @Test func overrideWinsOverEverything() {
        #expect(TerminalSize.columns(override: 42, measured: 120, environment: ["COLUMNS": "100"]) == 42)
    }

    @Test func measuredWidthWinsOverColumns() {
        #expect(TerminalSize.columns(override: nil, measured: 120, environment: ["COLUMNS": "100"]) == 120)
    }

    @Test func columnsVariableIsTheFallback() {
        #expect(TerminalSize.columns(override: nil, measured: nil, environment: ["COLUMNS": "100"]) == 100)
    }

    @Test func eightyWhenNothingIsKnown() {
        #expect(TerminalSize.columns(override: nil, measured: nil, environment: [:]) == 80)
        #expect(TerminalSize.columns(override: nil, measured: nil, environment: ["COLUMNS": "wide"]) == 80)
        #expect(TerminalSize.columns(override: nil, measured: nil, environment: ["COLUMNS": "0"]) == 80)
    }

    @Test func aPipeHasNoMeasuredWidth() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        #expect(TerminalSize.measuredColumns(descriptor: fds[1]) == nil)
    }
}

@Suite(.timeLimit(.minutes(2))) struct DisplayWidthTests {
    @Test func countsColumnsNotCharacters() {
        #expect(DisplayWidth.of("abc") == 3)
        #expect(DisplayWidth.of("Привет") == 6)
        #expect(DisplayWidth.of("日本") == 4)
        #expect(DisplayWidth.of("ｱＡ") == 3)  // half-width katakana is narrow, fullwidth A is wide
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("🙂") == 2)
        #expect(DisplayWidth.of("a\u{200b}b") == 2)
    }

    @Test func emojiSequencesAreAsWideAsTmuxDrawsThem() {
        #expect(DisplayWidth.of("\u{2764}\u{fe0f}") == 1)  // ❤️: tmux draws one column
        #expect(DisplayWidth.of("\u{263a}\u{fe0f}") == 1)
        #expect(DisplayWidth.of("👍\u{1f3fd}") == 4)  // the skin tone is a wide code point of its own
        #expect(DisplayWidth.of("👨\u{200d}👩\u{200d}👧") == 2)  // joined: tmux draws one emoji
        #expect(DisplayWidth.of("🇷🇺") == 2)
        #expect(DisplayWidth.of(Character("\u{2764}\u{fe0f}")) == 1)
    }

    @Test func codePointsTheCLibraryDoesNotKnowCountTheMostATerminalDraws() {
        #expect(DisplayWidth.of("\u{378}") == 2)
        #expect(DisplayWidth.of("\u{1fae8}") == 2)
    }

    @Test func escapesAndControlsTakeNoColumn() {
        #expect(DisplayWidth.of("\u{1b}[31mred\u{1b}[0m") == 3)
        #expect(DisplayWidth.of("a\u{7}b\u{7f}c") == 3)
    }

    @Test func truncationRespectsWideCharacters() {
        #expect(DisplayWidth.truncate("日本語の商品", to: 5) == "日本…")
        #expect(DisplayWidth.truncate("short", to: 10) == "short")
        #expect(DisplayWidth.truncate("abcdef", to: 4, ellipsis: "...") == "a...")
        #expect(DisplayWidth.truncate("abcdef", to: 0) == "")
    }

    @Test func wrapBreaksAtSpacesAndEllipsisesTheLastLine() {
        #expect(DisplayWidth.wrap("one two three", width: 7, maxLines: 3) == ["one two", "three"])
        #expect(DisplayWidth.wrap("one two three four", width: 7, maxLines: 2) == ["one two", "three…"])
        #expect(DisplayWidth.wrap("abcdefghij", width: 4, maxLines: 5) == ["abcd", "efgh", "ij"])
        #expect(DisplayWidth.wrap("", width: 4, maxLines: 2) == [])
    }

    @Test func wrappedLinesNeverExceedTheWidth() {
        let text = "日本語 Кроссовки 👨‍👩‍👧 supercalifragilistic e\u{301}e\u{301} ｱｲｳ"
        for width in 1...20 {
            for line in DisplayWidth.wrap(text, width: width, maxLines: 4) {
                #expect(DisplayWidth.of(line) <= width, "width \(width): \(line)")
            }
        }
    }
}
