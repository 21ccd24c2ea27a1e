import CLibeditShim
import Foundation
import Testing

@testable import AssistantREPL
@testable import ShoppingAssistant

/// Random Unicode (CJK, emoji, ZWJ and flag sequences, combining marks, controls, escape
/// sequences, invisible format characters, unassigned code points; up to 20,000 characters)
/// through the carousel and the chat screen at random widths from 20 to 300: every printed
/// line fits its width as the C library (and tmux, for ZWJ sequences) counts it, carries no control or invisible format
/// character, and the work done is bounded per character of input.
///
/// Seeded and reproducible: a failure names its seed; `RENDERER_PROPERTY_SEED=N` runs that
/// seed's cases (the default seed is fixed).
@Suite(.timeLimit(.minutes(2))) struct RendererPropertyTests {
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["RENDERER_PROPERTY_SEED"].flatMap { UInt64($0) } ?? 0x5EED_2024

    /// Code points visited per character of input, at most, plus a constant for the fixed
    /// text of each screen (borders, labels, placeholders).
    static let workPerCharacter = 10
    static let workPerScreen = 2_000

    @Test func carouselLinesFitAndStayCleanForRandomProducts() {
        var random = SplitMix64(seed: Self.seed)
        var worst = 0.0
        for index in 0..<120 {
            let width = Int.random(in: 20...300, using: &random)
            let products = (0..<Int.random(in: 1...6, using: &random)).map { item in
                RandomText.product(item, using: &random)
            }
            let title = random.next() % 3 == 0 ? nil : RandomText.string(using: &random)
            let block = AssistantProductBlock(title: title, products: products)
            let input = RandomText.scalars(in: block)
            let meter = LayoutWorkMeter()
            let rendering = LayoutWorkMeter.$current.withValue(meter) {
                CarouselBuilder(scrollOffset: Int.random(in: 0...5, using: &random))
                    .render(
                        block: block, layout: AssistantProductLayout(availableWidth: width, isInteractionEnabled: true))
            }
            let context = "seed \(Self.seed), case \(index), width \(width), \(input) code points"
            Self.check(rendering.lines, width: width, context)
            #expect(rendering.height <= 12, "\(context)")
            #expect(
                meter.count <= Self.workPerCharacter * input + Self.workPerScreen,
                "\(context): \(meter.count) code points visited")
            worst = max(worst, Double(meter.count - Self.workPerScreen) / Double(max(1, input)))
        }
        #expect(worst <= Double(Self.workPerCharacter))
    }

    @Test func chatScreenLinesFitAndStayCleanForRandomReplies() async {
        var random = SplitMix64(seed: Self.seed ^ 0xC4A7)
        for index in 0..<40 {
            let width = Int.random(in: 20...300, using: &random)
            let (presenter, output) = chatScreen(width: width)
            let chat = RandomText.chat(using: &random)
            let meter = LayoutWorkMeter()
            await LayoutWorkMeter.$current.withValue(meter) {
                await presenter.presentAssistant(chat.opening)
                await presenter.updateAssistant(chat.replied)
                output.singleLine(.dim, prefix: "(impression: ", chat.logText, suffix: ")")
                output.singleLine(.dim, prefix: "[error] ", chat.logText)
                // The REPL's own lines quote server and user text only sanitised.
                output.line("(identity changed to " + TerminalSanitizer.sanitize(chat.logText) + ")")
                output.echo("> " + TerminalSanitizer.sanitize(chat.logText))
            }
            let input = chat.inputScalars
            let context = "seed \(Self.seed ^ 0xC4A7), case \(index), width \(width), \(input) code points"
            Self.check(output.lines, width: width, context)
            #expect(
                meter.count <= Self.workPerCharacter * input + Self.workPerScreen,
                "\(context): \(meter.count) code points visited")
        }
    }

    @Test func theWorkPerCharacterDoesNotGrowWithTheLengthOfAName() {
        // The issue's case: one name of 10,000 characters without spaces drew in 18–26 s
        // because each line broken off it re-measured the rest.
        var perCharacter: [Double] = []
        for length in [1_250, 2_500, 5_000, 10_000, 20_000] {
            let name = String(repeating: "Ж", count: length)
            let product = RandomText.plainProduct(name: name)
            let meter = LayoutWorkMeter()
            for width in [20, 80, 300] {
                let lines = LayoutWorkMeter.$current.withValue(meter) {
                    CarouselBuilder()
                        .render(
                            block: AssistantProductBlock(title: name, products: [product]),
                            layout: AssistantProductLayout(availableWidth: width, isInteractionEnabled: true)
                        )
                        .lines
                }
                Self.check(lines, width: width, "length \(length), width \(width)")
            }
            perCharacter.append(Double(meter.count) / Double(3 * length))
        }
        let ratio = (perCharacter.max() ?? 0) / max(0.001, perCharacter.min() ?? 0)
        #expect(ratio < 1.5, "code points visited per character: \(perCharacter)")
    }

    // MARK: - Checks

    private static func check(
        _ lines: [String], width: Int, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for line in lines {
            let columns = DisplayWidth.of(line)
            let reference = ReferenceWidth.of(line)
            if columns > width || reference > width {
                Issue.record(
                    "\(context): \(columns) (C library: \(reference)) columns: \(line.debugDescription)",
                    sourceLocation: sourceLocation)
            }
            if let bad = forbidden(in: line) {
                Issue.record(
                    "\(context): U+\(String(bad.value, radix: 16)) printed in \(line.debugDescription)",
                    sourceLocation: sourceLocation)
            }
        }
    }

    /// A code point that must never reach the terminal: controls, escapes, bidi controls and
    /// invisible format characters (a ZWJ between emoji and the tags of a flag may stay).
    private static func forbidden(in line: String) -> Unicode.Scalar? {
        let scalars = Array(line.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            switch scalar.value {
            case 0..<0x20, 0x7f...0x9f, 0x202a...0x202e, 0x2066...0x2069, 0x200b, 0x200c, 0x200e, 0x200f, 0xfeff,
                0xad, 0x2060...0x2064, 0xe0001:
                return scalar
            case 0x200d:
                let before = index > 0 ? scalars[index - 1] : " "
                let after = index + 1 < scalars.count ? scalars[index + 1] : " "
                let joinsEmoji = before == "\u{fe0f}" || (before.properties.isEmoji && before.value > 0x7f)
                if !joinsEmoji || !after.properties.isEmoji { return scalar }
            case 0xe0020...0xe007f:
                if !scalars[..<index].contains("\u{1f3f4}") { return scalar }
            default:
                continue
            }
        }
        return nil
    }
}

