/// Giving back the room a collection grew to in a burst once the burst is over.
///
/// Swift's arrays, sets and dictionaries never shrink as elements are removed: a queue that
/// once held a burst of records keeps the storage for all of them after the last one is
/// delivered, for as long as the engine lives. Collections that grow and drain in bursts call
/// `releaseSpareCapacity()` after removing, which copies what is left into storage of twice
/// its size once that is under a quarter of the storage. A copy of `n` elements then follows
/// at least `n` removals, so a removal still costs the same however large the burst was.
enum SpareCapacity {
    /// Storage this small is kept whatever it holds: copying it would save nothing.
    static let floor = 64

    /// Whether storage for `capacity` elements holding `count` is mostly empty.
    static func isSpare(count: Int, capacity: Int) -> Bool {
        capacity > floor && count < capacity / 4
    }
}

extension Dictionary {
    /// Copies the elements into smaller storage once they fill under a quarter of it.
    mutating func releaseSpareCapacity() {
        guard SpareCapacity.isSpare(count: count, capacity: capacity) else { return }
        guard !isEmpty else {
            self = [:]
            return
        }
        var smaller = Self(minimumCapacity: 2 * count)
        for (key, value) in self { smaller[key] = value }
        self = smaller
    }
}

extension Set {
    /// Copies the elements into smaller storage once they fill under a quarter of it.
    mutating func releaseSpareCapacity() {
        guard SpareCapacity.isSpare(count: count, capacity: capacity) else { return }
        guard !isEmpty else {
            self = []
            return
        }
        var smaller = Self(minimumCapacity: 2 * count)
        for element in self { smaller.insert(element) }
        self = smaller
    }
}

extension Array {
    /// Copies the elements, in order, into smaller storage once they fill under a quarter of it.
    mutating func releaseSpareCapacity() {
        guard SpareCapacity.isSpare(count: count, capacity: capacity) else { return }
        guard !isEmpty else {
            self = []
            return
        }
        var smaller: [Element] = []
        smaller.reserveCapacity(2 * count)
        smaller.append(contentsOf: self)
        self = smaller
    }
}
