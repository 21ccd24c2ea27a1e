/// An append-mostly sequence stored in fixed-size chunks that copies share.
///
/// A chat snapshot holds the dialog as it was when it was published, and the presenter may
/// keep it while the dialog grows. With one flat array every change after that would copy
/// the whole dialog; here a change copies one chunk and the (short) list of chunk references,
/// so appending to or updating a 50,000-message dialog costs the same as a 100-message one
/// within a small constant.
struct ChunkedVector<Element: Sendable>: Sendable {
    /// Elements per chunk: large enough that the chunk list stays short, small enough that
    /// copying one chunk is cheap.
    static var chunkSize: Int { 64 }

    private final class Chunk: @unchecked Sendable {
        // @unchecked: a chunk is mutated only while uniquely referenced (see `mutateChunk`),
        // so no two threads ever see it change.
        var elements: [Element]

        init(_ elements: [Element]) {
            self.elements = elements
            self.elements.reserveCapacity(ChunkedVector.chunkSize)
        }
    }

    private var chunks: [Chunk] = []
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "index \(index) out of 0..<\(count)")
            return chunks[index / Self.chunkSize].elements[index % Self.chunkSize]
        }
        set {
            precondition(index >= 0 && index < count, "index \(index) out of 0..<\(count)")
            mutateChunk(index / Self.chunkSize) { $0[index % Self.chunkSize] = newValue }
        }
    }

    var last: Element? { isEmpty ? nil : self[count - 1] }

    mutating func append(_ element: Element) {
        if count % Self.chunkSize == 0 {
            chunks.append(Chunk([element]))
        } else {
            mutateChunk(chunks.count - 1) { $0.append(element) }
        }
        count += 1
    }

    /// Inserts at `index`, moving the later elements: linear in what follows `index`, so it
    /// is meant for the rare insertion near the end (a retried message's late reply).
    mutating func insert(_ element: Element, at index: Int) {
        precondition(index >= 0 && index <= count, "insertion index \(index) out of 0...\(count)")
        guard index < count else { return append(element) }
        var carried = element
        var position = index
        // Shift one element into each following chunk; only chunks from `index` on change.
        while position < count {
            let chunk = position / Self.chunkSize
            let offset = position % Self.chunkSize
            var outgoing: Element?
            mutateChunk(chunk) { elements in
                elements.insert(carried, at: offset)
                if elements.count > Self.chunkSize { outgoing = elements.removeLast() }
            }
            guard let next = outgoing else {
                count += 1
                return
            }
            carried = next
            position = (chunk + 1) * Self.chunkSize
        }
        chunks.append(Chunk([carried]))
        count += 1
    }

    mutating func removeAll() {
        chunks = []
        count = 0
    }

    /// Mutates one chunk, copying it first if a snapshot shares it.
    private mutating func mutateChunk(_ index: Int, _ body: (inout [Element]) -> Void) {
        if !isKnownUniquelyReferenced(&chunks[index]) {
            chunks[index] = Chunk(chunks[index].elements)
        }
        body(&chunks[index].elements)
    }
}

extension ChunkedVector: RandomAccessCollection {
    var startIndex: Int { 0 }
    var endIndex: Int { count }
}