// MARK: - Reference width

/// Columns by the C library itself (`wcwidth` in its UTF-8 locale, a code point it does not
/// know counted two), independent of the embedded table, with tmux's one exception: a code
/// point after a zero-width joiner joins the character before it (see `GraphemeWidthTests`).
/// The table when no UTF-8 locale exists.
private enum ReferenceWidth {
    static let available = cle_utf8_wcwidth(0x41) == 1

    static func of(_ line: String) -> Int {
        guard available else { return DisplayWidth.of(line) }
        var total = 0
        var previous: Unicode.Scalar = " "
        for scalar in line.unicodeScalars {
            defer { previous = scalar }
            if previous == "\u{200d}", scalar.value > 0x7f { continue }
            let width = Int(cle_utf8_wcwidth(scalar.value))
            total += width < 0 ? (DisplayWidth.isControl(scalar) ? 0 : 2) : width
        }
        return total
    }
}

// MARK: - Random text

/// A seeded generator (SplitMix64): the same seed gives the same cases on every machine.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

private enum RandomText {
    /// One piece of hostile or awkward text.
    static func piece(using random: inout SplitMix64) -> String {
        func scalar(_ range: ClosedRange<UInt32>) -> String {
            let value = UInt32.random(in: range, using: &random)
            return Unicode.Scalar(value).map { String(Character($0)) } ?? "?"
        }
        switch Int.random(in: 0..<22, using: &random) {
        case 0, 1: return scalar(0x61...0x7a)
        case 2: return " "
        case 3: return scalar(0x410...0x44f)
        case 4: return scalar(0x4e00...0x9fff)
        case 5: return scalar(0xac00...0xd7a3)
        case 6: return scalar(0xff01...0xff9f)
        case 7: return scalar(0x1f300...0x1f64f)
        case 8: return scalar(0x2600...0x27bf) + "\u{fe0f}"
        case 9:
            let count = Int.random(in: 2...12, using: &random)
            return (0..<count).map { _ in scalar(0x1f466...0x1f469) }.joined(separator: "\u{200d}")
        case 10: return scalar(0x1f44a...0x1f450) + scalar(0x1f3fb...0x1f3ff)
        case 11: return scalar(0x1f1e6...0x1f1ff)
        case 12:
            return "e" + (0..<Int.random(in: 1...12, using: &random)).map { _ in scalar(0x300...0x36f) }.joined()
        case 13: return scalar(0x300...0x36f)
        case 14: return scalar(0x0...0x1f)
        case 15: return scalar(0x7f...0x9f)
        case 16:
            let sequences = [
                "\u{1b}[2J", "\u{1b}]8;;https://evil.example/\u{7}", "\u{1b}]52;c;Zm9v\u{1b}\\", "\u{1b}[1;31m",
                "\u{9b}5A", "\u{1b}P1$r\u{1b}\\", "\u{1b}", "\u{1b}(0", "\r", "\r\n", "\n", "\t",
            ]
            return sequences[Int.random(in: 0..<sequences.count, using: &random)]
        case 17:
            let invisible: [UInt32] = [
                0x200b, 0x200c, 0x200d, 0x200e, 0x202e, 0x2066, 0xfeff, 0xad, 0x2060, 0x61c, 0xe0041, 0xe007f, 0x180e,
            ]
            return String(Character(Unicode.Scalar(invisible[Int.random(in: 0..<invisible.count, using: &random)])!))
        case 18: return "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}"
        case 19:
            return [scalar(0x378...0x379), scalar(0xe000...0xf8ff), "\u{fffe}", scalar(0x1fae0...0x1faff)][
                Int.random(in: 0..<4, using: &random)]
        case 20: return scalar(0x1100...0x11ff)
        default: return scalar(0x20...0x2ffff)
        }
    }

