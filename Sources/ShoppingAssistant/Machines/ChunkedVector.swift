/// An append-mostly sequence stored in fixed-size chunks that copies share.
///
/// A chat snapshot holds the dialog as it was when it was published, and the presenter may
/// keep it while the dialog grows. With one flat array every change after that would copy
/// the whole dialog; here a change copies one chunk, one page of chunk references and the
/// (very short) list of pages, so appending to or updating a 50,000-message dialog costs the same as a 100-message one
/// within a small constant.
struct ChunkedVector<Element: Sendable>: Sendable {
    /// Elements per chunk: large enough that the chunk list stays short, small enough that
    /// copying one chunk is cheap.
    static var chunkSize: Int { 64 }
    /// Chunks per page. Chunks are grouped in pages so that a copy shared with a snapshot
    /// costs a change one page and one chunk, not a reference per chunk of the whole dialog:
    /// at 100,000 elements a flat chunk list would retain 1,563 chunks on every first change
    /// after a publish, the pages retain 25.
    static var chunksPerPage: Int { 64 }
    private static var pageSpan: Int { chunkSize * chunksPerPage }

    private final class Chunk: @unchecked Sendable {
        // @unchecked: a chunk is mutated only while uniquely referenced (see `mutateChunk`),
        // so no two threads ever see it change. For the same reason no two accesses to it ever
        // overlap: the run-time exclusivity check of a class's property, on every read of a
        // turn, would check what the vector's own (static) exclusivity already guarantees.
        @exclusivity(unchecked) var elements: [Element]

        init(_ elements: [Element]) {
            self.elements = elements
            self.elements.reserveCapacity(ChunkedVector.chunkSize)
        }
    }

    private final class Page: @unchecked Sendable {
        // @unchecked and unchecked exclusivity: as for `Chunk`, mutated only while uniquely referenced.
        @exclusivity(unchecked) var chunks: [Chunk]

        init(_ chunks: [Chunk]) {
            self.chunks = chunks
            self.chunks.reserveCapacity(ChunkedVector.chunksPerPage)
        }
    }

    private var pages: [Page] = []
    private(set) var count = 0

    init() {}

    /// `count` elements made in order by `make`, each made in its chunk: a whole dialog read
    /// back from the dialog store (D18) is neither appended element by element, each append
    /// checking what it shares, nor copied from an array.
    init<Failure: Error>(count: Int, _ make: (Int) throws(Failure) -> Element) throws(Failure) {
        var chunks: [Chunk] = []
        var index = 0
        while index < count {
            let chunk = Chunk([])
            let end = Swift.min(index + Self.chunkSize, count)
            while index < end {
                chunk.elements.append(try make(index))
                index += 1
            }
            chunks.append(chunk)
            if chunks.count == Self.chunksPerPage {
                pages.append(Page(chunks))
                chunks = []
            }
        }
        if !chunks.isEmpty { pages.append(Page(chunks)) }
        self.count = count
    }

    var isEmpty: Bool { count == 0 }

    subscript(index: Int) -> Element {
        // Lends the element in place: reading one field of a turn copies that field, not the turn.
        _read {
            precondition(index >= 0 && index < count, "index \(index) out of 0..<\(count)")
            yield pages[index / Self.pageSpan].chunks[(index / Self.chunkSize) % Self.chunksPerPage]
                .elements[index % Self.chunkSize]
        }
        set {
            precondition(index >= 0 && index < count, "index \(index) out of 0..<\(count)")
            mutateChunk(index / Self.chunkSize) { $0[index % Self.chunkSize] = newValue }
        }
    }

    var last: Element? { isEmpty ? nil : self[count - 1] }

    private var chunkCount: Int { (count + Self.chunkSize - 1) / Self.chunkSize }

    mutating func append(_ element: Element) {
        if count % Self.chunkSize == 0 {
            appendChunk(Chunk([element]))
        } else {
            mutateChunk(chunkCount - 1) { $0.append(element) }
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
        appendChunk(Chunk([carried]))
        count += 1
    }

    mutating func removeAll() {
        pages = []
        count = 0
    }

    /// Adds a chunk after the last one (whose elements are all counted).
    private mutating func appendChunk(_ chunk: Chunk) {
        let chunks = chunkCount
        if chunks % Self.chunksPerPage == 0 {
            pages.append(Page([chunk]))
        } else {
            mutatePage(chunks / Self.chunksPerPage) { $0.append(chunk) }
        }
    }

    /// Mutates one page's chunk list, copying the page first if a snapshot shares it.
    private mutating func mutatePage(_ index: Int, _ body: (inout [Chunk]) -> Void) {
        if !isKnownUniquelyReferenced(&pages[index]) {
            pages[index] = Page(pages[index].chunks)
        }
        body(&pages[index].chunks)
    }

    /// Mutates one chunk, copying it (and its page) first if a snapshot shares them.
    private mutating func mutateChunk(_ index: Int, _ body: (inout [Element]) -> Void) {
        let slot = index % Self.chunksPerPage
        mutatePage(index / Self.chunksPerPage) { chunks in
            if !isKnownUniquelyReferenced(&chunks[slot]) {
                chunks[slot] = Chunk(chunks[slot].elements)
            }
            body(&chunks[slot].elements)
        }
    }
}

extension ChunkedVector {
    /// Calls `body` with each element and its index, in order, reading the chunks in place: a
    /// walk over a whole dialog (a restore, a save) that looks no element up by its index.
    func forEachElement(_ body: (Int, Element) throws -> Void) rethrows {
        var index = 0
        for page in pages {
            for chunk in page.chunks {
                try chunk.elements.withUnsafeBufferPointer { elements in
                    // By position: an element is lent to `body` where it lies, where a `for in`
                    // copied each one out (a retain and a release of every field).
                    for position in elements.indices {
                        try body(index, elements[position])
                        index += 1
                    }
                }
            }
        }
    }
}

extension ChunkedVector: RandomAccessCollection {
    var startIndex: Int { 0 }
    var endIndex: Int { count }
}
