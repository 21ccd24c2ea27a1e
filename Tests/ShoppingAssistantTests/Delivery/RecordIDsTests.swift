import Foundation
import Testing

@testable import ShoppingAssistant

/// The IDs an engine gives its delivery records: a store keys records by them, so two records
/// sharing one would leave one of them in the store's place of the other.
@Suite struct RecordIDsTests {
    // covers: DL5
    @Test func anEnginesRecordIDsNeverRepeatAndAreVersionFourUUIDs() {
        var ids = RecordIDs()
        let drawn = (0..<20_000).map { _ in ids.next() }
        #expect(Set(drawn).count == drawn.count)
        for uuid in drawn {
            let text = uuid.lowercasedString
            #expect(Array(text)[14] == "4", "version 4: \(text)")
            #expect("89ab".contains(Array(text)[19]), "RFC 4122 variant: \(text)")
        }
    }

    // covers: DL5
    @Test func twoEnginesOnOneStoreDrawIDsApart() {
        // Two engines (or two processes) on one store: each draws its own random part, so
        // their counts never meet.
        var first = RecordIDs()
        var second = RecordIDs()
        let a = (0..<5_000).map { _ in first.next() }
        let b = (0..<5_000).map { _ in second.next() }
        #expect(Set(a).isDisjoint(with: b))
        let prefix = { (uuid: UUID) in withUnsafeBytes(of: uuid.uuid) { Array($0.prefix(8)) } }
        #expect(prefix(a[0]) != prefix(b[0]), "each engine's random part is its own")
    }
}
