import Foundation
import Testing

@testable import ShoppingAssistant

/// The strict JSON reader: what it accepts, what it rejects and why (RFC 8259).
@Suite(.timeLimit(.minutes(2))) struct JSONReaderTests {
    private static func parse(_ text: String) throws(JSONReadError) -> JSONValue {
        try JSONValue(parsing: Array(text.utf8))
    }

    private static func reason(_ bytes: [UInt8]) -> JSONReadError.Reason? {
        do throws(JSONReadError) {
            _ = try JSONValue(parsing: bytes)
            return nil
        } catch {
            return error.reason
        }
    }

    private static func reason(_ text: String) -> JSONReadError.Reason? { reason(Array(text.utf8)) }

    @Test func readsEveryKindAndAnyTopLevelValue() throws {
        let value = try Self.parse(
            #" { "a" : null , "b":true,"c":false, "d":-1.5e2,"e":"x\ty","f":[1,[],{}],"g":{"h":{}} } "#)
        #expect(
            value
                == [
                    "a": nil, "b": true, "c": false, "d": -150.0, "e": "x\ty", "f": [1, [], [:]], "g": ["h": [:]],
                ])
        #expect(try Self.parse("7") == 7)
        #expect(try Self.parse(" \"s\"\n") == "s")
        #expect(try Self.parse("null") == .null)
        #expect(try Self.parse("\t\r\n[]\t\r\n") == [])
    }

    @Test(arguments: [
        ("[1,]", JSONReadError.Reason.trailingComma), ("{\"a\":1,}", .trailingComma), ("[1,\n ]", .trailingComma),
        ("[,1]", .unexpectedByte), ("[1,,2]", .unexpectedByte), ("{,}", .unexpectedByte),
        ("/*c*/1", .unexpectedByte), ("[1]//c", .trailingData), ("#1", .unexpectedByte),
        ("01", .invalidNumber), ("-01", .invalidNumber), ("00", .invalidNumber), (".5", .unexpectedByte),
        ("1.", .invalidNumber), ("1.e5", .invalidNumber), ("1e", .invalidNumber), ("1e+", .invalidNumber),
        ("+1", .unexpectedByte), ("-", .unexpectedEnd), ("-a", .invalidNumber), ("0x10", .trailingData),
        ("NaN", .unexpectedByte), ("Infinity", .unexpectedByte), ("-Infinity", .invalidNumber),
        ("'a'", .unexpectedByte), ("{a:1}", .unexpectedByte), ("{\"a\" 1}", .unexpectedByte),
        ("[1 2]", .unexpectedByte), ("{\"a\":1 \"b\":2}", .unexpectedByte), ("[1}", .unexpectedByte),
        ("{\"a\":1]", .unexpectedByte), ("tru", .unexpectedByte), ("nul", .unexpectedByte), ("True", .unexpectedByte),
        ("true1", .trailingData), ("1 2", .trailingData), ("", .unexpectedEnd), ("   ", .unexpectedEnd),
        ("[", .unexpectedEnd), ("{\"a\"", .unexpectedEnd), ("\"abc", .unexpectedEnd), ("\u{0B}1", .unexpectedByte),
        ("\u{A0}1", .unexpectedByte), ("\"a\u{01}b\"", .controlCharacter), ("\"a\nb\"", .controlCharacter),
        ("\"a\u{1F}\"", .controlCharacter), ("\"\\x\"", .invalidEscape), ("\"\\'\"", .invalidEscape),
        ("\"\\U0041\"", .invalidEscape), ("\"\\u00\"", .invalidEscape), ("\"\\u00", .unexpectedEnd),
        ("\"\\uZZZZ\"", .invalidEscape), ("\"\\ud800\"", .loneSurrogate), ("\"\\udc00\"", .loneSurrogate),
        ("\"\\ud800x\"", .loneSurrogate), ("\"\\ud800\\u0041\"", .loneSurrogate),
        ("\"\\ud800\\ud800\"", .loneSurrogate), ("\"\\udfff\\ud800\"", .loneSurrogate), ("1e400", .numberOutOfRange),
        ("-1e400", .numberOutOfRange), ("1" + String(repeating: "0", count: 400), .numberOutOfRange),
        ("1.7976931348623159e308", .numberOutOfRange),
    ])
    func rejectsWhatRFC8259DoesNotAllow(_ text: String, _ reason: JSONReadError.Reason) {
        #expect(Self.reason(text) == reason, "\(text.debugDescription)")
    }

    @Test(
        arguments: [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xC1, 0xBF, 0x22], [0x22, 0xE0, 0x80, 0x80, 0x22],
            [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xED, 0xBF, 0xBF, 0x22], [0x22, 0xF0, 0x80, 0x80, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22],
            [0x22, 0x80, 0x22], [0x22, 0xC3], [0x22, 0xE2, 0x28, 0xA1, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x22],
        ] as [[UInt8]])
    func rejectsMalformedUTF8(_ bytes: [UInt8]) {
        #expect(Self.reason(bytes) == .invalidUTF8, "\(bytes)")
    }

    /// Strings are scanned eight bytes at a time, jumping to the first byte in a word that needs
    /// a look: an escape, a multi-byte character, the closing quote or a control character at
    /// any place in or across those words, among bytes just beside them in value, reads the
    /// same text or fails the same way.
    @Test func aByteThatNeedsALookIsFoundAtEveryPlaceOfAnyLength() throws {
        let backgrounds = ["a", "!", "#", "[", "]", " ", "\u{7F}", "~"]
        let specials: [(json: String, text: String)] = [
            (#"\""#, "\""), (#"\\"#, "\\"), (#"\/"#, "/"), (#"\n"#, "\n"), (#"\u00e9"#, "é"), ("я", "я"),
            ("😀", "😀"), ("\u{7F}", "\u{7F}"),
        ]
        for background in backgrounds {
            for length in 0..<20 {
                for place in 0...length {
                    let before = String(repeating: background, count: place)
                    let after = String(repeating: background, count: length - place)
                    for special in specials {
                        let value = try Self.parse("\"" + before + special.json + after + "\"")
                        #expect(value == .string(before + special.text + after), "\(length) \(place) \(special.json)")
                    }
                    #expect(Self.reason("\"" + before + "\u{1F}" + after + "\"") == .controlCharacter)
                    #expect(Self.reason("\"" + before + after) == .unexpectedEnd)
                }
            }
        }
    }

    @Test func readsWellFormedUTF8AndEscapes() throws {
        #expect(try Self.parse("\"Помощник 😀 €\"") == "Помощник 😀 €")
        #expect(try JSONValue(parsing: [0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0x22] as [UInt8]) == "\u{10FFFF}")
        #expect(try JSONValue(parsing: [0x22, 0xEF, 0xBF, 0xBF, 0x22] as [UInt8]) == "\u{FFFF}")
        #expect(try Self.parse(#""\"\\\/\b\f\n\r\t""#) == "\"\\/\u{08}\u{0C}\n\r\t")
        #expect(try Self.parse(#""\u0041\u00e9\u00C9\u20AC\ud83d\ude00\u0000""#) == "AéÉ€😀\u{0}")
        #expect(try Self.parse(#""\uD834\uDD1E""#) == "𝄞")
        #expect(try Self.parse("\"\u{7F}\"") == "\u{7F}")  // DEL needs no escape
        // Escapes next to multibyte text decode in place.
        #expect(try Self.parse(#""Ж\nЖ\u0416""#) == "Ж\nЖЖ")
    }

    @Test func ignoresOneUTF8ByteOrderMarkAndReadsOnlyUTF8() throws {
        #expect(try JSONValue(parsing: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)) == [:])
        #expect(Self.reason([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF, 0x31]) == .unexpectedByte)
        #expect(Self.reason([0xEF, 0xBB, 0xBF]) == .unexpectedEnd)
        // UTF-16 and UTF-32, which Foundation guesses from NUL bytes or a BOM, are not JSON texts here.
        #expect(Self.reason([0x00, 0x31, 0x00, 0x32]) == .unexpectedByte)
        #expect(Self.reason([0x31, 0x00]) == .trailingData)
        #expect(Self.reason([0xFE, 0xFF, 0x00, 0x31]) == .unexpectedByte)
        #expect(Self.reason([0xFF, 0xFE, 0x31, 0x00]) == .unexpectedByte)
        #expect(Self.reason([0x22, 0x00, 0x22]) == .controlCharacter)
    }

    @Test(arguments: [
        "0", "-0", "1", "-1", "0.1", "0.30000000000000004", "1e5", "1E+5", "1e-5", "123.456e-7", "9007199254740993",
        "18446744073709551615", "18446744073709551616", "123456789012345678901234567890", "2.2250738585072011e-308",
        "2.2250738585072014e-308", "4.9e-324", "2e-324", "1e-400", "1.7976931348623157e308", "17976931348623157e292",
        "0.1234567890123456789012345678901234567890123", "3.141592653589793238462643383279", "1e22", "1e23",
        "9007199254740992e22", "4503599627370497.5", "0.000000000000000000000000000000000000000001e44",
        "100000000000000000000000000000000000000e-165", "-0.0e-999999999999", "7e-10000000000",
        "1" + String(repeating: "0", count: 300), "0." + String(repeating: "0", count: 320) + "1",
        "1." + String(repeating: "3", count: 10_000),
    ])
    func readsNumbersAsTheCorrectlyRoundedDouble(_ literal: String) throws {
        let expected = try #require(Double(literal))
        let value = try Self.parse(literal)
        #expect(value.numberValue == expected, "\(literal.prefix(60))")
        #expect(value.numberValue?.sign == expected.sign, "\(literal.prefix(60))")
    }

    @Test func duplicateMemberNamesLastOneWins() throws {
        #expect(try Self.parse(#"{"a":1,"b":2,"a":3}"#) == ["a": 3, "b": 2])
        #expect(try Self.parse(#"{"a":{"x":1},"a":"y"}"#) == ["a": "y"])
        // An escaped spelling is the same name.
        #expect(try Self.parse(#"{"a":1,"\u0061":2}"#) == ["a": 2])
    }

    @Test func nestingIsBoundedAt512() throws {
        let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(Self.reason(deepest) == nil)
        let objects = String(repeating: #"{"a":"#, count: 512) + "1" + String(repeating: "}", count: 512)
        #expect(Self.reason(objects) == nil)
        #expect(Self.reason("[" + deepest + "]") == .tooDeep)
        #expect(Self.reason(#"{"a":"# + deepest + "}") == .tooDeep)
        // An unbounded opening run fails at the bound, without reading on.
        #expect(Self.reason(String(repeating: "[", count: 100_000)) == .tooDeep)
        // Depth is nesting, not the number of containers.
        let wide = "[" + Array(repeating: "[[1]]", count: 10_000).joined(separator: ",") + "]"
        #expect(try Self.parse(wide).arrayValue?.count == 10_000)
    }

    @Test func longStringsAndManyMembersAreRead() throws {
        let long = String(repeating: "Ж", count: 10_000) + String(repeating: "a", count: 10_000)
        #expect(try Self.parse("\"\(long)\"") == .string(long))
        let escaped = String(repeating: #"\u0416\n"#, count: 10_000)
        #expect(try Self.parse("\"\(escaped)\"").stringValue?.count == 20_000)
        let members = (0..<10_000).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        #expect(try Self.parse("{\(members)}").objectValue?.count == 10_000)
    }

    @Test func errorsNameTheOffset() {
        do throws(JSONReadError) {
            _ = try JSONValue(parsing: Array(#"{"a":[1,2,]}"#.utf8))
            Issue.record("accepted a trailing comma")
        } catch {
            #expect(error == JSONReadError(.trailingComma, at: 9))
            #expect(error.description == "trailing comma at byte 9")
        }
    }

    @Test func readsStringsHeldInAString() throws {
        #expect(try JSONValue(parsing: #"{"enabled":true}"#) == ["enabled": true])
        #expect(throws: JSONReadError.self) { try JSONValue(parsing: "{\"enabled\":true,}") }
    }
}
