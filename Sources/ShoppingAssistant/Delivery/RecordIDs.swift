import Foundation

/// The IDs of an engine's delivery records: version-4 UUIDs whose random part is drawn once
/// per engine and then counted, so that accepting a record makes no system call.
///
/// A record's ID only has to be unique among the records of one store: two engines or two
/// processes on it each draw their own 122 random bits, and one engine never repeats a count.
/// It never leaves the device (the wire carries the record's body, not its ID). A child made
/// by `fork()` cannot repeat its parent's counts with the parent's engine: Dispatch, which runs
/// every engine, refuses to run in a child forked once it has started.
struct RecordIDs {
    private let high: UInt64
    private let low: UInt64
    private var count: UInt64 = 0

    init() {
        var generator = SystemRandomNumberGenerator()
        high = generator.next()
        low = generator.next()
    }

    mutating func next() -> UUID {
        count &+= 1
        // The version nibble and the variant's two bits are fixed; a count that wraps the 62
        // bits left would take 2^62 records.
        let high = (self.high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let low = ((self.low &+ count) & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: uuid)
    }
}
