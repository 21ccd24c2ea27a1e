import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Version-4 UUIDs from the system's randomness, read 4 KiB at a time (256 UUIDs): `UUID()`
/// asks the kernel for every one, a system call of a few microseconds each on a cold path, and
/// every message takes two. Where `/dev/urandom` cannot be read, it is `UUID()`.
///
/// A child process made by `fork()` never hands out what its parent's pool still held: the
/// pool counts forks and starts over in the child.
@usableFromInline package enum RandomUUIDs {
    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: 4096)
        /// The next unused byte; the pool is refilled when it reaches the end.
        var next = 4096
        /// The fork count the bytes were read under.
        var forks = 0
        /// `/dev/urandom` could not be read: `UUID()` from then on.
        var unavailable = false
    }

    private static let pool = Locked(Pool())
    /// Incremented in a child process right after `fork()`.
    private static let forks = Atomic<Int>(0)
    private static let countsForks: Void = {
        pthread_atfork(nil, nil) { RandomUUIDs.forks.add(1, ordering: .relaxed) }
    }()

    /// Referenced by the engine's default `uuid` argument, hence usable from inline code.
    @usableFromInline package static func next() -> UUID {
        _ = countsForks
        let forks = Self.forks.load(ordering: .relaxed)
        let uuid = pool.withLock { pool -> uuid_t? in
            guard !pool.unavailable else { return nil }
            if pool.next == pool.bytes.count || pool.forks != forks {
                guard fill(&pool.bytes) else {
                    pool.unavailable = true
                    return nil
                }
                pool.next = 0
                pool.forks = forks
            }
            defer { pool.next += 16 }
            return pool.bytes.withUnsafeBytes { bytes in
                bytes.loadUnaligned(fromByteOffset: pool.next, as: uuid_t.self)
            }
        }
        guard var uuid else { return UUID() }
        uuid.6 = (uuid.6 & 0x0F) | 0x40  // version 4
        uuid.8 = (uuid.8 & 0x3F) | 0x80  // variant RFC 4122
        return UUID(uuid: uuid)
    }

    /// Fills `bytes` from `/dev/urandom`; false when it cannot.
    static func fill(_ bytes: inout [UInt8]) -> Bool {
        let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return bytes.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            var filled = 0
            while filled < buffer.count {
                let count = read(descriptor, base + filled, buffer.count - filled)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                filled += count
            }
            return true
        }
    }
}
