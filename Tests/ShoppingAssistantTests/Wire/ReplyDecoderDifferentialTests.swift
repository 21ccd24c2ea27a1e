import Foundation
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// The byte-level reply decoder against a reference that decodes the same bytes into a
/// `JSONValue` tree first and applies wire.md's rules to the tree — the way the engine decoded
/// replies before. Random reply-shaped documents: every field sometimes of the wrong type,
/// duplicated, `null` or missing, items and buttons malformed, URLs valid and not.
///
/// Each case is one seed; `REPLY_DIFFERENTIAL_SEED=<seed>` reruns one
/// (`REPLY_DIFFERENTIAL_CASES=<n>` changes how many run).
@Suite(.timeLimit(.minutes(2))) struct ReplyDecoderDifferentialTests {
    static var seeds: [UInt64] {
        if let text = ProcessInfo.processInfo.environment["REPLY_DIFFERENTIAL_SEED"], let seed = UInt64(text) {
            return [seed]
        }
        let count = ProcessInfo.processInfo.environment["REPLY_DIFFERENTIAL_CASES"].flatMap { UInt64($0) } ?? 2_000
        return Array(1...max(1, count))
    }

    @Test func byteDecoderAgreesWithTheTreeReference() {
        var failures = 0
        var products = 0
        var dropped = 0
        for seed in Self.seeds {
            let generator = ReplyShapedJSON(seed: seed)
            let historyMessage = generator.rng.chance(50)
            let bytes = generator.document()
            let decoded = WireFuzzing.decodeReply(bytes, historyMessage: historyMessage)
            products += decoded?.products?.count ?? 0
            dropped += decoded?.diagnostics.count ?? 0
            guard let difference = ReplyDifferential.compare(bytes, historyMessage: historyMessage) else { continue }
            failures += 1
            Issue.record(
                """
                reply differential: seed \(seed): \(difference)
                input: \(String(decoding: bytes, as: UTF8.self).prefix(1_500))
                Rerun: REPLY_DIFFERENTIAL_SEED=\(seed) swift test --filter ReplyDecoderDifferentialTests
                """)
            if failures >= 3 { break }
        }
        print(
            "Reply differential: \(Self.seeds.count) replies, \(products) products kept, \(dropped) items and "
                + "buttons dropped, \(failures) failing")
    }

    // covers: D18, C7
    @Test func aReplysSuggestsReadAloneAreThoseOfTheWholeReply() {
        var failures = 0
        for seed in Self.seeds {
            let generator = ReplyShapedJSON(seed: seed)
            let idKey: ReplyDecoder.IdentifierKey = generator.rng.chance(50) ? .id : .assistantMessageId
            let bytes = generator.document()
            let whole = ReplyDecoder.decode(bytes, idKey: idKey, keepsReceived: false)
            let alone = ReplyDecoder.suggests(bytes, idKey: idKey)
            guard
                (whole == nil) != (alone == nil) || whole?.assistantMessageId != alone?.assistantMessageId
                    || whole?.suggests != alone?.suggests
            else { continue }
            failures += 1
            Issue.record(
                """
                seed \(seed): whole \(String(describing: whole.map { ($0.assistantMessageId, $0.suggests) })), \
                alone \(String(describing: alone))
                input: \(String(decoding: bytes, as: UTF8.self).prefix(1_500))
                """)
            if failures >= 3 { break }
        }
    }
}

// MARK: - Reply-shaped random documents

/// Replies as a server might send them on a bad day: members in any order, sometimes twice,
/// of the wrong type, `null` or missing; strings with escapes; URLs valid and not.
final class ReplyShapedJSON {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    func document() -> [UInt8] {
        var output: [UInt8] = []
        if rng.chance(3) {
            write(anyValue(depth: 0), &output)  // not an object
            return output
        }
        let members: [(String, () -> Node)] = [
            ("assistantMessageId", { .string(self.pick(["am-1", "", "am-Ж"])) }), ("id", { .string("am-h") }),
            ("text", { .string(self.text()) }), ("replyTo", { .string("m-1") }), ("messageId", { .string("m-2") }),
            ("products", { self.productBlock() }), ("ui", { self.ui() }),
            ("events", { self.events(types: ["impression", "click", "other"]) }), ("threadId", { .string("t-1") }),
            ("futureField", { self.anyValue(depth: 1) }),
        ]
        write(object(members), &output)
        return output
    }

    indirect enum Node {
        case null, bool(Bool), number(String), string(String), array([Node]), object([(String, Node)])
    }

    // MARK: Shapes

    /// An object with some of `members` in random order, each sometimes twice or of another
    /// type; `likely` members are left out less often.
    private func object(_ members: [(String, () -> Node)], likely: Set<String> = []) -> Node {
        var chosen: [(String, Node)] = []
        for (name, make) in members.shuffled(using: &rng) where rng.chance(likely.contains(name) ? 95 : 60) {
            chosen.append((name, rng.chance(80) ? make() : anyValue(depth: 2)))
            if rng.chance(8) { chosen.append((name, rng.chance(50) ? make() : anyValue(depth: 2))) }
        }
        return .object(chosen)
    }

