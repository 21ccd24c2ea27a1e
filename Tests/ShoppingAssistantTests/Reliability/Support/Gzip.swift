import Foundation

/// Just enough gzip (RFC 1952, deflate per RFC 1951) to send encoded answers from the loopback
/// server: stored blocks for an ordinary body, and a run-length "bomb" whose few hundred
/// kilobytes decode to tens of megabytes. Foundation has no public encoder on Linux.
enum Gzip {
    /// `data` as a gzip member made of stored (uncompressed) deflate blocks.
    static func stored(_ data: Data) -> Data {
        var out = header
        let bytes = [UInt8](data)
        var offset = 0
        repeat {
            let count = min(65_535, bytes.count - offset)
            let isLast = offset + count == bytes.count
            out.append(isLast ? 1 : 0)  // BFINAL, BTYPE = 00, padded to the byte
            out.append(contentsOf: [UInt8(count & 0xFF), UInt8(count >> 8)])
            out.append(contentsOf: [UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)])
            out.append(contentsOf: bytes[offset..<(offset + count)])
            offset += count
        } while offset < bytes.count
        out.append(trailer(crc: CRC32.checksum(bytes), size: bytes.count))
        return out
    }

    /// A gzip member that decodes to `1 + 258 × runs` copies of `filler` followed by `tail`:
    /// one literal, then `runs` back-references of length 258 at distance 1 (13 bits each, in
    /// the fixed Huffman code), then `tail` as literals.
    static func bomb(filler: UInt8, runs: Int, tail: Data) -> Data {
        var bits = BitWriter()
        bits.write(1, count: 1)  // BFINAL
        bits.write(1, count: 2)  // BTYPE = 01, fixed Huffman codes
        bits.literal(filler)
        for _ in 0..<runs {
            bits.code(0b1100_0101, length: 8)  // length symbol 285: 258 bytes
            bits.code(0, length: 5)  // distance code 0: distance 1
        }
        for byte in tail { bits.literal(byte) }
        bits.code(0, length: 7)  // end of block (256)
        var out = header
        out.append(contentsOf: bits.finished)
        let size = 1 + 258 * runs + tail.count
        var crc = CRC32()
        crc.update(repeating: filler, count: 1 + 258 * runs)
        crc.update([UInt8](tail))
        out.append(trailer(crc: crc.value, size: size))
        return out
    }

    private static let header = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF])

    private static func trailer(crc: UInt32, size: Int) -> Data {
        let isize = UInt32(truncatingIfNeeded: size)
        return Data((0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) })
            + Data((0..<4).map { UInt8(truncatingIfNeeded: isize >> (8 * $0)) })
    }

    /// Deflate's bit order: values least significant bit first, Huffman codes most
    /// significant bit first.
    private struct BitWriter {
        private var bytes: [UInt8] = []
        private var current: UInt32 = 0
        private var filled = 0

        mutating func write(_ value: UInt32, count: Int) {
            for index in 0..<count {
                current |= ((value >> index) & 1) << filled
                filled += 1
                if filled == 8 { flushByte() }
            }
        }

        mutating func code(_ code: UInt32, length: Int) {
            for index in stride(from: length - 1, through: 0, by: -1) { write((code >> index) & 1, count: 1) }
        }

        mutating func literal(_ byte: UInt8) {
            if byte < 144 {
                code(0x30 + UInt32(byte), length: 8)
            } else {
                code(0x190 + UInt32(byte) - 144, length: 9)
            }
        }

        private mutating func flushByte() {
            bytes.append(UInt8(current & 0xFF))
            current = 0
            filled = 0
        }

        var finished: [UInt8] {
            var copy = self
            if copy.filled > 0 { copy.flushByte() }
            return copy.bytes
        }
    }
}

/// CRC-32 (IEEE 802.3), as gzip's trailer needs.
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    private var state: UInt32 = 0xFFFF_FFFF

    var value: UInt32 { ~state }

    mutating func update(_ bytes: [UInt8]) {
        for byte in bytes { state = Self.table[Int((state ^ UInt32(byte)) & 0xFF)] ^ (state >> 8) }
    }

    /// `count` copies of `byte`, without materialising them.
    mutating func update(repeating byte: UInt8, count: Int) {
        let table = Self.table
        var state = self.state
        for _ in 0..<count { state = table[Int((state ^ UInt32(byte)) & 0xFF)] ^ (state >> 8) }
        self.state = state
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }
}
