/// A request body that writes itself as JSON, without `JSONEncoder`'s boxing of every value.
///
/// Every message and every lifecycle event is a body, so their cost is the engine's cost per
/// message: `JSONEncoder` took a third of the engine's CPU in a long dialog, and costs about ten
/// times this writer per body (a message body 129,000 instructions instead of 13,000). A
/// conforming type is the only description of its body: it writes its members in ascending
/// UTF-8 order of their keys and leaves out what has no value — the bytes `JSONEncoder` wrote
/// with `.sortedKeys` and `.withoutEscapingSlashes` before, so queued bodies and recorded
/// transcripts still match. `RequestBodyTests` pins each body's bytes.
protocol JSONBodyWritable {
    func write(to json: inout JSONBodyWriter)
}

/// Appends JSON to a byte buffer: objects and arrays with commas placed for the caller, strings
/// escaped as `JSONEncoder` escapes them.
struct JSONBodyWriter {
    private(set) var bytes: [UInt8] = []
    /// One bit per open object or array: whether it has a member yet (a comma is due).
    private var started: UInt64 = 0
    private var depth = 0

    init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    /// An object; `members` writes its members with `member`, keys in ascending UTF-8 order.
    mutating func object(_ members: (inout JSONBodyWriter) -> Void) {
        open(UInt8(ascii: "{"))
        members(&self)
        close(UInt8(ascii: "}"))
    }

    /// An array; `elements` writes its elements with `element`.
    mutating func array(_ elements: (inout JSONBodyWriter) -> Void) {
        open(UInt8(ascii: "["))
        elements(&self)
        close(UInt8(ascii: "]"))
    }

    /// A member of the object being written, under a key written in the source: a plain name,
    /// copied as it is (no key of a body needs escaping).
    mutating func member(_ key: StaticString, _ value: some JSONBodyWritable) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { key in
            assert(Self.firstEscaped(in: key, from: 0) == key.count, "a literal key that needs escaping")
            bytes.append(contentsOf: key)
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        value.write(to: &self)
    }

    /// A member of the object being written, left out when `value` is `nil` (as
    /// `encodeIfPresent` leaves it out).
    mutating func member(_ key: StaticString, ifPresent value: (some JSONBodyWritable)?) {
        guard let value else { return }
        member(key, value)
    }

    /// A member of the object being written, under a key known only now (a dictionary's, an
    /// event's field), escaped as any string.
    mutating func member(named key: String, _ value: some JSONBodyWritable) {
        separate()
        string(key)
        bytes.append(UInt8(ascii: ":"))
        value.write(to: &self)
    }

    /// An element of the array being written.
    mutating func element(_ value: some JSONBodyWritable) {
        separate()
        value.write(to: &self)
    }

    /// A string, escaped: `"` and `\`, the C0 controls (`\b`, `\t`, `\n`, `\f`, `\r` by their
    /// short names, the rest as `\u00xx`); everything else as its UTF-8, `/` included.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var clean = 0  // the start of the run of bytes that need no escaping
            var index = Self.firstEscaped(in: utf8, from: 0)
            while index < utf8.count {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<index]))
                escape(utf8[index])
                clean = index + 1
                index = Self.firstEscaped(in: utf8, from: clean)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The index of the first byte from `start` on that must be escaped (a C0 control, `"` or
    /// `\`), or `utf8.count`. Looks at eight bytes at a time (nearly every string has none),
    /// and in a word that has one, goes straight to it.
    static func firstEscaped(in utf8: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if let base = UnsafeRawPointer(utf8.baseAddress) {
            while index + 8 <= utf8.count {
                let marks = JSONStringWords.toEscape(JSONStringWords.word(base, at: index))
                if marks != 0 { return index + JSONStringWords.bytesBefore(marks) }
                index += 8
            }
        }
        while index < utf8.count {
            let byte = utf8[index]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C { break }
            index += 1
        }
        return index
    }

    /// A literal that needs no escaping (`true`, a number).
    mutating func raw(_ literal: String) {
        bytes.append(contentsOf: literal.utf8)
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: bytes.append(UInt8(ascii: "\""))
        case 0x5C: bytes.append(UInt8(ascii: "\\"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }

    /// Opens a container where a value goes (`member` and `element` placed the comma).
    private mutating func open(_ bracket: UInt8) {
        bytes.append(bracket)
        depth += 1
        started &= ~bit
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        depth -= 1
    }

    /// A comma before every member or element but the first of its container.
    private mutating func separate() {
        guard depth > 0 else { return }
        if started & bit != 0 { bytes.append(UInt8(ascii: ",")) }
        started |= bit
    }

    /// The bit of the innermost container; bodies nest a handful of levels, never 64.
    private var bit: UInt64 { 1 << UInt64(min(depth, 63)) }
}

extension String: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) { json.string(self) }
}

extension Bool: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) { json.raw(self ? "true" : "false") }
}

extension Int: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) { json.raw(String(self)) }
}

extension Array: JSONBodyWritable where Element: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.array { json in
            for element in self { json.element(element) }
        }
    }
}

extension Dictionary: JSONBodyWritable where Key == String, Value: JSONBodyWritable {
    /// Keys in ascending UTF-8 order, as `JSONEncoder`'s `.sortedKeys` orders them.
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            for (key, value) in sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                json.member(named: key, value)
            }
        }
    }
}
