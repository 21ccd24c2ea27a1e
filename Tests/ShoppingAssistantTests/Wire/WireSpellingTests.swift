import Foundation
import Testing

@testable import ShoppingAssistant

/// Names and IDs the engine spells out itself instead of asking Foundation, so they must read
/// exactly as the Foundation forms they replace.
@Suite struct WireSpellingTests {
    // covers: AN1
    @Test(arguments: LifecycleEvent.allCases)
    func aLifecycleEventIsNamedByItsTypeInWords(_ event: LifecycleEvent) {
        let words = event.rawValue.split(separator: "_", omittingEmptySubsequences: false).joined(separator: " ")
        #expect(event.displayName == words)
        #expect(event.displayName.hasPrefix("chat "))
    }

    @Test func aUUIDIsWrittenAsFoundationWritesItLowercased() {
        var generator = SystemRandomNumberGenerator()
        var uuids = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
            UUID(
                uuid: (0x09, 0x0A, 0x9F, 0xA0, 0x10, 0x01, 0xF0, 0x0F, 0x55, 0xAA, 0x5A, 0xA5, 0x01, 0x23, 0xCD, 0xEF)),
        ]
        for _ in 0..<1_000 {
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
            uuids.append(
                UUID(
                    uuid: (
                        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                        bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                    )))
        }
        for uuid in uuids {
            #expect(uuid.lowercasedString == uuid.uuidString.lowercased())
        }
    }

    /// Amounts travel digit for digit: significands of up to 64 bits at exponents across a
    /// decimal's whole range, either sign, and what lies past 64 bits, NaN and zero; a price
    /// takes the integer conversion, not Foundation's spelling.
    // covers: B10
    @Test func anAmountIsSpelledAsFoundationSpellsTheDecimal() {
        var random = SplitMix64(seed: 1_990)
        let pastSixtyFourBits = Decimal(UInt64.max) + 1
        var amounts: [Decimal] = [
            0, Decimal.nan, 1990, Decimal(string: "19.99") ?? 0, Decimal(string: "-0.05") ?? 0,
            Decimal(string: "1590.10") ?? 0, Decimal(string: "123456789012345678901234567890.5") ?? 0,
            Decimal(UInt64.max), pastSixtyFourBits, pastSixtyFourBits + 1,
            Decimal(sign: .plus, exponent: -128, significand: 7), Decimal(sign: .minus, exponent: 127, significand: 3),
        ]
        for _ in 0..<5_000 {
            let bits = Int(random.next() % 64) + 1
            let significand = random.next() >> UInt64(64 - bits)
            let exponent = Int(random.next() % 256) - 128
            let sign: FloatingPointSign = random.next() % 2 == 0 ? .plus : .minus
            amounts.append(Decimal(sign: sign, exponent: exponent, significand: Decimal(significand)))
        }
        for amount in amounts {
            #expect(amount.plainSpelling == amount.description, "\(amount.description)")
        }
        #expect(Decimal(string: "19.99")?.integerSpelling == "19.99")
        #expect(Decimal(UInt64.max).integerSpelling == "18446744073709551615")
        #expect(pastSixtyFourBits.integerSpelling == nil)
    }
}
