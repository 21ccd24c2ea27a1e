import Foundation

/// Version-4 UUIDs drawn from `SystemRandomNumberGenerator` — the system's randomness on every
/// platform (`getrandom` on Linux, `arc4random_buf` on Darwin) — 16 bytes at a time.
///
/// Nothing is buffered: each UUID is drawn when it is asked for, so a child process made by
/// `fork()` can never hand out bytes its parent also holds, and no lock or fork handler is
/// needed.
@usableFromInline package enum RandomUUIDs {
    /// Referenced by the engine's default `uuid` argument, hence usable from inline code.
    @usableFromInline package static func next() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
        }
        uuid.6 = (uuid.6 & 0x0F) | 0x40  // version 4
        uuid.8 = (uuid.8 & 0x3F) | 0x80  // variant RFC 4122
        return UUID(uuid: uuid)
    }
}
