import Foundation

/// Random JSON texts for differential tests: valid documents written in every way RFC 8259
/// allows (whitespace, escapes, number spellings), and mutations of them that hit the edges
/// of the grammar (trailing commas, stray bytes, broken UTF-8, cut-off escapes).
struct RandomJSON {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    // MARK: - Valid documents

    /// A document: a random value, written with random whitespace and spellings.
    mutating func document() -> [UInt8] {
        var output: [UInt8] = []
        if rng.chance(3) { output += [0xEF, 0xBB, 0xBF] }
        whitespace(&output)
        value(&output, depth: 0)
        whitespace(&output)
        return output
    }

    mutating func value(_ output: inout [UInt8], depth: Int) {
        let containers = depth < 6
        switch rng.below(containers ? 10 : 6) {
        case 0: output += Array("null".utf8)
        case 1: output += Array((rng.chance(50) ? "true" : "false").utf8)
        case 2, 3: number(&output)
        case 4, 5: string(&output)
        case 6, 7: array(&output, depth: depth + 1)
        default: object(&output, depth: depth + 1)
        }
    }

    mutating func whitespace(_ output: inout [UInt8]) {
        guard rng.chance(30) else { return }
        for _ in 0..<(1 + rng.below(3)) { output.append([0x20, 0x09, 0x0A, 0x0D][rng.below(4)]) }
    }

    mutating func array(_ output: inout [UInt8], depth: Int) {
        output.append(UInt8(ascii: "["))
        whitespace(&output)
        let count = rng.below(5)
        for index in 0..<count {
            if index > 0 {
                output.append(UInt8(ascii: ","))
                whitespace(&output)
            }
            value(&output, depth: depth)
            whitespace(&output)
        }
        output.append(UInt8(ascii: "]"))
    }

