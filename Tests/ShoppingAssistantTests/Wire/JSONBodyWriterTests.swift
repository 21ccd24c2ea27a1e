import Foundation
import Testing

@testable import ShoppingAssistant

/// The writer's strings and dictionaries, the parts of every body with values of any content:
/// escaped and ordered as `JSONEncoder` (sorted keys, unescaped slashes) does, the rules every
/// queued body and recorded transcript was written by. The bodies themselves are pinned byte
/// for byte in `RequestBodyTests`.
@Suite(.timeLimit(.minutes(2)))
struct JSONBodyWriterTests {
    static func written(_ value: some JSONBodyWritable) -> String {
        var writer = JSONBodyWriter()
        value.write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func encoded(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "encoding failed"
    }

    /// Characters where escaping rules differ between encoders: every ASCII byte, the line and
    /// paragraph separators, DEL, NEL, a BOM, combining marks, bidi controls, Cyrillic, emoji.
    static let alphabet: [Character] = {
        var characters = (0..<0x80).compactMap { Unicode.Scalar($0).map(Character.init) }
        characters += ["\u{2028}", "\u{2029}", "\u{7F}", "\u{85}", "\u{FEFF}", "\u{202E}", "é", "e\u{301}", "ё", "Я"]
        characters += ["😀", "👩‍👩‍👧", "ß", "ﬀ", "ａ", "/", "\\", "\""]
        return characters
    }()

    /// The escapes themselves, written out: JSON's short forms, the other C0 controls as
    /// lower-case `\u00xx`, and nothing else (`/`, DEL, non-ASCII as they are).
    @Test func onlyQuotesBackslashesAndControlsAreEscaped() {
        #expect(
            Self.written("\"\\\u{8}\t\n\u{C}\r\u{0}\u{1F}/\u{7F}é😀")
                == #""\"\\\b\t\n\f\r\u0000\u001f/\#u{7F}é😀""#)
    }

    @Test func everyASCIIByteAndTheUsualSuspectsAreEscapedAsJSONEncoderEscapesThem() {
        let all = String(Self.alphabet)
        #expect(Self.written(all) == Self.encoded(all))
        #expect(Self.written([all, "", "a/b"]) == Self.encoded([all, "", "a/b"]))
        let long = String(repeating: "Подарок \"для\" мамы\n", count: 600)  // 10,000+ characters
        #expect(Self.written(long) == Self.encoded(long))
    }

    /// Strings are searched for bytes to escape eight bytes at a time: a byte to escape at any
    /// place in or across those words, among plain ASCII, multi-byte UTF-8 (bytes ≥ 0x80, which
    /// a word-wide test can mistake for others) or bytes just beside the escaped ones in value.
    @Test func aByteToEscapeIsFoundAtEveryPlaceOfAnyLength() {
        let backgrounds: [Character] = ["a", "я", "!", "#", "[", "]", " ", "\u{7F}", "😀"]
        for background in backgrounds {
            for length in 0..<20 {
                for place in 0...length {
                    for escaped in ["\"", "\\", "\n", "\u{0}", "\u{1F}"] as [Character] {
                        var characters = Array(repeating: background, count: length)
                        characters.insert(escaped, at: place)
                        let text = String(characters)
                        #expect(Self.written(text) == Self.encoded(text), "\(length) \(place) \(background)")
                    }
                }
                let plain = String(repeating: background, count: length)
                #expect(Self.written(plain) == Self.encoded(plain))
            }
        }
    }

    @Test func dictionaryKeysComeInJSONEncodersOrder() {
        let keys =
            ["a10", "a9", "B", "a", "_", "Z", "é", "e", "aB", "ab", "A", "1", "10", "2", "ä", "ё", "я", "Я"]
            + ["a-b", "a_b", "ǅ", "ﬀ", "ss", "ß", "😀", "ａ", "app_version", "app_platform", "sdk_version"]
        let dictionary = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, String($0)) })
        #expect(Self.written(dictionary) == Self.encoded(dictionary))
        #expect(Self.written([String: String]()) == "{}")
    }
}
