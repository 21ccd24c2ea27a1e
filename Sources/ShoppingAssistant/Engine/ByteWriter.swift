import Foundation

/// Little-endian fields appended to a byte array: the layout of the files the engine writes
/// itself (the delivery journal's frames, the dialog file), read back by `ByteReader`.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func uint16(_ value: UInt16) { append(value.littleEndian) }

    mutating func uint32(_ value: UInt32) { append(value.littleEndian) }

    mutating func uint64(_ value: UInt64) { append(value.littleEndian) }

    mutating func int64(_ value: Int64) { uint64(UInt64(bitPattern: value)) }

    /// `value` after its length as a `UInt32`; `ByteReader.lengthPrefixed()` reads it back.
    mutating func data(_ value: some Collection<UInt8>) {
        uint32(UInt32(truncatingIfNeeded: value.count))
        bytes.append(contentsOf: value)
    }

    /// The string's UTF-8, after its length.
    mutating func string(_ value: String) { data(value.utf8) }

    /// A flag byte, then the string when there is one.
    mutating func optionalString(_ value: String?) {
        guard let value else { return byte(0) }
        byte(1)
        string(value)
    }

    private mutating func append(_ value: some FixedWidthInteger) {
        withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
    }
}
