import Foundation
import ShoppingAssistantTestSupport
import Testing

@testable import ShoppingAssistant

/// Our strict reader against Foundation's `JSONSerialization` on random and mutated JSON:
/// both accept or both reject, and what both accept reads as equal values
/// (`JSONDifferential` defines equality and the documented deviations).
///
/// Each case is one seed; a failure prints it, and `JSON_DIFFERENTIAL_SEED=<seed>` reruns that
/// case alone (`JSON_DIFFERENTIAL_CASES=<n>` changes how many run by default).
@Suite(.timeLimit(.minutes(2))) struct JSONDifferentialTests {
    static let defaultCases: UInt64 = 4_000

    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let text = environment["JSON_DIFFERENTIAL_SEED"], let seed = UInt64(text) { return [seed] }
        let count = environment["JSON_DIFFERENTIAL_CASES"].flatMap { UInt64($0) } ?? defaultCases
        return Array(1...max(1, count))
    }

    /// One case: a valid document, mutated in two cases out of three.
    static func input(seed: UInt64) -> [UInt8] {
        var random = RandomJSON(seed: seed)
        let document = random.document()
        return random.rng.chance(33) ? document : random.mutated(document)
    }

    @Test func readerAgreesWithJSONSerialization() {
        var accepted = 0
        var rejected = 0
        var excluded = 0
        var deviations: [JSONDifferential.Deviation: Int] = [:]
        var failures = 0
        for seed in Self.seeds {
            let input = Self.input(seed: seed)
            switch JSONDifferential.compare(input) {
            case .agree(let wasAccepted, let seen):
                if wasAccepted { accepted += 1 } else { rejected += 1 }
                for deviation in seen { deviations[deviation, default: 0] += 1 }
            case .excluded(let deviation):
                excluded += 1
                deviations[deviation, default: 0] += 1
            case .mismatch(let detail):
                failures += 1
                let message = """
                    JSON differential: seed \(seed) disagrees with JSONSerialization: \(detail)
                    input (\(input.count) bytes): \(Self.describe(input))
                    Rerun this case alone: JSON_DIFFERENTIAL_SEED=\(seed) swift test --filter JSONDifferentialTests
                    """
                print(message)
                Issue.record(Comment(rawValue: message))
            }
            if failures >= 3 { break }
        }
        let seen = deviations.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
        print(
            "JSON differential: \(Self.seeds.count) cases, \(accepted) accepted and \(rejected) rejected by both, "
                + "\(excluded) excluded, \(failures) failing; deviations: \(seen.joined(separator: ", "))")
        // The generator must reach both outcomes in quantity, or the comparison proves little.
        if Self.seeds.count >= 1_000 {
            #expect(accepted > Self.seeds.count / 5)
            #expect(rejected > Self.seeds.count / 5)
        }
    }

    @Test func sameSeedGeneratesTheSameInput() {
        #expect(Self.input(seed: 7) == Self.input(seed: 7))
        #expect(Self.input(seed: 7) != Self.input(seed: 8))
    }

    /// Printable ASCII as is, everything else as `\xHH`, so a failing input can be pasted back.
    static func describe(_ bytes: [UInt8]) -> String {
        bytes.prefix(600).map { byte in
            (0x20..<0x7F).contains(byte) && byte != 0x5C ? String(UnicodeScalar(byte)) : "\\x" + hex(byte)
        }.joined() + (bytes.count > 600 ? "…" : "")
    }

    private static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return text.count == 1 ? "0" + text : text
    }
}

/// Each documented deviation from Foundation: the comparison names it, and our side is pinned.
@Suite(.timeLimit(.minutes(2))) struct JSONDeviationTests {
    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func trailingCommasAreOursToReject() {
        #expect(
            JSONDifferential.compare(Self.bytes("[1,{\"a\":[2,],},]"))
                == .agree(accepted: true, deviations: [.trailingComma]))
        #expect(throws: JSONReadError(.trailingComma, at: 2)) { try JSONValue(parsing: Self.bytes("[1,]")) }
    }

    @Test func otherEncodingsAreNotCompared() {
        let utf16 = [0x00, 0x5B, 0x00, 0x31, 0x00, 0x5D] as [UInt8]
        #expect(JSONDifferential.compare(utf16) == .excluded(.otherEncoding))
        #expect(throws: JSONReadError.self) { try JSONValue(parsing: utf16) }
    }

    @Test func decimalNumbersAgreeWithinTheToleranceAndOursIsCorrectlyRounded() throws {
        let literal = "0.30000000000000004"
        #expect(JSONDifferential.compare(Self.bytes(literal)) == .agree(accepted: true, deviations: [.decimalRounding]))
        #expect(try JSONValue(parsing: Self.bytes(literal)) == .number(try #require(Double(literal))))
    }

    @Test func aLeadingByteOrderMarkInAStringIsKept() throws {
        for text in ["\"\u{FEFF}a\"", "\"\\n\u{FEFF}\"", "{\"\u{FEFF}k\":1}"] {
            #expect(
                JSONDifferential.compare(Self.bytes(text))
                    == .agree(accepted: true, deviations: [.byteOrderMarkInString]), "\(text)")
        }
        #expect(try JSONValue(parsing: Self.bytes("\"\u{FEFF}a\"")) == "\u{FEFF}a")
        #expect(try JSONValue(parsing: Self.bytes("\"\\n\u{FEFF}\"")) == "\n\u{FEFF}")
        #expect(try JSONValue(parsing: Self.bytes("{\"\u{FEFF}k\":1}")) == ["\u{FEFF}k": 1])
        // Two names that Foundation would make one cannot be compared.
        #expect(JSONDifferential.compare(Self.bytes("{\"\u{FEFF}\":1,\"\":2}")) == .excluded(.byteOrderMarkInString))
    }

    @Test func anOutOfRangeNumberIsRejectedEvenWhereADuplicateNameHidesIt() {
        let text = #"{"a":[1e400],"a":1}"#
        #expect(
            JSONDifferential.compare(Self.bytes(text))
                == .agree(accepted: true, deviations: [.overwrittenNumberOutOfRange]))
        #expect(throws: JSONReadError(.numberOutOfRange, at: 6)) { try JSONValue(parsing: Self.bytes(text)) }
    }

    @Test func agreementAndDisagreementAreBothSeen() {
        #expect(
            JSONDifferential.compare(Self.bytes(#"{"a":[1,"x",null,true]}"#)) == .agree(accepted: true, deviations: []))
        #expect(JSONDifferential.compare(Self.bytes("[1 2]")) == .agree(accepted: false, deviations: []))
    }
}
