import Testing

@testable import ShoppingAssistant

@Suite struct ChunkedVectorTests {
    private static var size: Int { ChunkedVector<Int>.chunkSize }

    private static func filled(_ count: Int) -> ChunkedVector<Int> {
        var vector = ChunkedVector<Int>()
        for value in 0..<count { vector.append(value) }
        return vector
    }

    @Test func appendsAcrossChunksKeepOrderAndCount() {
        let count = Self.size * 3 + 5
        let vector = Self.filled(count)
        #expect(vector.count == count)
        #expect(Array(vector) == Array(0..<count))
        #expect(vector.last == count - 1)
        #expect(ChunkedVector<Int>().isEmpty)
        #expect(ChunkedVector<Int>().last == nil)
    }

    @Test func insertingInTheMiddleShiftsTheLaterElementsAcrossChunks() {
        for index in [0, 1, Self.size - 1, Self.size, Self.size * 2 + 3, Self.size * 3] {
            var vector = Self.filled(Self.size * 3)
            var expected = Array(0..<(Self.size * 3))
            vector.insert(-1, at: index)
            expected.insert(-1, at: index)
            #expect(Array(vector) == expected, "inserted at \(index)")
            #expect(vector.count == expected.count)
        }
    }

    @Test func aFullLastChunkGrowsANewOneOnInsert() {
        var vector = Self.filled(Self.size)
        vector.insert(-1, at: 0)
        #expect(Array(vector) == [-1] + Array(0..<Self.size))
        vector.append(99)
        #expect(vector.last == 99)
    }

    @Test func aCopyKeepsItsValuesWhenTheOriginalChanges() {
        var vector = Self.filled(Self.size * 2)
        let snapshot = vector
        vector[3] = -3
        vector[Self.size + 1] = -4
        vector.append(1000)
        vector.insert(-5, at: 0)
        #expect(Array(snapshot) == Array(0..<(Self.size * 2)))
        #expect(vector[4] == -3)
        #expect(vector.count == Self.size * 2 + 2)
    }

    @Test func removeAllEmptiesIt() {
        var vector = Self.filled(10)
        vector.removeAll()
        #expect(vector.isEmpty)
        vector.append(7)
        #expect(Array(vector) == [7])
    }
}
