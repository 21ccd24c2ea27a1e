import Foundation

/// Little-endian fields read with bounds checks from bytes lent for one read (`read(_:_:)`):
/// what `ByteWriter` wrote. Bytes are trusted only as far as their checksum, which says they
/// are the bytes written, not that this build wrote them, so a field that runs past the end, a
/// count larger than the bytes left or text that is not UTF-8 fails with a reason instead of
/// trapping or making the reader allocate for items that are absent.
struct ByteReader {
    /// Why the bytes are not what the reader expected, for the caller's warning.
    struct Failure: Error, Equatable {
        let reason: String
    }

    private let base: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    private(set) var offset = 0

    private init(_ base: UnsafeRawBufferPointer) { self.base = base }

    /// Lends a reader over `bytes` to `body`, positioned at their start.
    static func read<Result>(
        _ bytes: some ContiguousBytes, _ body: (inout ByteReader) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let outcome = bytes.withUnsafeBytes { raw -> Swift.Result<Result, Failure> in
            var reader = ByteReader(raw)
            do throws(Failure) {
                return .success(try body(&reader))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    var isAtEnd: Bool { offset == base.count }

    /// The bytes at `range`, which an earlier read returned; valid during the read only.
    func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: base[range]) }

    /// Consumes the next `count` bytes and returns where they lie.
    mutating func skip(_ count: Int) throws(Failure) -> Range<Int> {
        guard count >= 0, count <= base.count - offset else { throw Failure(reason: "a field that runs past its end") }
        defer { offset += count }
        return offset..<(offset + count)
    }

    mutating func byte() throws(Failure) -> UInt8 { base[try skip(1).lowerBound] }

    mutating func uint16() throws(Failure) -> UInt16 { UInt16(littleEndian: try load()) }

    mutating func uint32() throws(Failure) -> UInt32 { UInt32(littleEndian: try load()) }

    mutating func uint64() throws(Failure) -> UInt64 { UInt64(littleEndian: try load()) }

    mutating func int() throws(Failure) -> Int {
        guard let value = Int(exactly: Int64(bitPattern: try uint64())) else {
            throw Failure(reason: "a count out of range")
        }
        return value
    }

    /// A count of items, each at least `minimumBytesEach` long, checked against what is left
    /// so that a wrong count cannot make the caller reserve memory for items that are absent.
    mutating func count(minimumBytesEach: Int) throws(Failure) -> Int {
        let count = Int(try uint32())
        guard count <= (base.count - offset) / minimumBytesEach else {
            throw Failure(reason: "a count larger than its bytes")
        }
        return count
    }

    /// What `ByteWriter.data(_:)` wrote: where its bytes lie.
    mutating func lengthPrefixed() throws(Failure) -> Range<Int> { try skip(Int(try uint32())) }

    /// What `ByteWriter.string(_:)` wrote. Decoding repairs what is not UTF-8, so text that
    /// does not come back as its own bytes was not.
    mutating func string() throws(Failure) -> String {
        let raw = bytes(try lengthPrefixed())
        var value = String(decoding: raw.bindMemory(to: UInt8.self), as: UTF8.self)
        guard value.withUTF8({ UnsafeRawBufferPointer($0).hasSameBytes(as: raw) }) else {
            throw Failure(reason: "text that is not UTF-8")
        }
        return value
    }

    /// What `ByteWriter.optionalString(_:)` wrote.
    mutating func optionalString() throws(Failure) -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try string()
        default: throw Failure(reason: "a malformed optional text")
        }
    }

    private mutating func load<Value: FixedWidthInteger>() throws(Failure) -> Value {
        base.loadUnaligned(fromByteOffset: try skip(MemoryLayout<Value>.size).lowerBound, as: Value.self)
    }
}
