import Foundation

/// A strict pull reader over the bytes of one JSON text (RFC 8259), used by every decoder
/// that reads server bytes.
///
/// Decoders walk the text with it and take only what they need, so a reply becomes the reply
/// model without an intermediate tree, and whatever they skip is still checked: the reader
/// accepts exactly the same language whether a value is read or skipped. That language is
/// RFC 8259 with these decisions:
/// - UTF-8 only, and well-formed (no overlong forms, no encoded surrogates, nothing above
///   U+10FFFF); one leading UTF-8 byte order mark is ignored (RFC 8259 § 8.1 allows it, and
///   Foundation's decoders accept it too).
/// - No trailing commas, comments, single quotes, `NaN`/`Infinity`, leading zeros or `+`.
/// - Control characters (below 0x20) must be escaped in strings; `\u` escapes of surrogates
///   must form a high–low pair (a lone surrogate cannot be a Swift `String`).
/// - Numbers are read as `Double`, correctly rounded; one beyond `Double`'s range is an
///   error, one below it reads as zero.
/// - Any value may be the top-level value; only whitespace may follow it.
/// - Nesting is bounded by `maximumDepth`, which bounds the recursion of every decoder.
///
/// Cost is linear in the input: each byte is looked at a bounded number of times (strings
/// with escapes twice: once to check, once to decode). The reader only ever lives inside
/// `JSONReader.read(_:_:)`, which lends it the bytes.
struct JSONReader {
    /// Arrays and objects may nest this deep (the depth at which Foundation's
    /// `JSONSerialization` stops too).
    static let maximumDepth = 512

    /// What the next value is, from its first byte.
    enum Kind: Sendable, Hashable {
        case object, array, string, number, bool, null
    }

    /// A string (or member name) as it lies in the input, already checked: the bytes between
    /// the quotes.
    struct RawString {
        let start: Int
        let end: Int
        /// The string contains escapes, so its bytes are not its text.
        let escaped: Bool
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    private(set) var position = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The size of the whole input, in bytes.
    var inputCount: Int { bytes.count }

