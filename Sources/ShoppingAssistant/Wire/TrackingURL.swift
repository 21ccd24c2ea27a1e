/// A tracking URL (AN5, AN7) as the reply holds it. Its text becomes a `String` only where it
/// is requested, on the tracking queue: an impression queued from a host call allocates
/// nothing that the tracking queue then has to free. Memory freed on another thread than the
/// one that allocated it costs both threads the allocator's slow path, many times a second
/// when a carousel scrolls. A queued URL keeps its reply's storage
/// alive until it was requested.
struct TrackingURL: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// Where the text is: in a reply's storage, or given as a string. One payload or the
    /// other, so that a queued job stays small.
    private enum Text: Sendable {
        case stored(ReplyStorage, StoredText)
        case given(String)
    }

    private let text: Text

    /// A URL from elsewhere than a stored reply (Gravity's content, a test).
    init(_ string: String) {
        text = .given(string)
    }

    init(stringLiteral value: String) {
        self.init(value)
    }

    /// The URL at `text` of a reply's storage.
    init(storage: ReplyStorage, text: StoredText) {
        self.text = .stored(storage, text)
    }

    /// The URL's text, made now for a stored one.
    var string: String {
        switch text {
        case .stored(let storage, let stored): return storage.text(stored) ?? ""
        case .given(let string): return string
        }
    }

    var description: String { string }

    /// Equal bytes are equal URLs, however each is held: a request sends the bytes, so two
    /// spellings Swift's `String` would call equal (a precomposed "é" and "e" with a combining
    /// accent) are two URLs (AN5).
    static func == (lhs: TrackingURL, rhs: TrackingURL) -> Bool {
        lhs.withBytes { left in rhs.withBytes { right in left.elementsEqual(right) } }
    }

    func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Runs `body` over the URL's UTF-8 bytes, without making a `String` of a stored one.
    private func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        switch text {
        case .stored(let storage, let stored):
            guard !stored.isAbsent else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
            return storage.withBytes(stored, body)
        case .given(let string):
            var string = string
            return string.withUTF8(body)
        }
    }
}