    /// Mostly short strings, some of hundreds of characters and some of up to 20,000,
    /// sometimes without a single space.
    static func string(using random: inout SplitMix64) -> String {
        let length: Int
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<6: length = Int.random(in: 0...40, using: &random)
        case 6..<9: length = Int.random(in: 40...800, using: &random)
        default: length = Int.random(in: 800...20_000, using: &random)
        }
        let spaces = random.next() % 4 != 0
        var text = ""
        for _ in 0..<length {
            let piece = piece(using: &random)
            text += spaces || piece != " " ? piece : "x"
        }
        return text
    }

    static func product(_ item: Int, using random: inout SplitMix64) -> AssistantProduct {
        func maybe() -> String? { random.next() % 3 == 0 ? nil : string(using: &random) }
        let price: AssistantPrice? =
            switch random.next() % 3 {
            case 0: nil
            case 1: .amount(Double(random.next() % 10_000_000) / 100)
            default: .text(string(using: &random))
            }
        return AssistantProduct(
            itemId: "item-\(item)", ref: AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: item),
            name: string(using: &random), sku: random.next() % 4 == 0 ? nil : "SKU-\(item)", url: nil,
            imageUrl: random.next() % 2 == 0 ? "https://img/\(item)" : nil, price: price,
            oldPrice: random.next() % 3 == 0 ? .amount(999_999) : nil, currency: maybe(), category: maybe(),
            brand: maybe())
    }

    static func plainProduct(name: String) -> AssistantProduct {
        AssistantProduct(
            itemId: "item-0", ref: AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: 0),
            name: name, sku: "SKU", url: nil, imageUrl: nil, price: .amount(1990), oldPrice: nil, currency: "RUB",
            category: nil, brand: nil)
    }

    static func scalars(in block: AssistantProductBlock) -> Int {
        var count = block.title?.unicodeScalars.count ?? 0
        for product in block.products {
            for text in [product.name, product.currency, product.category, product.brand] {
                count += text?.unicodeScalars.count ?? 0
            }
            if case .text(let text) = product.price { count += text.unicodeScalars.count }
        }
        return count
    }

    struct Chat {
        let opening: AssistantChatSnapshot
        let replied: AssistantChatSnapshot
        let logText: String
        let inputScalars: Int
    }

    static func chat(using random: inout SplitMix64) -> Chat {
        let title = string(using: &random)
        let subtitle = string(using: &random)
        let suggests = (0..<Int.random(in: 0...4, using: &random)).map { _ in string(using: &random) }
        let question = string(using: &random)
        let answer = string(using: &random)
        let failed = string(using: &random)
        let products = (0..<Int.random(in: 0...4, using: &random)).map { product($0, using: &random) }
        let block = products.isEmpty ? nil : AssistantProductBlock(title: string(using: &random), products: products)
        let buttons = (0..<Int.random(in: 0...3, using: &random)).map { index in
            AssistantReplyButton(
                title: string(using: &random), action: .followUrl(URL(fileURLWithPath: "/\(index)")),
                isEnabled: index != 1)
        }
        let logText = string(using: &random)
        let messages = [
            AssistantChatMessage(id: "u1", role: .user, text: question),
            AssistantChatMessage(
                id: "a1", role: .assistant, text: answer, productBlock: block, buttons: buttons, canRate: true),
            AssistantChatMessage(
                id: "u2", role: .user, text: failed,
                status: .failed(AssistantError(code: .server, message: "HTTP 502")), canRetry: true),
        ]
        let opening = AssistantChatSnapshot(
            title: title, subtitle: subtitle, messages: [], suggests: suggests, isSending: false, canSend: true)
        let replied = AssistantChatSnapshot(
            title: title, subtitle: subtitle, messages: messages, suggests: suggests, isSending: false, canSend: true)
        let texts = [title, subtitle, question, answer, failed, logText] + suggests + buttons.map(\.title)
        let scalars = texts.reduce(0) { $0 + $1.unicodeScalars.count } + 4 * logText.unicodeScalars.count
        return Chat(
            opening: opening, replied: replied, logText: logText,
            inputScalars: scalars + (block.map(Self.scalars(in:)) ?? 0))
    }
}
