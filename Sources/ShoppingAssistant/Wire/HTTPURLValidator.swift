/// Decides whether server text is an http(s) URL the engine may request or hand to the host
/// (tracking URLs, AN5; `follow_url` buttons, AC3), without building a `URL` for each.
///
/// A reply carries a few URLs per product, and building a Foundation `URL` for each was a
/// visible part of decoding. This check reads the bytes once and accepts a strict subset of
/// what `URL(string:)` accepts with an `http`/`https` scheme and a non-empty host — the
/// RFC 3986 form of an absolute http(s) URL, in ASCII:
///
///     scheme "://" host [ ":" port ] *( "/" *pchar ) [ "?" *(pchar / "/" / "?") ] [ "#" *(pchar / "/" / "?") ]
///
/// - scheme: `http` or `https`, any case;
/// - host: one or more of `A–Z a–z 0–9 - . _ ~`, or an IPv6 literal in brackets (hex digits,
///   `:` and `.`, with at least one `:`);
/// - port: one to five digits, at most 65535;
/// - pchar: `A–Z a–z 0–9 - . _ ~ ! $ & ' ( ) * + , ; = : @` or `%` and two hex digits.
///
/// Stricter than `URL(string:)`, on purpose: no user info (`user:pass@host`), no empty port,
/// no percent-encoding in the host, and no character that `URL(string:)` would silently
/// percent-encode (spaces, non-ASCII text, `"<>[\]^`{|}`, control characters, a second
/// `#`): the URL requested is then exactly the text the server sent.
enum HTTPURLValidator {
    static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isValid($0) }
    }

    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        guard let afterScheme = schemeEnd(bytes) else { return false }
        index = afterScheme
        // Host.
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "[") {
            index += 1
            var sawColon = false
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "]") {
                let byte = bytes[index]
                guard isHex(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".") else { return false }
                if byte == UInt8(ascii: ":") { sawColon = true }
                index += 1
            }
            guard index < bytes.count, index > start, sawColon else { return false }
            index += 1
        } else {
            let start = index
            while index < bytes.count, isHostCharacter(bytes[index]) { index += 1 }
            guard index > start else { return false }
        }
        // Port.
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            index += 1
            var port = 0
            var digits = 0
            while index < bytes.count, isDigit(bytes[index]) {
                port = port * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                guard digits <= 5 else { return false }
                index += 1
            }
            guard digits > 0, port <= 65535 else { return false }
        }
        // Path, query, fragment.
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): break
            default: return false
            }
        }
        var inFragment = false
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "%"):
                guard bytes.count - index >= 3, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return false }
                index += 3
                continue
            case UInt8(ascii: "#"):
                guard !inFragment else { return false }
                inFragment = true
            case UInt8(ascii: "/"), UInt8(ascii: "?"):
                break
            default:
                guard isPathCharacter(byte) else { return false }
            }
            index += 1
        }
        return true
    }

    /// The offset after `http://` or `https://` (any case), if the text starts so.
    private static func schemeEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.count >= 7, bytes[0] | 0x20 == UInt8(ascii: "h"), bytes[1] | 0x20 == UInt8(ascii: "t"),
            bytes[2] | 0x20 == UInt8(ascii: "t"), bytes[3] | 0x20 == UInt8(ascii: "p")
        else { return nil }
        var index = 4
        if bytes[index] | 0x20 == UInt8(ascii: "s") { index += 1 }
        guard bytes.count - index >= 3, bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"),
            bytes[index + 2] == UInt8(ascii: "/")
        else { return nil }
        return index + 3
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    private static func isHex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20) &- UInt8(ascii: "a") < 6
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20) &- UInt8(ascii: "a") < 26
    }

    /// RFC 3986 unreserved characters: a registered name without percent-encoding.
    private static func isHostCharacter(_ byte: UInt8) -> Bool { hostCharacters.contains(byte) }

    private static let hostCharacters = ASCIISet { byte in
        isLetterOrDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
    }

    /// RFC 3986 pchar other than percent-encoding: unreserved, sub-delims, `:` and `@`.
    private static func isPathCharacter(_ byte: UInt8) -> Bool { pathCharacters.contains(byte) }

    private static let pathCharacters = ASCIISet { byte in
        isHostCharacter(byte) || isSubDelimiterColonOrAt(byte)
    }

    private static func isSubDelimiterColonOrAt(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
            return true
        default:
            return false
        }
    }
}

/// A set of ASCII bytes as two 64-bit masks: membership is one shift and one test, where a
/// chain of comparisons would branch on every byte of every URL.
private struct ASCIISet {
    private let low: UInt64
    private let high: UInt64

    init(_ member: (UInt8) -> Bool) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for byte in UInt8(0)..<128 where member(byte) {
            if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
        }
        self.low = low
        self.high = high
    }

    func contains(_ byte: UInt8) -> Bool {
        switch byte {
        case 0..<64: return low >> UInt64(byte) & 1 != 0
        case 64..<128: return high >> UInt64(byte - 64) & 1 != 0
        default: return false
        }
    }
}
