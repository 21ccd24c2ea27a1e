/// A first-in, first-out queue whose `popFirst` is O(1) amortised: a burst of 10,000 tracking
/// URLs (a dialog's impressions on opening the chat) is taken in linear time, where an array's
/// `removeFirst` moves the whole rest each time.
struct FIFOQueue<Element: Sendable>: Sendable {
    /// The largest buffer kept once emptied: what a burst made larger is let go, so a queue
    /// does not stay as large as its largest burst for the rest of its life. The tracker's
    /// inbox keeps its spare buffer by the same bound.
    static var keptCapacity: Int { 256 }

    private var storage: [Element] = []
    /// Where the first element not yet taken is.
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.count <= Self.keptCapacity)
            head = 0
        } else if head >= 256, head * 2 >= storage.count {
            // Taken elements are dropped once they are half the storage: each moves once.
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func removeAll() {
        storage = []
        head = 0
    }
}
