/// A tracking URL (AN5, AN7) as the reply holds it. Its text becomes a `String` only where it
/// is requested, on the tracking queue: an impression queued from a host call allocates
/// nothing that the tracking queue then has to free. Memory freed on another thread than the
/// one that allocated it costs both threads the allocator's slow path, many times a second
/// when a carousel scrolls (figure 3 of the bench).
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

    /// Equal texts are equal URLs, however each is held; two stored ones compare their bytes.
    static func == (lhs: TrackingURL, rhs: TrackingURL) -> Bool {
        if case .stored(let left, let leftText) = lhs.text, case .stored(let right, let rightText) = rhs.text {
            return left.sameText(leftText, rightText, in: right)
        }
        return lhs.string == rhs.string
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(string)
    }
}
