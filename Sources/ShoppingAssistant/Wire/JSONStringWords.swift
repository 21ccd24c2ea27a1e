/// JSON string bytes looked at eight at a time, for the reader and the writer: most strings
/// have nothing to escape, and a word-wide test finds the first byte that needs a look.
///
/// Words are read little-endian on any machine, so the first byte in memory is the word's
/// lowest. The tests are the classic has-less and has-zero ones: a borrow can also mark a
/// byte above a marked one, never one below, so the lowest mark is always that of the lowest
/// such byte.
enum JSONStringWords {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The eight bytes at `offset`, the first in memory lowest.
    @inline(__always)
    static func word(_ base: UnsafeRawPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The high bit of each byte of `word` that must be escaped in JSON: below 0x20, `"` or
    /// `\`; 0 when none is.
    @inline(__always)
    static func toEscape(_ word: UInt64) -> UInt64 {
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let control = (word &- ones &* 0x20) & ~word
        return (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highs
    }

    /// The same, and every byte above 0x7F (a multi-byte character a reader must check).
    @inline(__always)
    static func toEscapeOrMultibyte(_ word: UInt64) -> UInt64 {
        toEscape(word) | (word & highs)
    }

    /// How many bytes lie below the lowest one marked in `marks` (not 0).
    @inline(__always)
    static func bytesBefore(_ marks: UInt64) -> Int {
        marks.trailingZeroBitCount / 8
    }
}
