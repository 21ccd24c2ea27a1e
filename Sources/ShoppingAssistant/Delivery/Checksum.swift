/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum zlib and PNG use.
///
/// The delivery journal checks each record with it so that a torn or damaged write is
/// recognised on reading instead of being decoded as a request; it is written here because
/// Foundation has none on every platform and the package links no compression library.
package enum Checksum {
    /// One entry per byte value, so that each byte costs one lookup instead of eight shifts.
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
        return value
    }

    /// The CRC-32 of `bytes`; `crc32("123456789".utf8) == 0xCBF43926`.
    package static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
