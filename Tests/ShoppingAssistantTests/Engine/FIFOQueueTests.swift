import Testing

@testable import ShoppingAssistant

/// The tracker's queues: first in, first out, whatever mix of appends and takes, across the
/// points where taken elements are dropped from the storage.
@Suite struct FIFOQueueTests {
    @Test func elementsComeOutInTheOrderTheyWentInAcrossCompactions() {
        var queue = FIFOQueue<Int>()
        var expected: [Int] = []
        var taken: [Int] = []
        var next = 0
        var rng = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            if rng.chance(55) {
                queue.append(next)
                expected.append(next)
                next += 1
            } else if let element = queue.popFirst() {
                taken.append(element)
            }
            #expect(queue.count == expected.count - taken.count)
        }
        while let element = queue.popFirst() { taken.append(element) }
        #expect(taken == expected)
        #expect(queue.isEmpty && queue.popFirst() == nil)
    }

    @Test func aBurstIsTakenWhole() {
        var queue = FIFOQueue<String>()
        for index in 0..<10_000 { queue.append("u\(index)") }
        var taken = 0
        while let element = queue.popFirst() {
            #expect(element == "u\(taken)")
            taken += 1
        }
        #expect(taken == 10_000)
        queue.append("again")
        #expect(queue.popFirst() == "again")
    }
}
