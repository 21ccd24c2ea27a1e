import Testing

@testable import ShoppingAssistant

@Suite struct RingBufferTests {
    @Test func belowCapacityItKeepsEverythingOldestFirst() {
        var ring = RingBuffer<Int>(capacity: 4)
        for value in 1...3 { ring.append(value) }
        #expect(ring.count == 3)
        #expect(Array(ring) == [1, 2, 3])
    }

    @Test func whenFullTheOldestIsDropped() {
        var ring = RingBuffer<Int>(capacity: 3)
        for value in 1...7 { ring.append(value) }
        #expect(ring.count == 3)
        #expect(Array(ring) == [5, 6, 7])
        ring.append(8)
        #expect(Array(ring) == [6, 7, 8])
    }

    @Test func aCapacityBelowOneKeepsOneElement() {
        var ring = RingBuffer<String>(capacity: 0)
        #expect(ring.capacity == 1)
        ring.append("a")
        ring.append("b")
        #expect(Array(ring) == ["b"])
    }

    @Test func anIteratorTakenEarlierIsNotChangedByLaterAppends() {
        var ring = RingBuffer<Int>(capacity: 2)
        ring.append(1)
        ring.append(2)
        let iterator = ring.makeIterator()
        ring.append(3)
        #expect(Array(IteratorSequence(iterator)) == [1, 2])
        #expect(Array(ring) == [2, 3])
    }

    @Test func aLargeCapacityHoldsALongLogBounded() {
        var ring = RingBuffer<Int>(capacity: 10_000)
        for value in 0..<25_000 { ring.append(value) }
        #expect(ring.count == 10_000)
        #expect(ring.first { _ in true } == 15_000)
        #expect(Array(ring).last == 24_999)
    }
}
