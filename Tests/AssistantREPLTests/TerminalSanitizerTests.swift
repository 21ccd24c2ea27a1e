import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct TerminalSanitizerTests {
    private func clean(_ text: String, _ newlines: TerminalSanitizer.Newlines = .space) -> String {
        TerminalSanitizer.sanitize(text, newlines: newlines)
    }

    @Test func clearScreenSequenceIsRemovedWhole() {
        #expect(clean("before\u{1b}[2Jafter") == "beforeafter")
        #expect(clean("\u{1b}[1;31mred\u{1b}[0m") == "red")
        #expect(clean("\u{1b}[?1049h\u{1b}[H") == "")
    }

    @Test func osc8HyperlinkKeepsOnlyItsVisibleText() {
        let link = "\u{1b}]8;;https://evil.example/\u{1b}\\Click\u{1b}]8;;\u{1b}\\ here"
        #expect(clean(link) == "Click here")
        let belTerminated = "\u{1b}]8;;https://evil.example/\u{7}Click\u{1b}]8;;\u{7}"
        #expect(clean(belTerminated) == "Click")
    }

    @Test func osc52ClipboardWriteIsDropped() {
        #expect(clean("safe\u{1b}]52;c;cm0gLXJmIH4=\u{7}text") == "safetext")
        #expect(clean("title\u{1b}]0;pwned\u{9c}ok") == "titleok")
    }

    @Test func carriageReturnCannotOverwriteEarlierText() {
        #expect(clean("Price 100\rPrice 1") == "Price 100 Price 1")
        #expect(clean("Price 100\rPrice 1", .keep) == "Price 100\nPrice 1")
        #expect(clean("line one\r\nline two", .keep) == "line one\nline two")
    }

    @Test func eightBitC1ControlSequenceIsRemovedWhole() {
        #expect(clean("a\u{9b}2Jb") == "ab")
        #expect(clean("a\u{9d}8;;http://x\u{7}b") == "ab")
        #expect(clean("a\u{90}qpayload\u{9c}b") == "ab")
        #expect(clean("a\u{85}b") == "a b")
    }

    @Test func truncatedSequencesDropToTheEndWithoutLeakingParameters() {
        #expect(clean("name\u{1b}") == "name")
        #expect(clean("name\u{1b}[31") == "name")
        #expect(clean("name\u{1b}]8;;http://evil") == "name")
        #expect(clean("name\u{1b}P1$r") == "name")
    }

    @Test func otherEscapeFormsAreRemoved() {
        #expect(clean("a\u{1b}cb") == "ab")  // full reset
        #expect(clean("a\u{1b}(0b") == "ab")  // line-drawing charset
        #expect(clean("a\u{1b}_apc\u{1b}\\b") == "ab")
        #expect(clean("a\u{1b}^pm\u{1b}\\b") == "ab")
        #expect(clean("a\u{1b}Xsos\u{1b}\\b") == "ab")
        #expect(clean("a\u{1b}\u{1b}[2Jb") == "ab")
    }

    @Test func controlCharactersAndDeleteAreDropped() {
        #expect(clean("a\u{0}b\u{7}c\u{8}d\u{7f}e\u{1a}f") == "abcdef")
        #expect(clean("tab\there") == "tab here")
    }

    @Test func newlinesFollowTheCallersChoice() {
        #expect(clean("one\ntwo\u{2028}three") == "one two three")
        #expect(clean("one\ntwo\u{2028}three", .keep) == "one\ntwo\nthree")
    }

    @Test func bidiOverridesAndIsolatesAreDropped() {
        #expect(clean("invoice\u{202e}fdp.exe") == "invoicefdp.exe")
        #expect(clean("\u{202a}\u{202b}\u{202c}\u{202d}x\u{2066}\u{2067}\u{2068}\u{2069}") == "x")
    }

    @Test func invisibleFormatCharactersAreDropped() {
        #expect(clean("zero\u{200b}width") == "zerowidth")
        #expect(clean("\u{feff}bom") == "bom")
        #expect(clean("non\u{200c}joiner \u{200d}joiner") == "nonjoiner joiner")
        #expect(clean("soft\u{ad}hyphen wo\u{2060}rd") == "softhyphen word")
        #expect(clean("marks\u{200e}\u{200f}\u{61c}") == "marks")
        // Tag characters spell text nobody sees.
        #expect(clean("ok\u{e0069}\u{e0067}\u{e006e}\u{e006f}\u{e0072}\u{e0065}") == "ok")
    }

    @Test func emojiSequencesKeepTheirJoinersAndTags() {
        let family = "👨\u{200d}👩\u{200d}👧"
        #expect(clean(family) == family)
        let withSkinTone = "👩\u{1f3fd}\u{200d}💻"
        #expect(clean(withSkinTone) == withSkinTone)
        let heartOnFire = "❤\u{fe0f}\u{200d}🔥"
        #expect(clean(heartOnFire) == heartOnFire)
        let scotland = "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}"
        #expect(clean(scotland) == scotland)
        // A joiner that joins no emoji, and tags without their cancel tag, are dropped.
        #expect(clean("a\u{200d}👩 👩\u{200d}") == "a👩 👩")
        #expect(clean("🏴\u{e0067}\u{e0062}x") == "🏴x")
    }

    @Test func sanitisingIsOnePassOverTheText() {
        let hostile = String(repeating: "\u{1b}[2J\u{200b}a\u{200d}", count: 5_000)
        let meter = LayoutWorkMeter()
        let clean = LayoutWorkMeter.$current.withValue(meter) { TerminalSanitizer.sanitize(hostile) }
        #expect(clean == String(repeating: "a", count: 5_000))
        #expect(meter.count == hostile.unicodeScalars.count)
    }

    @Test func plainTextInAnyScriptIsUntouched() {
        let samples = [
            "Кроссовки беговые, размер 42 — 1 990 ₽",
            "日本語の商品",
            "family 👨\u{200d}👩\u{200d}👧 and café\u{301}, ❤\u{fe0f} 🇷🇺",
            "price: 100 % off!",
        ]
        for sample in samples {
            #expect(clean(sample) == sample)
        }
    }
}