    mutating func object(_ output: inout [UInt8], depth: Int) {
        output.append(UInt8(ascii: "{"))
        whitespace(&output)
        let count = rng.below(5)
        var names: [[UInt8]] = []
        for index in 0..<count {
            if index > 0 {
                output.append(UInt8(ascii: ","))
                whitespace(&output)
            }
            // Sometimes a name again, to exercise "the last one wins".
            if !names.isEmpty, rng.chance(15) {
                output += names[rng.below(names.count)]
            } else {
                var name: [UInt8] = []
                string(&name)
                names.append(name)
                output += name
            }
            whitespace(&output)
            output.append(UInt8(ascii: ":"))
            whitespace(&output)
            value(&output, depth: depth)
            whitespace(&output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Characters from every class a reader treats differently.
    private static let alphabet: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "~", "\"", "\\", "/", "\u{7F}", "\u{0}", "\u{1}", "\n", "\t", "\u{1F}", "é", "Ж", "€",
        "\u{FFFF}", "\u{FEFF}", "\u{10000}", "😀", "\u{10FFFF}", "\u{301}", "\u{212A}",
    ]

    mutating func string(_ output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        let length = rng.chance(5) ? rng.below(300) : rng.below(8)
        for _ in 0..<length {
            let scalar = Self.alphabet[rng.below(Self.alphabet.count)]
            scalarText(scalar, &output)
        }
        output.append(UInt8(ascii: "\""))
    }

    /// One scalar inside a string: escaped where it must be, and sometimes where it need not.
    private mutating func scalarText(_ scalar: Unicode.Scalar, _ output: inout [UInt8]) {
        let short: [Unicode.Scalar: String] = [
            "\"": "\\\"", "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\u{8}": "\\b", "\u{C}": "\\f",
        ]
        let mustEscape = scalar.value < 0x20 || scalar == "\"" || scalar == "\\"
        if !mustEscape, !rng.chance(20) {
            output += Array(String(scalar).utf8)
            return
        }
        if let text = short[scalar], rng.chance(60) {
            output += Array(text.utf8)
            return
        }
        if scalar == "/", rng.chance(50) {
            output += Array("\\/".utf8)
            return
        }
        for unit in String(scalar).utf16 {
            let hex = String(unit, radix: 16, uppercase: rng.chance(50))
            output += Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
        }
    }

    mutating func number(_ output: inout [UInt8]) {
        var text = rng.chance(30) ? "-" : ""
        switch rng.below(8) {
        case 0: text += "0"
        case 1: text += String(rng.below(1000))
        case 2: text += String(rng.next() >> UInt64(rng.below(64)))
        case 3: text += String(1 + rng.below(9)) + digits(15 + rng.below(30))  // beyond 2^64 and Double's digits
        default: text += String(1 + rng.below(9)) + digits(rng.below(6))
        }
        if rng.chance(40) { text += "." + digits(1 + (rng.chance(10) ? rng.below(40) : rng.below(6))) }
        if rng.chance(30) {
            text += rng.chance(50) ? "e" : "E"
            if rng.chance(50) { text += rng.chance(50) ? "+" : "-" }
            let exponents = ["0", "5", "22", "23", "300", "307", "308", "309", "320", "324", "325", "400", "00012"]
            text += rng.chance(80) ? exponents[rng.below(exponents.count)] : String(rng.below(400))
        }
        output += Array(text.utf8)
    }

    private mutating func digits(_ count: Int) -> String {
        String((0..<count).map { _ in Character(String(rng.below(10))) })
    }

    // MARK: - Mutations

    /// Bytes that sit on the edges of the grammar.
    private static let fragments: [[UInt8]] = [
        [0x2C], [0x5D], [0x7D], [0x5B], [0x7B], [0x22], [0x5C], [0x3A], [0x30], [0x2D], [0x2E], [0x65], [0x2B],
        Array("\\u".utf8), Array("\\ud800".utf8), Array("\\udc00".utf8), Array("\\u00e9".utf8), [0x00], [0x01],
        [0x0B], [0x0C], [0x7F], [0x80], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
        [0xF0, 0x9F, 0x98], [0xEF, 0xBB, 0xBF], [0xFE, 0xFF], Array("/*".utf8), Array("NaN".utf8),
        Array("Infinity".utf8), Array("true".utf8), Array("null".utf8), Array("1e999".utf8), Array("01".utf8),
        Array(",]".utf8), Array(",}".utf8), Array("[1,]".utf8), Array("{\"a\":1,}".utf8), [0x20], [0x09],
    ]

    /// `document` changed in one to three places.
    mutating func mutated(_ document: [UInt8]) -> [UInt8] {
        var bytes = document
        for _ in 0..<(1 + rng.below(3)) {
            let position = bytes.isEmpty ? 0 : rng.below(bytes.count + 1)
            switch rng.below(8) {
            case 0 where !bytes.isEmpty:
                bytes[min(position, bytes.count - 1)] = UInt8(truncatingIfNeeded: rng.next())
            case 1, 2:
                bytes.insert(contentsOf: Self.fragments[rng.below(Self.fragments.count)], at: position)
            case 3 where !bytes.isEmpty:
                let end = min(bytes.count, position + 1 + rng.below(4))
                bytes.removeSubrange(min(position, end)..<end)
            case 4 where !bytes.isEmpty:
                let end = min(bytes.count, position + 1 + rng.below(16))
                bytes.insert(contentsOf: bytes[min(position, end)..<end], at: rng.below(bytes.count + 1))
            case 5:
                bytes.removeSubrange(position..<bytes.count)
            case 6:
                // A trailing comma before some closing bracket.
                if let close = bytes.indices.filter({ bytes[$0] == 0x5D || bytes[$0] == 0x7D }).randomElement(
                    using: &rng)
                {
                    bytes.insert(0x2C, at: close)
                }
            default:
                bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: position)
            }
        }
        return bytes
    }
}

extension SplitMix64: RandomNumberGenerator {}
