import Foundation

/// Record ids by a number, the smallest on top: the delivery machine takes the oldest record
/// that may go next (by accepted order) and the outbox the send whose deadline comes first,
/// without walking a list, however long it is.
///
/// Removal is lazy: an id that no longer belongs stays until it reaches the top, where its
/// owner sees so and discards it. The storage a burst grew is given back as the heap drains.
struct IDHeap: Sendable {
    struct Item: Sendable {
        var key: UInt64
        var id: UUID
    }

    private var items: [Item] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    /// The items its storage has room for, for tests that a drained heap gave it back.
    var capacity: Int { items.capacity }

    /// The smallest key's item.
    var top: Item? { items.first }

    mutating func insert(_ id: UUID, key: UInt64) {
        items.append(Item(key: key, id: id))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].key < items[parent].key else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func removeTop() -> Item? {
        guard let first = items.first else { return nil }
        let last = items.removeLast()
        items.releaseSpareCapacity()
        guard !items.isEmpty else { return first }
        items[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < items.count else { break }
            let right = left + 1
            let smaller = right < items.count && items[right].key < items[left].key ? right : left
            guard items[smaller].key < items[parent].key else { break }
            items.swapAt(smaller, parent)
            parent = smaller
        }
        return first
    }

    mutating func removeAll() { items.removeAll() }

    /// Lazy removal leaves the ids that no longer belong behind; once those are most of the
    /// heap (`live` ids still belong), it is built again from `belonging()`, so it stays as
    /// long as what it orders, however many ids went through it.
    mutating func rebuildIfMostlyStale(live: Int, _ belonging: () -> [Item]) {
        guard items.count > 64, items.count > 2 * live else { return }
        var heap = IDHeap()
        for item in belonging() { heap.insert(item.id, key: item.key) }
        self = heap
    }
}
