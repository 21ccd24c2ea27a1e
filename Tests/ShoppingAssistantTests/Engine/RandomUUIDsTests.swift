import Foundation
import Testing

@testable import ShoppingAssistant

/// The engine's default message and thread IDs: version-4 UUIDs drawn from the system's
/// randomness.
@Suite struct RandomUUIDsTests {
    @Test func idsAreVersionFourAndNeverRepeatAcrossThreads() async {
        // 8 tasks × 2,000 draw 16,000 UUIDs at once.
        let drawn = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<2_000).map { _ in RandomUUIDs.next() } }
            }
            return await group.reduce(into: [UUID]()) { $0 += $1 }
        }
        #expect(drawn.count == 16_000)
        #expect(Set(drawn).count == drawn.count)
        for uuid in drawn {
            let text = uuid.lowercasedString
            #expect(Array(text)[14] == "4", "version 4: \(text)")
            #expect("89ab".contains(Array(text)[19]), "RFC 4122 variant: \(text)")
        }
    }
}

extension RandomUUIDsTests {
    @Test func everyBitButTheVersionAndVariantIsDrawn() {
        // Over 2,000 UUIDs each of the 122 random bits is set in some and clear in others: no
        // bit is left constant but the six the version and the variant fix.
        var ones = [UInt8](repeating: 0, count: 16)
        var zeros = [UInt8](repeating: 0, count: 16)
        for _ in 0..<2_000 {
            let uuid = RandomUUIDs.next().uuid
            withUnsafeBytes(of: uuid) { bytes in
                for index in 0..<16 {
                    ones[index] |= bytes[index]
                    zeros[index] |= ~bytes[index]
                }
            }
        }
        let fixedOnes: [Int: UInt8] = [6: 0x40, 8: 0x80]  // version 4, RFC 4122 variant
        let fixedZeros: [Int: UInt8] = [6: 0xB0, 8: 0x40]
        for index in 0..<16 {
            #expect(ones[index] == 0xFF & ~(fixedZeros[index] ?? 0), "byte \(index) has a bit never set")
            #expect(zeros[index] == 0xFF & ~(fixedOnes[index] ?? 0), "byte \(index) has a bit never clear")
        }
    }
}
