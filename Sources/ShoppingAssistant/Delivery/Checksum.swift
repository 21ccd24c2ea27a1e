/// The checksums of the files the engine writes itself, so that a torn or damaged write is
/// recognised on reading instead of being decoded; written here because Foundation has none on
/// every platform and the package links no compression library.
package enum Checksum {
    /// Eight tables of 256 entries: table 0 is the byte-at-a-time CRC of each byte value, and
    /// table k advances table k−1's entry by one more zero byte, so that eight bytes cost eight
    /// independent lookups instead of eight dependent ones ("slicing-by-8").
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
            tables[index] = value
        }
        for table in 1..<8 {
            for index in 0..<256 {
                let previous = tables[(table - 1) * 256 + index]
                tables[table * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum zlib and PNG use: the
    /// delivery journal's, over each record it writes and reads.
    /// `crc32("123456789".utf8) == 0xCBF43926`.
    package static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        if let crc = bytes.withContiguousStorageIfAvailable({ crc32(UnsafeRawBufferPointer($0)) }) { return crc }
        return Array(bytes).withUnsafeBytes { crc32($0) }
    }

    /// CRC-32 over raw bytes, eight at a time: the journal's writes sum every byte they write
    /// on the store's queue, which every event waits for.
    package static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        let count = bytes.count
        tables.withUnsafeBufferPointer { table in
            var offset = 0
            while offset + 8 <= count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                let low = UInt32(truncatingIfNeeded: word) ^ crc
                let high = UInt32(truncatingIfNeeded: word >> 32)
                let fromLow =
                    table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int(low >> 8 & 0xFF)]
                    ^ table[5 * 256 + Int(low >> 16 & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                let fromHigh =
                    table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int(high >> 8 & 0xFF)]
                    ^ table[256 + Int(high >> 16 & 0xFF)] ^ table[Int(high >> 24)]
                crc = fromLow ^ fromHigh
                offset += 8
            }
            while offset < count {
                crc = table[Int((crc ^ UInt32(bytes[offset])) & 0xFF)] ^ (crc >> 8)
                offset += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// XXH64 with seed 0: the dialog file's checksum, over hundreds of kilobytes read while the
    /// shopper waits for the chat. It reads eight bytes at a time in four independent lanes, far
    /// faster than `crc32` on a large file, and detects damage as well; like
    /// a CRC it is no defence against a file forged on purpose.
    /// `xxh64("Nobody inspects the spammish repetition".utf8) == 0xFBCEA83C8A378BF1`.
    package static func xxh64(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var offset = 0
        var hash: UInt64
        func word(_ at: Int) -> UInt64 {
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
        if count >= 32 {
            var lanes = (prime1 &+ prime2, prime2, UInt64(0), 0 &- prime1)
            while offset + 32 <= count {
                lanes.0 = round(lanes.0, word(offset))
                lanes.1 = round(lanes.1, word(offset + 8))
                lanes.2 = round(lanes.2, word(offset + 16))
                lanes.3 = round(lanes.3, word(offset + 24))
                offset += 32
            }
            hash =
                rotated(lanes.0, 1) &+ rotated(lanes.1, 7) &+ rotated(lanes.2, 12) &+ rotated(lanes.3, 18)
            hash = merged(hash, lanes.0)
            hash = merged(hash, lanes.1)
            hash = merged(hash, lanes.2)
            hash = merged(hash, lanes.3)
        } else {
            hash = prime5
        }
        hash &+= UInt64(count)
        while offset + 8 <= count {
            hash = rotated(hash ^ round(0, word(offset)), 27) &* prime1 &+ prime4
            offset += 8
        }
        if offset + 4 <= count {
            let half = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            hash = rotated(hash ^ (half &* prime1), 23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < count {
            hash = rotated(hash ^ (UInt64(bytes[offset]) &* prime5), 11) &* prime1
            offset += 1
        }
        hash ^= hash >> 33
        hash &*= prime2
        hash ^= hash >> 29
        hash &*= prime3
        hash ^= hash >> 32
        return hash
    }

    @inline(__always)
    private static func round(_ lane: UInt64, _ input: UInt64) -> UInt64 {
        rotated(lane &+ input &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merged(_ hash: UInt64, _ lane: UInt64) -> UInt64 {
        (hash ^ round(0, lane)) &* prime1 &+ prime4
    }

    @inline(__always)
    private static func rotated(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        value << bits | value >> (64 - bits)
    }
}
