import Testing

@testable import ShoppingAssistant

@Suite struct ChunkedVectorPagingTests {
    /// Past several pages, so chunk and page boundaries are both crossed.
    static let size = 3 * ChunkedVector<Int>.chunkSize * ChunkedVector<Int>.chunksPerPage + 17

    @Test func appendedElementsReadBackInOrderAcrossChunksAndPages() {
        var vector = ChunkedVector<Int>()
        for value in 0..<Self.size { vector.append(value) }
        #expect(vector.count == Self.size)
        #expect(Array(vector) == Array(0..<Self.size))
        #expect(vector.last == Self.size - 1)
    }

    @Test func aCopyKeepsWhatItSawWhileTheOriginalChanges() {
        var vector = ChunkedVector<Int>()
        for value in 0..<Self.size { vector.append(value) }
        let snapshot = vector
        vector[5] = -5
        vector[Self.size - 1] = -1
        vector.append(Self.size)
        #expect(snapshot.count == Self.size)
        #expect(Array(snapshot) == Array(0..<Self.size))
        #expect(vector[5] == -5)
        #expect(vector[Self.size - 1] == -1)
        #expect(vector.count == Self.size + 1)
    }

    @Test func insertionShiftsTheLaterElementsAcrossChunksAndPages() {
        let pageSpan = ChunkedVector<Int>.chunkSize * ChunkedVector<Int>.chunksPerPage
        for count in [1, 64, pageSpan, pageSpan + 1, Self.size] {
            var vector = ChunkedVector<Int>()
            var expected: [Int] = []
            for value in 0..<count {
                vector.append(value)
                expected.append(value)
            }
            let snapshot = vector
            for position in [count, count / 2, 0] {
                vector.insert(-position - 1, at: position)
                expected.insert(-position - 1, at: position)
            }
            #expect(Array(vector) == expected, "count \(count)")
            #expect(Array(snapshot) == Array(0..<count), "count \(count)")
        }
    }
}
