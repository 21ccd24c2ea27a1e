/// A JSON object that stays text in its reply's storage until someone reads it: product
/// extras (PR1) and reply button payloads (AC2).
///
/// Most hosts never look at most extras, and building dictionaries of `JSONValue`s for every
/// product of every reply was a large part of decoding and of a stored reply's memory. The
/// text was checked when the reply was read and is decoded by the same reader, so the value
/// is exactly what decoding it at once would have given.
struct LazyJSONObject: Sendable, Hashable, CustomStringConvertible {
    private enum Source: Sendable {
        case value([String: JSONValue])
        case stored(ReplyStorage, StoredText)
    }

    private let source: Source

    /// An object already decoded, e.g. one a host built.
    init(_ value: [String: JSONValue]) {
        source = .value(value)
    }

    /// The object whose text lies at `text` in `storage` (absent: an empty object).
    init(storage: ReplyStorage, text: StoredText) {
        source = .stored(storage, text)
    }

    var value: [String: JSONValue] {
        switch source {
        case .value(let value): return value
        case .stored(let storage, let text): return storage.object(text)
        }
    }

    static func == (lhs: LazyJSONObject, rhs: LazyJSONObject) -> Bool {
        if case .stored(let left, let leftText) = lhs.source, case .stored(let right, let rightText) = rhs.source,
            (left === right && leftText == rightText) || left.sameText(leftText, rightText, in: right)
        {
            return true  // the same text reads as the same object
        }
        return lhs.value == rhs.value
    }

    /// Contributes nothing, so that hashing a product never decodes its extras; equal values
    /// still hash equally.
    func hash(into hasher: inout Hasher) {}

    var description: String { value.description }
}
