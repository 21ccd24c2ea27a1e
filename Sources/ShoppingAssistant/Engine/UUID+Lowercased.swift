import Foundation

extension UUID {
    /// `uuidString.lowercased()`, the form message and thread IDs take on the wire, written
    /// straight from the bytes: the two Foundation steps cost about 3 µs a UUID on Linux, and a
    /// message takes two.
    var lowercasedString: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                let digits: (UInt8) -> UInt8 = { $0 < 10 ? 0x30 + $0 : 0x57 + $0 }  // 0-9, a-f
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = 0x2D  // "-"
                        position += 1
                    }
                    text[position] = digits(byte >> 4)
                    text[position + 1] = digits(byte & 0x0F)
                    position += 2
                }
                return position
            }
        }
    }
}
