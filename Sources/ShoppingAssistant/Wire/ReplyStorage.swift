/// Where one string of a reply lies in its `ReplyStorage`: a byte offset and a length, or
/// nothing (`absent`). Eight bytes instead of a `String` and its own heap block.
struct StoredText: Hashable, Sendable {
    let start: UInt32
    let count: UInt32

    static let absent = StoredText(start: .max, count: .max)

    var isAbsent: Bool { start == .max }
    var end: Int { Int(start) + Int(count) }
}

/// Consecutive entries of a storage's list of texts: a reply's suggests, its impression URLs,
/// a product's click or visible-impression URLs.
struct StoredList: Hashable, Sendable {
    let start: UInt32
    let count: UInt32

    static let empty = StoredList(start: 0, count: 0)
}

/// The text of one decoded reply, in one block: every string the reply model keeps (UTF-8,
/// unescaped), the raw JSON of product extras and reply buttons, and the lists of URLs and
/// suggests. A stored reply is a handful of allocations however many strings it has, and
/// strings become `String`s only when read.
///
/// Immutable once built, except for a cache of the JSON objects decoded on first access
/// (product extras; button payloads are decoded on each read), which one lock for all storages guards: access is rare and
/// short, and a lock per reply would cost two allocations per reply.
final class ReplyStorage: @unchecked Sendable {
    // @unchecked: `bytes` and `lists` never change; `objects` is only touched under `objectsLock`.
    let bytes: [UInt8]
    let lists: [StoredText]
    private var objects: [UInt32: [String: JSONValue]] = [:]
    /// Guards every storage's `objects`; its value counts the objects decoded by all of them.
    /// (Not `Locked<Void>`: a zero-sized value shares its address with the lock's pointer, and
    /// the thread sanitizer then takes reading the pointer for a race with the value.)
    private static let objectsLock = Locked(0)

    init(bytes: [UInt8], lists: [StoredText]) {
        self.bytes = bytes
        self.lists = lists
    }

    /// The text at `stored`, or `nil` if absent.
    func text(_ stored: StoredText) -> String? {
        guard !stored.isAbsent else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[Int(stored.start)..<stored.end]), as: UTF8.self)
        }
    }

    /// The texts of a list, in order.
    func texts(_ list: StoredList) -> [String] {
        entries(list).map { text($0) ?? "" }
    }

    /// The texts of a list as tracking URLs, read only when requested (AN5, AN7).
    func trackingURLs(_ list: StoredList) -> TrackingURLs {
        TrackingURLs(storage: self, entries: entries(list))
    }

    /// A list's tracking URLs, in order, as a view of the storage: an impression queues its
    /// URL without an array made for it.
    struct TrackingURLs: RandomAccessCollection, Sendable {
        let storage: ReplyStorage
        let entries: ArraySlice<StoredText>

        var startIndex: Int { 0 }
        var endIndex: Int { entries.count }
        subscript(position: Int) -> TrackingURL {
            TrackingURL(storage: storage, text: entries[entries.startIndex + position])
        }
    }

    private func entries(_ list: StoredList) -> ArraySlice<StoredText> {
        lists[Int(list.start)..<(Int(list.start) + Int(list.count))]
    }

    /// Runs `body` over the bytes of a present text.
    func withBytes<Result>(_ stored: StoredText, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        bytes.withUnsafeBufferPointer { buffer in
            body(UnsafeBufferPointer(rebasing: buffer[Int(stored.start)..<stored.end]))
        }
    }

    /// Do two texts, of this storage and `other`, hold the same bytes? Absent equals absent.
    func sameText(_ stored: StoredText, _ other: StoredText, in storage: ReplyStorage) -> Bool {
        guard !stored.isAbsent, !other.isAbsent else { return stored.isAbsent == other.isAbsent }
        guard stored.count == other.count else { return false }
        return withBytes(stored) { mine in storage.withBytes(other) { theirs in mine.elementsEqual(theirs) } }
    }

    /// The JSON object whose text is at `stored`, decoded now and not kept: for small objects
    /// read once per use (a button's payload, when the button is routed or shown), whose
    /// decoded form would otherwise stay with every stored reply of a long dialog.
    func uncachedObject(_ stored: StoredText) -> [String: JSONValue] {
        guard !stored.isAbsent else { return [:] }
        return withBytes(stored) { buffer in
            (try? JSONValue(parsing: UnsafeRawBufferPointer(buffer)))?.objectValue ?? [:]
        }
    }

    /// How many objects have been decoded so far (laziness is observable in tests).
    var decodedObjectCount: Int { Self.objectsLock.withLock { _ in objects.count } }

    /// The JSON object whose text is at `stored`, decoded on first access and kept.
    ///
    /// The text was checked by the reader when the reply was decoded, so it reads again as
    /// the same object; an empty object stands in for an absent text.
    func object(_ stored: StoredText) -> [String: JSONValue] {
        guard !stored.isAbsent else { return [:] }
        if let cached = Self.objectsLock.withLock({ _ in objects[stored.start] }) { return cached }
        let decoded = uncachedObject(stored)
        return Self.objectsLock.withLock { decodedTotal in
            if let cached = objects[stored.start] { return cached }
            decodedTotal += 1
            objects[stored.start] = decoded
            return decoded
        }
    }
}

