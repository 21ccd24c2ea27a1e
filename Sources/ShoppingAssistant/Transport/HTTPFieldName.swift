import Foundation

/// HTTP field names compared as HTTP compares them: without regard to case (RFC 9110, 5.1).
///
/// Names are tokens, so ASCII, and are compared byte by byte with ASCII letters folded: no
/// trip through `NSString` for every header a request or an answer is searched for. A name
/// with any other character in it (never a valid field name) is left to Foundation's
/// case-insensitive comparison, as before.
package enum HTTPFieldName {
    /// Whether `lhs` and `rhs` name the same field.
    package static func matches(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil):
                return true
            case (let l?, let r?):
                if l >= 0x80 || r >= 0x80 { return foundationMatches(lhs, rhs) }
                if l != r, folded(l) != folded(r) { return false }
            // One is longer and all before was ASCII: only a non-ASCII character could still
            // fold to the same text.
            case (let byte?, nil):
                return hasNonASCII(from: byte, &left) ? foundationMatches(lhs, rhs) : false
            case (nil, let byte?):
                return hasNonASCII(from: byte, &right) ? foundationMatches(lhs, rhs) : false
            }
        }
    }

    private static func foundationMatches(_ lhs: String, _ rhs: String) -> Bool {
        lhs.caseInsensitiveCompare(rhs) == .orderedSame
    }

    private static func hasNonASCII(from byte: UInt8, _ rest: inout String.UTF8View.Iterator) -> Bool {
        if byte >= 0x80 { return true }
        while let next = rest.next() {
            if next >= 0x80 { return true }
        }
        return false
    }

    /// An ASCII letter in lower case; any other byte as it is.
    private static func folded(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
