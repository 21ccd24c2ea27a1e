/// Why some bytes are not one JSON text (RFC 8259), and where the reader stopped.
///
/// Servers are outside our control, so the reason is kept precise: a diagnostic that names
/// the byte offset and the rule is what makes a bad reply traceable from a log line.
package struct JSONReadError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Reason: String, Sendable, Hashable {
        /// The text ended inside a value, or there was no value at all.
        case unexpectedEnd = "unexpected end of input"
        /// A byte that cannot start or continue anything here.
        case unexpectedByte = "unexpected byte"
        /// A `,` directly before `]` or `}`.
        case trailingComma = "trailing comma"
        /// A number that does not match RFC 8259 § 6 (leading zeros, `.5`, `1.`, `+1`, …).
        case invalidNumber = "invalid number"
        /// A number beyond the range of `Double` (it would read as infinity).
        case numberOutOfRange = "number out of range"
        /// An unescaped byte below 0x20 inside a string.
        case controlCharacter = "control character in string"
        /// A `\` not followed by one of `"\/bfnrt` or by `u` and four hex digits.
        case invalidEscape = "invalid escape"
        /// A `\u` escape of a UTF-16 surrogate that is not part of a high–low pair.
        case loneSurrogate = "lone surrogate escape"
        /// Bytes that are not well-formed UTF-8.
        case invalidUTF8 = "invalid UTF-8"
        /// Arrays and objects nested deeper than `JSONReader.maximumDepth`.
        case tooDeep = "nesting too deep"
        /// Something other than whitespace after the value.
        case trailingData = "data after the JSON value"
        /// An input too large to index with 32-bit offsets (4 GiB).
        case tooLarge = "input too large"
    }

    package let reason: Reason
    /// The byte offset in the input where the problem was found.
    package let offset: Int

    package init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    package var description: String { "\(reason.rawValue) at byte \(offset)" }
}
