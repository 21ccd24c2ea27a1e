import Foundation

/// Records by the order they were accepted in, the oldest on top: the delivery machine takes
/// the oldest record that may go next without walking its queue, however long the queue is.
///
/// Removal is lazy: a record that leaves the state a heap stands for stays in it until it
/// reaches the top, where the machine sees that it no longer belongs and discards it.
struct SequenceHeap: Sendable {
    struct Item: Sendable {
        var sequence: UInt64
        var id: UUID
    }

    private var items: [Item] = []

    var isEmpty: Bool { items.isEmpty }

    /// The oldest record.
    var top: Item? { items.first }

    mutating func insert(_ id: UUID, sequence: UInt64) {
        items.append(Item(sequence: sequence, id: id))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].sequence < items[parent].sequence else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func removeTop() -> Item? {
        guard let first = items.first else { return nil }
        let last = items.removeLast()
        guard !items.isEmpty else { return first }
        items[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < items.count else { break }
            let right = left + 1
            let smaller = right < items.count && items[right].sequence < items[left].sequence ? right : left
            guard items[smaller].sequence < items[parent].sequence else { break }
            items.swapAt(smaller, parent)
            parent = smaller
        }
        return first
    }

    mutating func removeAll() { items.removeAll() }
}
