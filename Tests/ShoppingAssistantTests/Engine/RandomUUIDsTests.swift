import Foundation
import Testing

@testable import ShoppingAssistant

/// The engine's default message and thread IDs: version-4 UUIDs, drawn from a pool of system
/// randomness that is refilled as it runs out.
@Suite struct RandomUUIDsTests {
    @Test func idsAreVersionFourAndNeverRepeatAcrossRefillsAndThreads() async {
        // 8 tasks × 2,000 draw 16,000 UUIDs: the 4 KiB pool (256 UUIDs) refills over 60 times.
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
    @Test func thePoolIsFilledFromTheSystemsRandomness() {
        var first = [UInt8](repeating: 0, count: 4096)
        var second = first
        #expect(RandomUUIDs.fill(&first))
        #expect(RandomUUIDs.fill(&second))
        // 4 KiB of randomness: never all zero, never twice the same.
        #expect(first.contains { $0 != 0 })
        #expect(first != second)
    }
}
