import Foundation
import Testing

@testable import ShoppingAssistant

/// Request bodies written by `JSONBodyWriter` are byte for byte what `JSONEncoder` (sorted
/// keys, unescaped slashes) writes from the same value: retries stay byte-identical across the
/// change (D6) and every recorded transcript still matches. Checked here in any build; debug
/// builds also check every body the other tests send.
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

    static func randomString(_ rng: inout SplitMix64, maxLength: Int = 12) -> String {
        String((0..<rng.below(maxLength + 1)).map { _ in alphabet[rng.below(alphabet.count)] })
    }

    static func randomDictionary(_ rng: inout SplitMix64) -> [String: String] {
        Dictionary((0..<rng.below(6)).map { _ in (randomString(&rng, maxLength: 4), randomString(&rng)) }) { a, _ in a }
    }

    static func randomPage(_ rng: inout SplitMix64) -> PageContext {
        PageContext(
            type: PageContext.PageType.allCases[rng.below(PageContext.PageType.allCases.count)],
            data: (0..<rng.below(4)).map { _ in randomString(&rng) }, location: randomString(&rng),
            lng: rng.chance(50) ? randomString(&rng) : nil,
            pageNumber: rng.chance(50) ? Int(truncatingIfNeeded: rng.next()) : nil,
            referrer: rng.chance(50) ? randomString(&rng) : nil, utm: rng.chance(50) ? randomDictionary(&rng) : nil,
            attributes: rng.chance(50) ? randomDictionary(&rng) : nil)
    }

    static func randomEnvelope(_ rng: inout SplitMix64) -> (GravityDevice, GravityUser, GravityOptions) {
        let device = GravityDevice(
            userAgent: randomString(&rng), id: rng.chance(50) ? randomString(&rng) : nil,
            permission: randomString(&rng), tracking: randomString(&rng))
        let user = GravityUser(
            uid: rng.chance(50) ? randomString(&rng) : nil, custom: rng.chance(50) ? randomString(&rng) : nil,
            ses: rng.chance(50) ? randomString(&rng) : nil)
        let options = GravityOptions(
            isReturnCounter: rng.chance(50), isReturnUserInfo: rng.chance(50),
            isReturnAnalyticsMetadata: rng.chance(50),
            isImplicitPageview: rng.chance(50), isImplicitImpression: rng.chance(50),
            isBuildEngagementUrl: rng.chance(50))
        return (device, user, options)
    }

    /// An amount as the typed events carry one: cents, whole roubles, large and tiny values.
    static func randomAmount(_ rng: inout SplitMix64) -> Decimal {
        let cents = Decimal(Int(truncatingIfNeeded: rng.next() % 10_000_000_000))
        return rng.chance(50) ? cents / 100 : cents
    }

    /// A typed event's wire form, with fields of every kind.
    static func randomEvent(_ rng: inout SplitMix64) -> GravityEvent {
        var fields: [(String, GravityEvent.Field?)] = []
        for key in [
            "value", "productId", "quantity", "currency", "cart", "customProps", randomString(&rng, maxLength: 3),
        ]
        where rng.chance(50) {
            switch rng.below(5) {
            case 0: fields.append((key, .text(randomString(&rng))))
            case 1: fields.append((key, .integer(Int(truncatingIfNeeded: rng.next()))))
            case 2: fields.append((key, .amount(randomAmount(&rng))))
            case 3:
                let items = (0..<rng.below(3)).map { _ in
                    CartItem(
                        productId: randomString(&rng), quantity: 1 + rng.below(99),
                        itemPrice: EventAmount(randomAmount(&rng)))
                }
                fields.append((key, .cart(items)))
            default: fields.append((key, .properties(randomDictionary(&rng))))
            }
        }
        return GravityEvent(type: randomString(&rng), name: randomString(&rng), fields)
    }

    static func runtimeContext(_ rng: inout SplitMix64) -> ShoppingRuntimeContext {
        ShoppingRuntimeContext(
            tenantId: randomString(&rng), uid: randomString(&rng), selector: randomString(&rng),
            campaignId: rng.chance(50) ? randomString(&rng) : nil, page: randomPage(&rng))
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

    // covers: D6
    @Test func everyRequestBodyIsWrittenAsJSONEncoderWritesIt() {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<500 {
            let (device, user, options) = Self.randomEnvelope(&rng)
            let page = Self.randomPage(&rng)
            let events = (0..<rng.below(3)).map { _ in Self.randomEvent(&rng) }
            let event = GravityRequest(
                sec: Self.randomString(&rng), device: device, user: user, ctx: page, options: options,
                type: rng.chance(50) ? Self.randomString(&rng) : nil, data: rng.chance(80) ? events : nil)
            #expect(Self.written(event) == Self.encoded(event))
            let selectors = [
                GravitySelectorRequest(
                    selector: Self.randomString(&rng),
                    options: GravityContentSettings(
                        skusOnly: rng.chance(50),
                        fields: rng.chance(50) ? (0..<rng.below(3)).map { _ in Self.randomString(&rng) } : nil))
            ]
            let choose = GravityRequest(
                sec: Self.randomString(&rng), device: device, user: user, ctx: page, options: options, type: nil,
                data: selectors)
            #expect(Self.written(choose) == Self.encoded(choose))
            let message = ShoppingMessageRequest(
                threadId: Self.randomString(&rng), messageId: Self.randomString(&rng),
                resourceId: Self.randomString(&rng), text: Self.randomString(&rng, maxLength: 40),
                runtimeContext: Self.runtimeContext(&rng))
            #expect(Self.written(message) == Self.encoded(message))
            let feedback = ShoppingFeedbackRequest(
                threadId: Self.randomString(&rng), messageId: Self.randomString(&rng),
                resourceId: Self.randomString(&rng), rating: Self.randomString(&rng),
                runtimeContext: Self.runtimeContext(&rng))
            #expect(Self.written(feedback) == Self.encoded(feedback))
        }
    }
}