    private func productBlock() -> Node {
        object([
            ("title", { .string(self.text()) }),
            (
                "items",
                {
                    .array(
                        (0..<self.rng.below(5)).map { _ in self.rng.chance(85) ? self.item() : self.anyValue(depth: 2) }
                    )
                }
            ),
        ])
    }

    private func item() -> Node {
        let identifier: () -> Node = {
            self.rng.chance(70)
                ? .string(self.pick(["p-1", "SKU-2", "", "Ж"])) : .number(self.pick(["7", "1.5", "-0", "1e3"]))
        }
        let url: () -> Node = { .string(self.url()) }
        let price: () -> Node = {
            self.rng.chance(50)
                ? .number(self.pick(["1990", "2490.5", "0", "-1"])) : .string(self.pick(["", "1 990 ₽"]))
        }
        return object(
            [
                ("itemId", identifier), ("name", { .string(self.text()) }), ("sku", identifier), ("url", url),
                ("imageUrl", url), ("price", price), ("oldPrice", price), ("currency", { .string("RUB") }),
                ("category", { .string(self.text()) }), ("brand", { .string(self.text()) }),
                ("events", { self.events(types: ["click", "visible_impression", "impression", "cl\u{0}ick"]) }),
                ("color", { .string(self.text()) }), ("rating", { self.anyValue(depth: 2) }),
                ("badges", { .array([.string("new"), .null]) }), ("Ж", { self.anyValue(depth: 3) }), ("", { .null }),
            ], likely: ["itemId", "name"])
    }

    private func events(types: [String]) -> Node {
        .array(
            (0..<rng.below(4)).map { _ in
                guard rng.chance(85) else { return anyValue(depth: 3) }
                return object([
                    ("type", { .string(self.pick(types)) }),
                    (
                        "urls",
                        {
                            .array(
                                (0..<self.rng.below(4)).map { _ in
                                    self.rng.chance(85) ? .string(self.url()) : .number("3")
                                })
                        }
                    ),
                    ("weight", { .number("2") }),
                ])
            })
    }

    private func ui() -> Node {
        object([
            (
                "suggests",
                { .array((0..<self.rng.below(4)).map { _ in self.rng.chance(80) ? .string(self.text()) : .null }) }
            ),
            (
                "buttons",
                {
                    .array(
                        (0..<self.rng.below(4)).map { _ in self.rng.chance(85) ? self.button() : self.anyValue(depth: 3)
                        })
                }
            ),
        ])
    }

    private func button() -> Node {
        object(
            [
                (
                    "action",
                    { .string(self.pick(["follow_url", "open_support_chat", "add_to_cart", "", "follow_url"])) }
                ),
                ("value", { .string(self.text()) }), ("url", { .string(self.url()) }), ("type", { .string("button") }),
                ("topic", { self.anyValue(depth: 3) }),
            ], likely: ["action"])
    }

    // MARK: Leaves

    private func url() -> String {
        pick([
            "https://t.example/c?i=p-1", "http://t2.example/v", "https://shop.example/delivery", "ftp://t.example/x",
            "not a url", "https://a/b c", "https://user@t.example/", "https://t.example/%41#f", "HTTPS://T.EXAMPLE",
        ])
    }

    private func text() -> String {
        pick(["", "Кружка", "a\"b\\c", "line\nbreak", "😀", "\u{FEFF}bom", "tab\there", "/slash/"])
    }

    private func anyValue(depth: Int) -> Node {
        switch rng.below(depth < 3 ? 7 : 5) {
        case 0: return .null
        case 1: return .bool(rng.chance(50))
        case 2: return .number(pick(["0", "-1", "3.25", "1e2", "12345678901234567890"]))
        case 3, 4: return .string(text())
        case 5: return .array((0..<rng.below(3)).map { _ in anyValue(depth: depth + 1) })
        default:
            return .object((0..<rng.below(3)).map { _ in (pick(["a", "itemId", "x"]), anyValue(depth: depth + 1)) })
        }
    }

    private func pick<T>(_ choices: [T]) -> T { choices[rng.below(choices.count)] }

    // MARK: Writing

    private func write(_ node: Node, _ output: inout [UInt8]) {
        switch node {
        case .null: output += Array("null".utf8)
        case .bool(let value): output += Array((value ? "true" : "false").utf8)
        case .number(let literal): output += Array(literal.utf8)
        case .string(let text): writeString(text, &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, (name, value)) in members.enumerated() {
                if index > 0 { output += Array((rng.chance(10) ? ", " : ",").utf8) }
                writeString(name, &output)
                output.append(UInt8(ascii: ":"))
                write(value, &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// A string, escaped where it must be and now and then where it need not be.
    private func writeString(_ text: String, _ output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" || scalar.value < 0x20 || rng.chance(10) {
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    output += Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                }
            } else if scalar == "/", rng.chance(50) {
                output += Array("\\/".utf8)
            } else {
                output += Array(String(scalar).utf8)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