    /// Lends a reader over `data` to `body`, positioned after an optional byte order mark.
    static func read<Result>(
        _ data: some ContiguousBytes, _ body: (inout JSONReader) throws(JSONReadError) -> Result
    ) throws(JSONReadError) -> Result {
        let outcome = data.withUnsafeBytes { raw -> Swift.Result<Result, JSONReadError> in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.count < Int(UInt32.max) else { return .failure(JSONReadError(.tooLarge, at: 0)) }
            var reader = JSONReader(bytes)
            reader.skipByteOrderMark()
            do throws(JSONReadError) {
                return .success(try body(&reader))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// The input's bytes from `start` to `end`, for copying out what was read.
    func bytes(from start: Int, to end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    private mutating func skipByteOrderMark() {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
    }

    private func fail(_ reason: JSONReadError.Reason, at offset: Int? = nil) -> JSONReadError {
        JSONReadError(reason, at: offset ?? position)
    }

    // MARK: - Structure

    @inline(__always)
    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// The kind of the next value, after whitespace; nothing of the value is consumed.
    mutating func peek() throws(JSONReadError) -> Kind {
        skipWhitespace()
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        default: throw fail(.unexpectedByte)
        }
    }

    /// Only whitespace may follow the value.
    mutating func finish() throws(JSONReadError) {
        skipWhitespace()
        guard position == bytes.count else { throw fail(.trailingData) }
    }

    /// Reads the object at the current position member by member: `body` receives each key
    /// and must read or skip exactly one value.
    @inline(__always)
    mutating func readObject(
        _ body: (inout JSONReader, RawString) throws(JSONReadError) -> Void
    ) throws(JSONReadError) {
        try enter(UInt8(ascii: "{"))
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return
        }
        while true {
            guard position < bytes.count else { throw fail(.unexpectedEnd) }
            guard bytes[position] == UInt8(ascii: "\"") else { throw fail(.unexpectedByte) }
            let name = try scanString()
            skipWhitespace()
            guard position < bytes.count else { throw fail(.unexpectedEnd) }
            guard bytes[position] == UInt8(ascii: ":") else { throw fail(.unexpectedByte) }
            position += 1
            try body(&self, name)
            if try endOfMember(closing: UInt8(ascii: "}")) { return }
        }
    }

    /// Reads the array at the current position: `body` is called once per element and must
    /// read or skip exactly one value.
    @inline(__always)
    mutating func readArray(_ body: (inout JSONReader) throws(JSONReadError) -> Void) throws(JSONReadError) {
        try enter(UInt8(ascii: "["))
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return
        }
        while true {
            try body(&self)
            if try endOfMember(closing: UInt8(ascii: "]")) { return }
        }
    }

    /// Reads an array as `readArray` does, passing each element's position, or skips a value
    /// of another kind; returns whether it was an array.
    @inline(__always)
    @discardableResult
    mutating func readArrayOrSkip(
        _ body: (inout JSONReader, Int) throws(JSONReadError) -> Void
    ) throws(JSONReadError) -> Bool {
        guard try peek() == .array else {
            try skipValue()
            return false
        }
        var index = 0
        try readArray { reader throws(JSONReadError) in
            try body(&reader, index)
            index += 1
        }
        return true
    }

    /// Reads an object as `readObject` does, or skips a value of another kind; returns whether
    /// it was an object.
    @inline(__always)
    @discardableResult
    mutating func readObjectOrSkip(
        _ body: (inout JSONReader, RawString) throws(JSONReadError) -> Void
    ) throws(JSONReadError) -> Bool {
        guard try peek() == .object else {
            try skipValue()
            return false
        }
        try readObject(body)
        return true
    }

    private mutating func enter(_ opening: UInt8) throws(JSONReadError) {
        skipWhitespace()
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        guard bytes[position] == opening else { throw fail(.unexpectedByte) }
        guard depth < Self.maximumDepth else { throw fail(.tooDeep) }
        depth += 1
        position += 1
    }

    /// After a member or element: `true` at the closing bracket (consumed), `false` after a
    /// comma that another member follows.
    @inline(__always)
    private mutating func endOfMember(closing: UInt8) throws(JSONReadError) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        let byte = bytes[position]
        if byte == closing {
            position += 1
            depth -= 1
            return true
        }
        guard byte == UInt8(ascii: ",") else { throw fail(.unexpectedByte) }
        let comma = position
        position += 1
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") || bytes[position] == UInt8(ascii: "}") {
            throw fail(.trailingComma, at: comma)
        }
        return false
    }

    /// Skips one value of any kind, checking it as strictly as reading it would.
    mutating func skipValue() throws(JSONReadError) {
        switch try peek() {
        case .object: try readObject { reader, _ throws(JSONReadError) in try reader.skipValue() }
        case .array: try readArray { reader throws(JSONReadError) in try reader.skipValue() }
        case .string: _ = try scanString()
        case .number: _ = try readNumber()
        case .bool: _ = try readBool()
        case .null: try readNull()
        }
    }

    /// Skips one value and returns where its bytes lie, for keeping it raw.
    mutating func skipValueReturningRange() throws(JSONReadError) -> Range<Int> {
        skipWhitespace()
        let start = position
        try skipValue()
        return start..<position
    }

    // MARK: - Literals

    mutating func readBool() throws(JSONReadError) -> Bool {
        skipWhitespace()
        if matchLiteral("true") { return true }
        if matchLiteral("false") { return false }
        throw fail(position < bytes.count ? .unexpectedByte : .unexpectedEnd)
    }

    mutating func readNull() throws(JSONReadError) {
        skipWhitespace()
        guard matchLiteral("null") else { throw fail(position < bytes.count ? .unexpectedByte : .unexpectedEnd) }
    }

    /// If `null` is next, consumes it.
    mutating func readNullIfPresent() throws(JSONReadError) -> Bool {
        guard try peek() == .null else { return false }
        try readNull()
        return true
    }

    private mutating func matchLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        let text = literal.utf8Start
        for offset in 0..<count where bytes[position + offset] != text[offset] { return false }
        position += count
        return true
    }

    // MARK: - Strings

    /// Checks the string at the current position (after whitespace) and returns where its
    /// content lies.
    mutating func scanString() throws(JSONReadError) -> RawString {
        skipWhitespace()
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        guard bytes[position] == UInt8(ascii: "\"") else { throw fail(.unexpectedByte) }
        position += 1
        let start = position
        var escaped = false
        let base = bytes.baseAddress
        while true {
            // Eight plain bytes at a time: printable ASCII other than `"` and `\`; in the word
            // that is not all plain, straight to its first byte that is not.
            if let base = UnsafeRawPointer(base) {
                while bytes.count - position >= 8 {
                    let marks = JSONStringWords.toEscapeOrMultibyte(JSONStringWords.word(base, at: position))
                    guard marks == 0 else {
                        position += JSONStringWords.bytesBefore(marks)
                        break
                    }
                    position += 8
                }
            }
            guard position < bytes.count else { throw fail(.unexpectedEnd) }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return RawString(start: start, end: position - 1, escaped: escaped)
            case UInt8(ascii: "\\"):
                escaped = true
                try scanEscape()
            case 0..<0x20:
                throw fail(.controlCharacter)
            case 0x20..<0x80:
                position += 1
            default:
                try scanMultibyte(lead: byte)
            }
        }
    }

    /// Checks one escape at the current `\`.
    private mutating func scanEscape() throws(JSONReadError) {
        let start = position
        guard bytes.count - position >= 2 else { throw fail(.unexpectedEnd) }
        switch bytes[position + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 2
        case UInt8(ascii: "u"):
            let unit = try hexUnit(at: position + 2)
            position += 6
            switch unit {
            case 0xD800...0xDBFF:
                guard bytes.count - position >= 2, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw fail(.loneSurrogate, at: start) }
                let low = try hexUnit(at: position + 2)
                guard (0xDC00...0xDFFF).contains(low) else { throw fail(.loneSurrogate, at: start) }
                position += 6
            case 0xDC00...0xDFFF:
                throw fail(.loneSurrogate, at: start)
            default:
                break
            }
        default:
            throw fail(.invalidEscape)
        }
    }

    /// The four hex digits at `offset` as a UTF-16 code unit.
    private func hexUnit(at offset: Int) throws(JSONReadError) -> UInt32 {
        var unit: UInt32 = 0
        for index in offset..<(offset + 4) {
            guard index < bytes.count else { throw fail(.unexpectedEnd, at: bytes.count) }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail(.invalidEscape, at: index)
            }
            unit = unit << 4 | UInt32(digit)
        }
        return unit
    }

    /// Checks one well-formed UTF-8 sequence of two to four bytes (Unicode 15, table 3-7).
    private mutating func scanMultibyte(lead: UInt8) throws(JSONReadError) {
        let continuation: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: continuation = 1
        case 0xE0:
            continuation = 2
            secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: continuation = 2
        case 0xED:
            continuation = 2
            secondRange = 0x80...0x9F
        case 0xF0:
            continuation = 3
            secondRange = 0x90...0xBF
        case 0xF1...0xF3: continuation = 3
        case 0xF4:
            continuation = 3
            secondRange = 0x80...0x8F
        default: throw fail(.invalidUTF8)
        }
        guard bytes.count - position > continuation else { throw fail(.invalidUTF8) }
        guard secondRange.contains(bytes[position + 1]) else { throw fail(.invalidUTF8) }
        var index = position + 2
        while index <= position + continuation {
            guard bytes[index] & 0xC0 == 0x80 else { throw fail(.invalidUTF8) }
            index += 1
        }
        position = index
    }

    /// The text of a checked string or member name.
    func string(_ raw: RawString) -> String {
        let content = UnsafeBufferPointer(rebasing: bytes[raw.start..<raw.end])
        guard raw.escaped else { return String(decoding: content, as: UTF8.self) }
        // Every escape is longer than the UTF-8 it stands for, so the content's length is enough.
        return String(unsafeUninitializedCapacity: content.count) { buffer in
            guard let output = buffer.baseAddress else { return 0 }
            return Self.unescape(content, into: output)
        }
    }

    /// Reads a string into `output`, unescaped: the bytes are its UTF-8.
    mutating func readString(appendingTo output: inout [UInt8]) throws(JSONReadError) {
        append(try scanString(), to: &output)
    }

    /// Appends the UTF-8 of a checked string to `output`.
    func append(_ raw: RawString, to output: inout [UInt8]) {
        let content = UnsafeBufferPointer(rebasing: bytes[raw.start..<raw.end])
        guard raw.escaped else {
            output.append(contentsOf: content)
            return
        }
        // Unescaped beside the output (on the stack, for a string of a URL's size), then
        // appended at once: no zeros written first and taken back after.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: content.count) { buffer in
            guard let base = buffer.baseAddress else { return }
            output.append(contentsOf: UnsafeBufferPointer(start: base, count: Self.unescape(content, into: base)))
        }
    }

    /// Writes the UTF-8 of checked string content with escapes; returns the bytes written
    /// (never more than `content.count`).
    private static func unescape(_ content: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>)
        -> Int
    {
        var read = 0
        var written = 0
        func emit(_ byte: UInt8) {
            output[written] = byte
            written += 1
        }
        while read < content.count {
            let byte = content[read]
            guard byte == UInt8(ascii: "\\") else {
                emit(byte)
                read += 1
                continue
            }
            let escape = content[read + 1]
            read += 2
            switch escape {
            case UInt8(ascii: "b"): emit(0x08)
            case UInt8(ascii: "f"): emit(0x0C)
            case UInt8(ascii: "n"): emit(0x0A)
            case UInt8(ascii: "r"): emit(0x0D)
            case UInt8(ascii: "t"): emit(0x09)
            case UInt8(ascii: "u"):
                var scalar = hexValue(content, read)
                read += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    // Checked: a low surrogate escape follows.
                    let low = hexValue(content, read + 2)
                    read += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                switch scalar {
                case 0..<0x80:
                    emit(UInt8(scalar))
                case 0x80..<0x800:
                    emit(UInt8(0xC0 | scalar >> 6))
                    emit(UInt8(0x80 | scalar & 0x3F))
                case 0x800..<0x10000:
                    emit(UInt8(0xE0 | scalar >> 12))
                    emit(UInt8(0x80 | scalar >> 6 & 0x3F))
                    emit(UInt8(0x80 | scalar & 0x3F))
                default:
                    emit(UInt8(0xF0 | scalar >> 18))
                    emit(UInt8(0x80 | scalar >> 12 & 0x3F))
                    emit(UInt8(0x80 | scalar >> 6 & 0x3F))
                    emit(UInt8(0x80 | scalar & 0x3F))
                }
            default:
                emit(escape)  // `"`, `\` and `/` stand for themselves
            }
        }
        return written
    }

    /// Four checked hex digits at `offset`.
    private static func hexValue(_ content: UnsafeBufferPointer<UInt8>, _ offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for index in offset..<(offset + 4) {
            let byte = content[index] | 0x20  // lower-cases letters, keeps digits
            let digit = byte <= UInt8(ascii: "9") ? byte - UInt8(ascii: "0") : byte - UInt8(ascii: "a") + 10
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Is the checked string (or member name) `name`? Without escapes, byte for byte.
    @inline(__always)
    func text(_ raw: RawString, is name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard !raw.escaped else {
            // Rare: decode and compare the text. Escapes make the raw text longer, never shorter.
            guard raw.end - raw.start >= count else { return false }
            return string(raw).utf8.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: count))
        }
        guard raw.end - raw.start == count else { return false }
        let text = name.utf8Start
        for offset in 0..<count where bytes[raw.start + offset] != text[offset] { return false }
        return true
    }

    /// The next string as it lies in the input, or `nil` after skipping a value of another kind.
    mutating func scanStringOrSkip() throws(JSONReadError) -> RawString? {
        guard try peek() == .string else {
            try skipValue()
            return nil
        }
        return try scanString()
    }

    /// Reads a string value as text.
    mutating func readString() throws(JSONReadError) -> String {
        string(try scanString())
    }

    /// The string value's text, or `nil` after skipping a value of another kind.
    mutating func readStringOrSkip() throws(JSONReadError) -> String? {
        try scanStringOrSkip().map { string($0) }
    }

    // MARK: - Numbers

    /// Reads a number (RFC 8259 § 6) as the nearest `Double`.
    mutating func readNumber() throws(JSONReadError) -> Double {
        skipWhitespace()
        let start = position
        var negative = false
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        // Significant digits go into `mantissa` while it is exact; `exponent` is the power of
        // ten the mantissa is scaled by; `inexact` notes a non-zero digit that did not fit.
        var mantissa: UInt64 = 0
        var exponent = 0
        var inexact = false
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        switch bytes[position] {
        case UInt8(ascii: "0"):
            position += 1
            if position < bytes.count, Self.isDigit(bytes[position]) { throw fail(.invalidNumber) }
        case UInt8(ascii: "1")...UInt8(ascii: "9"):
            while position < bytes.count, Self.isDigit(bytes[position]) {
                let digit = UInt64(bytes[position] - UInt8(ascii: "0"))
                if mantissa < 1_000_000_000_000_000_000 / 10 {
                    mantissa = mantissa * 10 + digit
                } else {
                    exponent += 1
                    if digit != 0 { inexact = true }
                }
                position += 1
            }
        default:
            throw fail(.invalidNumber)
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.count, Self.isDigit(bytes[position]) else { throw fail(.invalidNumber) }
            while position < bytes.count, Self.isDigit(bytes[position]) {
                let digit = UInt64(bytes[position] - UInt8(ascii: "0"))
                if mantissa < 1_000_000_000_000_000_000 / 10 {
                    mantissa = mantissa * 10 + digit
                    exponent -= 1
                } else if digit != 0 {
                    inexact = true
                }
                position += 1
            }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            var negativeExponent = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                negativeExponent = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            guard position < bytes.count, Self.isDigit(bytes[position]) else { throw fail(.invalidNumber) }
            var written = 0
            while position < bytes.count, Self.isDigit(bytes[position]) {
                // Far beyond any double either way; the cap keeps the sum from overflowing.
                written = min(written * 10 + Int(bytes[position] - UInt8(ascii: "0")), 1_000_000)
                position += 1
            }
            exponent += negativeExponent ? -written : written
        }
        if mantissa == 0, !inexact { return negative ? -0.0 : 0 }
        // Exact operands and one rounding (Clinger's fast path) give the correctly rounded value.
        if !inexact, mantissa <= 1 << 53, (-22...22).contains(exponent) {
            let value = Double(mantissa)
            let scaled = exponent < 0 ? value / Self.powerOfTen(-exponent) : value * Self.powerOfTen(exponent)
            return negative ? -scaled : scaled
        }
        // Everything else goes through the standard library's correctly rounded parser; the
        // checked literal is a valid input for it.
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(literal), value.isFinite else { throw fail(.numberOutOfRange, at: start) }
        return value
    }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// 10^`exponent` for 0...22, all exact in a `Double`.
    @inline(__always)
    private static func powerOfTen(_ exponent: Int) -> Double {
        powersOfTen[exponent]
    }

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]
}
