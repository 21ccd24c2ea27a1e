import Testing

@testable import ShoppingAssistant

/// Collections that drained after a burst give their storage back, keep what is left, and keep
/// their storage while they are still well filled, so that a removal never pays for a copy
/// that the removals before it did not earn.
@Suite struct SpareCapacityTests {
    @Test func aDrainedDictionaryGivesItsStorageBackAndKeepsWhatIsLeft() {
        var dictionary: [Int: String] = [:]
        for key in 0..<10_000 { dictionary[key] = "v\(key)" }
        for key in 0..<9_990 {
            dictionary[key] = nil
            dictionary.releaseSpareCapacity()
        }
        #expect(dictionary.capacity < 64)
        #expect(dictionary == Dictionary(uniqueKeysWithValues: (9_990..<10_000).map { ($0, "v\($0)") }))
    }

    @Test func aDrainedSetGivesItsStorageBackAndKeepsWhatIsLeft() {
        var set = Set(0..<10_000)
        for element in 0..<9_990 {
            set.remove(element)
            set.releaseSpareCapacity()
        }
        #expect(set.capacity < 64)
        #expect(set == Set(9_990..<10_000))
    }

    @Test func aDrainedArrayGivesItsStorageBackAndKeepsItsOrder() {
        var array = Array(0..<10_000)
        while array.count > 10 {
            array.removeLast()
            array.releaseSpareCapacity()
        }
        #expect(array.capacity < 64)
        #expect(array == Array(0..<10))
    }

    @Test func storageStillMostlyInUseIsKept() {
        var dictionary = Dictionary(uniqueKeysWithValues: (0..<1_000).map { ($0, $0) })
        let capacity = dictionary.capacity
        for key in 0..<(1_000 - capacity / 4) { dictionary[key] = nil }
        dictionary.releaseSpareCapacity()
        #expect(dictionary.capacity == capacity, "a quarter full")
        dictionary[999] = nil
        dictionary.releaseSpareCapacity()
        #expect(dictionary.capacity < capacity, "under a quarter full")

        var small = Array(0..<60)
        small.removeAll(keepingCapacity: true)
        small.releaseSpareCapacity()
        #expect(small.capacity >= 60, "too small to be worth a copy")
    }

    @Test func aCopyFollowsAtLeastAsManyRemovalsAsItCopies() {
        var dictionary: [Int: Int] = [:]
        var copied = 0
        var removed = 0
        for round in 0..<20 {
            for key in 0..<4_000 { dictionary[round * 10_000 + key] = key }
            for key in 0..<4_000 {
                let before = dictionary.capacity
                dictionary[round * 10_000 + key] = nil
                removed += 1
                dictionary.releaseSpareCapacity()
                if dictionary.capacity != before { copied += dictionary.count }
            }
        }
        #expect(copied <= removed)
    }
}
