/// The latest `capacity` elements of a sequence that grows forever: a bounded log.
struct RingBuffer<Element: Sendable>: Sendable, Sequence {
    let capacity: Int
    private var storage: [Element] = []
    /// Where the oldest element is, once the buffer is full.
    private var head = 0

    /// Nothing is reserved: the storage grows with the log, so an idle engine does not pay
    /// for a full log (1,000 records reserved up front were 80 KiB per engine).
    init(capacity: Int) {
        self.capacity = Swift.max(1, capacity)
    }

    var count: Int { storage.count }

    /// Adds `element`, dropping the oldest one when full.
    mutating func append(_ element: Element) {
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[head] = element
            head = (head + 1) % capacity
        }
    }

    /// Oldest first.
    func makeIterator() -> AnyIterator<Element> {
        var index = 0
        let storage = self.storage
        let head = self.head
        return AnyIterator {
            guard index < storage.count else { return nil }
            defer { index += 1 }
            return storage[(head + index) % storage.count]
        }
    }
}