/// Builds the block of a `ReplyStorage` while a reply is read; rolls back what a dropped
/// item or button had added.
struct ReplyStorageBuilder {
    private(set) var bytes: [UInt8] = []
    private(set) var lists: [StoredText] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// A position to roll back to.
    struct Mark {
        fileprivate let bytes: Int
        fileprivate let lists: Int
    }

    var mark: Mark { Mark(bytes: bytes.count, lists: lists.count) }

    mutating func rollBack(to mark: Mark) {
        bytes.removeSubrange(mark.bytes...)
        lists.removeSubrange(mark.lists...)
    }

    /// Appends a checked string of the input, unescaped.
    mutating func append(_ raw: JSONReader.RawString, from reader: JSONReader) -> StoredText {
        let start = bytes.count
        reader.append(raw, to: &bytes)
        return StoredText(start: UInt32(start), count: UInt32(bytes.count - start))
    }

    /// Appends bytes as they are.
    mutating func append(_ text: some Sequence<UInt8>) -> StoredText {
        let start = bytes.count
        bytes.append(contentsOf: text)
        return StoredText(start: UInt32(start), count: UInt32(bytes.count - start))
    }

    /// Appends the raw members of an object as one object: `{member,member}`.
    mutating func appendObject(members: [Range<Int>], from reader: JSONReader) -> StoredText {
        let start = bytes.count
        bytes.append(UInt8(ascii: "{"))
        for (index, range) in members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: reader.bytes(from: range.lowerBound, to: range.upperBound))
        }
        bytes.append(UInt8(ascii: "}"))
        return StoredText(start: UInt32(start), count: UInt32(bytes.count - start))
    }

    /// Drops the bytes of `text` if it is the last thing appended (a URL that failed its check).
    mutating func drop(_ text: StoredText) {
        guard !text.isAbsent, text.end == bytes.count else { return }
        bytes.removeLast(Int(text.count))
    }

    /// Runs `body` over the bytes of a present text appended so far.
    func withBytes<Result>(_ text: StoredText, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        bytes.withUnsafeBufferPointer { buffer in
            body(UnsafeBufferPointer(rebasing: buffer[Int(text.start)..<text.end]))
        }
    }

    /// Adds texts to the list table and returns their run.
    mutating func appendList(_ texts: some Collection<StoredText>) -> StoredList {
        let start = lists.count
        lists.append(contentsOf: texts)
        return StoredList(start: UInt32(start), count: UInt32(texts.count))
    }

    /// The finished storage, its arrays copied at their exact size so that no spare capacity
    /// stays alive with the reply.
    func build() -> ReplyStorage {
        ReplyStorage(bytes: Self.exactCopy(bytes), lists: Self.exactCopy(lists))
    }

    private static func exactCopy<Element>(_ array: [Element]) -> [Element] {
        guard array.capacity > array.count else { return array }
        // An empty one at capacity 0 would be the runtime's shared empty storage, whose count
        // the initializer writes while other threads read it.
        guard !array.isEmpty else { return [] }
        return [Element](unsafeUninitializedCapacity: array.count) { buffer, initialized in
            _ = buffer.initialize(from: array)
            initialized = array.count
        }
    }
}
