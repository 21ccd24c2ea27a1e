import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The on-disk format of `FileDeliveryStore`'s journals, and how one is read back.
///
/// A journal is append-only, so that accepting a request costs one small write and one flush
/// instead of rewriting the queue. It starts with a header (`SAOUTBOX` and a little-endian
/// `UInt16` schema version), so that a foreign file or one from a future schema is recognised
/// and set aside instead of being misread. Then come frames, each a little-endian `UInt32`
/// payload length, the payload's CRC-32 and the payload: one operation, written whole by one
/// `write` and flushed before the store returns, but a removal, which the next flush carries.
/// Zeros may follow the last frame: the space a store writes ahead, read as the journal's end.
/// A crash can therefore only cut the last frame short, which the checksum and length reveal,
/// with nothing but zeros after it; a power cut can also leave damage among the removals
/// written since the last flush, which costs only those removals. Damage is reported, never
/// guessed around, because a wrong length leaves no way to find where the next frame starts.
package enum DeliveryJournal {
    /// The first bytes of every journal.
    package static let magic: [UInt8] = Array("SAOUTBOX".utf8)
    /// The schema this build writes and the only one it reads.
    package static let version: UInt16 = 1
    /// What a journal holds before its first frame.
    package static let header: [UInt8] = magic + [UInt8(version & 0xFF), UInt8(version >> 8)]
    /// A frame's length and checksum, before its payload.
    package static let frameHeaderBytes = 8
    /// The largest payload written or read: far above any queue of requests, and low enough
    /// that a damaged length never makes the reader allocate gigabytes.
    package static let maximumPayloadBytes = 64 << 20

    // MARK: - Operations

    /// One change to the queue, as one frame holds it.
    package enum Operation: Equatable, Sendable {
        /// Records accepted together: one frame, so a crash keeps all of them or none.
        case add([DeliveryRecord])
        /// Records delivered, dropped or cleared.
        case remove([UUID])
        /// A record's new count of server failures.
        case attempts(UUID, Int)
        /// Every record forgotten.
        case clearAll
    }

    private enum Code: UInt8 {
        case add = 1
        case remove = 2
        case attempts = 3
        case clearAll = 4
    }

    /// `operation` framed for appending: length, checksum, payload.
    package static func frame(_ operation: Operation) -> [UInt8] {
        var payload = ByteWriter()
        switch operation {
        case .add(let records):
            payload.byte(Code.add.rawValue)
            payload.uint32(UInt32(records.count))
            for record in records { payload.record(record) }
        case .remove(let ids):
            payload.byte(Code.remove.rawValue)
            payload.uint32(UInt32(ids.count))
            for id in ids { payload.uuid(id) }
        case .attempts(let id, let attempts):
            payload.byte(Code.attempts.rawValue)
            payload.uuid(id)
            payload.int64(Int64(attempts))
        case .clearAll:
            payload.byte(Code.clearAll.rawValue)
        }
        var frame = ByteWriter()
        frame.bytes.reserveCapacity(frameHeaderBytes + payload.bytes.count)
        frame.uint32(UInt32(truncatingIfNeeded: payload.bytes.count))
        frame.uint32(Checksum.crc32(payload.bytes))
        frame.bytes += payload.bytes
        return frame.bytes
    }

    /// The size of `.add([record])` framed, computed without encoding it, so that the store
    /// knows what a compacted journal would take while replaying a long one.
    package static func framedBytes(of record: DeliveryRecord) -> Int {
        func string(_ value: String) -> Int { 4 + value.utf8.count }
        let body = 1 + (record.body.map { 4 + $0.count } ?? 0)
        let owner = 1 + (record.owner.map(string) ?? 0)
        let fields = 16 + string(record.kind.rawValue) + string(record.target) + body + 8 + 8 + string(record.label)
        return frameHeaderBytes + 1 + 4 + fields + owner
    }

    /// The operation a payload holds; throws a reason when it holds none this build knows.
    package static func decode(_ payload: ArraySlice<UInt8>) throws(DecodeFailure) -> Operation {
        do throws(ByteReader.Failure) {
            return try ByteReader.read(payload) { reader throws(ByteReader.Failure) in
                let operation = try operation(&reader)
                guard reader.isAtEnd else { throw ByteReader.Failure(reason: "bytes after its operation") }
                return operation
            }
        } catch {
            throw DecodeFailure(reason: error.reason)
        }
    }

    private static func operation(_ reader: inout ByteReader) throws(ByteReader.Failure) -> Operation {
        switch Code(rawValue: try reader.byte()) {
        case .add:
            let count = try reader.count(minimumBytesEach: 16)
            var records: [DeliveryRecord] = []
            records.reserveCapacity(count)
            for _ in 0..<count { records.append(try reader.record()) }
            return .add(records)
        case .remove:
            let count = try reader.count(minimumBytesEach: 16)
            var ids: [UUID] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(try reader.uuid()) }
            return .remove(ids)
        case .attempts:
            return .attempts(try reader.uuid(), try reader.int())
        case .clearAll:
            return .clearAll
        case nil:
            throw ByteReader.Failure(reason: "an unknown operation")
        }
    }

    /// Why a payload with a good checksum could not be decoded.
    package struct DecodeFailure: Error, Equatable {
        /// What the payload held instead, for the warning.
        package let reason: String
    }

    // MARK: - Live records

    /// The records a journal leaves after its operations, in the order they were added.
    ///
    /// Removal leaves a hole instead of shifting the array, so a long run of adds and removes
    /// costs constant time each; the holes are squeezed out once they outnumber the records.
    package struct LiveRecords: Sendable {
        private var slots: [DeliveryRecord?] = []
        private var index: [UUID: Int] = [:]
        /// What a journal holding only these records would take after its header.
        package private(set) var framedBytes = 0

        /// No records, as a new journal or one after `clearAll` leaves.
        package init() {}

        /// How many records are live.
        package var count: Int { index.count }
        /// The records its storage has room for: for tests that a drained burst gave it back.
        package var storageCapacity: Int { slots.capacity + index.capacity }
        /// The live records, in the order they were added.
        package var ordered: [DeliveryRecord] { slots.compactMap { $0 } }
        /// Whether a record with `id` is live.
        package func contains(_ id: UUID) -> Bool { index[id] != nil }
        /// The live record with `id`.
        package subscript(id: UUID) -> DeliveryRecord? { index[id].flatMap { slots[$0] } }

        /// Applies one operation, as replaying the journal or appending to it does.
        package mutating func apply(_ operation: Operation) {
            switch operation {
            case .add(let records):
                for record in records {
                    // A record added again under its id replaces it in its place: a call held
                    // at the session gate, let through with the session's bytes.
                    if let position = index[record.id], let kept = slots[position] {
                        framedBytes += DeliveryJournal.framedBytes(of: record) - DeliveryJournal.framedBytes(of: kept)
                        slots[position] = record
                        continue
                    }
                    index[record.id] = slots.count
                    slots.append(record)
                    framedBytes += DeliveryJournal.framedBytes(of: record)
                }
            case .remove(let ids):
                for id in ids {
                    guard let position = index.removeValue(forKey: id), let record = slots[position] else { continue }
                    slots[position] = nil
                    framedBytes -= DeliveryJournal.framedBytes(of: record)
                }
                index.releaseSpareCapacity()
                if slots.count > 64, slots.count > 2 * index.count { squeeze() }
            case .attempts(let id, let attempts):
                if let position = index[id] { slots[position]?.attempts = attempts }
            case .clearAll:
                self = LiveRecords()
            }
        }

        private mutating func squeeze() {
            slots = slots.filter { $0 != nil }
            for (position, record) in slots.enumerated() { index[record!.id] = position }
        }
    }

    // MARK: - Reading

    /// What reading a journal found.
    package struct Contents: Sendable {
        /// The records its good frames leave.
        package var live = LiveRecords()
        /// Where the last good frame ends (the header's end when there is none): what a torn
        /// journal is truncated to.
        package var validBytes: Int64 = 0
        /// The file's size, zeros written ahead of the next frame included.
        package var fileBytes: Int64 = 0
        /// The damage that ended the reading, if any.
        package var damage: Damage?
        /// Frames skipped for a payload that decoded badly, as `(offset, reason)`.
        package var skipped: [(offset: Int64, reason: String)] = []
    }

    /// Why reading stopped before the end of a file.
    package enum Damage: Equatable, Sendable {
        /// Shorter than a header, and a prefix of one (empty included): its creation was cut short.
        case tornHeader
        /// Not a journal of this schema; `reason` says why, for the warning.
        case foreign(reason: String)
        /// The last frame is incomplete, as a crash during its write leaves it.
        case tornTail(offset: Int64)
        /// A damaged frame with data after it: nothing after `offset` can be trusted.
        case corrupt(offset: Int64, reason: String)
    }

    /// Why a journal could not be read at all.
    package struct ReadFailure: Error {
        /// What failed, for the error.
        package let reason: String
    }

    /// Replays the journal open at `fd`, in one pass with a bounded buffer, so reading costs
    /// time linear in its size and memory in its largest frame.
    package static func load(fd: Int32) throws(ReadFailure) -> Contents {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ReadFailure(reason: "cannot stat (errno \(errno))") }
        var file = ChunkedReader(fd: fd, size: Int64(info.st_size))
        var contents = Contents()
        contents.fileBytes = file.size

        guard file.size >= Int64(header.count) else {
            let bytes = try file.bytes(at: 0, count: Int(file.size)) ?? []
            contents.damage =
                bytes.elementsEqual(header.prefix(bytes.count))
                ? .tornHeader : .foreign(reason: "does not start with an outbox header")
            return contents
        }
        let start = try file.bytes(at: 0, count: header.count) ?? []
        guard start.prefix(magic.count).elementsEqual(magic) else {
            contents.damage = .foreign(reason: "does not start with an outbox header")
            return contents
        }
        let version = UInt16(start[start.startIndex + 8]) | UInt16(start[start.startIndex + 9]) << 8
        guard version == Self.version else {
            contents.damage = .foreign(reason: "has schema version \(version), which this build does not read")
            return contents
        }

        var offset = Int64(header.count)
        contents.validBytes = offset
        while offset < file.size {
            guard let frameHeader = try file.bytes(at: offset, count: frameHeaderBytes) else {
                contents.damage = .tornTail(offset: offset)
                break
            }
            let length = Int(littleEndianUInt32(frameHeader, at: 0))
            let checksum = littleEndianUInt32(frameHeader, at: 4)
            let end = offset + Int64(frameHeaderBytes + length)
            guard length > 0, length <= maximumPayloadBytes else {
                // Zeros to the end are the space written ahead of the next frame, or a frame a
                // crash cut before any of it reached the file: either way the journal ends here.
                if try !file.isZero(from: offset) {
                    // A power cut during a write, or before removals written after it were flushed,
                    // can keep a frame's later bytes and lose its first.
                    let reason =
                        length == 0
                        ? "a record whose length reads 0 with bytes after it, as a power cut during its write or"
                            + " before the removals after it were flushed can leave it"
                        : "an impossible length \(length)"
                    contents.damage = .corrupt(offset: offset, reason: reason)
                }
                break
            }
            guard let payload = try file.bytes(at: offset + Int64(frameHeaderBytes), count: length) else {
                contents.damage = .tornTail(offset: offset)
                break
            }
            guard Checksum.crc32(payload) == checksum else {
                // Only the last frame can be cut short: nothing but zeros may follow it.
                contents.damage =
                    try file.isZero(from: end)
                    ? .tornTail(offset: offset) : .corrupt(offset: offset, reason: "a checksum mismatch")
                break
            }
            do {
                contents.live.apply(try decode(payload))
            } catch {
                contents.skipped.append((offset, error.reason))
            }
            offset = end
            contents.validBytes = offset
        }
        return contents
    }

    private static func littleEndianUInt32(_ bytes: ArraySlice<UInt8>, at position: Int) -> UInt32 {
        let start = bytes.startIndex + position
        return (0..<4).reduce(0) { $0 | UInt32(bytes[start + $1]) << (8 * UInt32($1)) }
    }

    /// Reads a file front to back through a window of at least a mebibyte, so that a journal of
    /// many small frames costs few system calls and a large one is never held whole.
    private struct ChunkedReader {
        let fd: Int32
        let size: Int64
        private var window: [UInt8] = []
        private var windowOffset: Int64 = 0
        private static let chunkBytes = 1 << 20

        init(fd: Int32, size: Int64) {
            self.fd = fd
            self.size = size
        }

        /// `count` bytes at `offset`, or `nil` when the file ends before them.
        mutating func bytes(at offset: Int64, count: Int) throws(ReadFailure) -> ArraySlice<UInt8>? {
            guard offset + Int64(count) <= size else { return nil }
            let windowEnd = windowOffset + Int64(window.count)
            if offset < windowOffset || offset + Int64(count) > windowEnd {
                let wanted = Int(min(Int64(max(count, Self.chunkBytes)), size - offset))
                window = try Self.read(fd, at: offset, count: wanted)
                windowOffset = offset
            }
            let start = Int(offset - windowOffset)
            return window[start..<start + count]
        }

        /// Whether every byte from `offset` to the end is zero.
        mutating func isZero(from offset: Int64) throws(ReadFailure) -> Bool {
            var position = offset
            while position < size {
                let count = Int(min(Int64(Self.chunkBytes), size - position))
                guard let chunk = try bytes(at: position, count: count), chunk.allSatisfy({ $0 == 0 }) else {
                    return false
                }
                position += Int64(count)
            }
            return true
        }

        private static func read(_ fd: Int32, at offset: Int64, count: Int) throws(ReadFailure) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            var filled = 0
            let failure: Int32? = bytes.withUnsafeMutableBytes { buffer in
                while filled < count {
                    let got = pread(fd, buffer.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled))
                    if got < 0, errno == EINTR { continue }
                    if got < 0 { return errno }
                    if got == 0 { return nil }
                    filled += got
                }
                return nil
            }
            if let failure { throw ReadFailure(reason: "cannot read (errno \(failure))") }
            guard filled == count else { throw ReadFailure(reason: "ended while being read") }
            return bytes
        }
    }
}

// MARK: - Byte coding

extension ByteWriter {
    fileprivate mutating func uuid(_ id: UUID) {
        withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
    }

    fileprivate mutating func record(_ record: DeliveryRecord) {
        uuid(record.id)
        string(record.kind.rawValue)
        string(record.target)
        if let body = record.body {
            byte(1)
            data(body)
        } else {
            byte(0)
        }
        // The bit pattern, so the date comes back exactly as it was accepted (DL4's age).
        uint64(record.createdAt.timeIntervalSinceReferenceDate.bitPattern)
        int64(Int64(record.attempts))
        string(record.label)
        optionalString(record.owner)
    }
}

extension ByteReader {
    fileprivate mutating func uuid() throws(Failure) -> UUID {
        let raw = bytes(try skip(16))
        return UUID(
            uuid: (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11],
                raw[12], raw[13], raw[14], raw[15]
            ))
    }

    fileprivate mutating func record() throws(Failure) -> DeliveryRecord {
        let id = try uuid()
        guard let kind = DeliveryRecord.Kind(rawValue: try string()) else {
            throw Failure(reason: "an unknown kind of record")
        }
        let target = try string()
        let body: Data?
        switch try byte() {
        case 0: body = nil
        case 1: body = Data(bytes(try lengthPrefixed()))
        default: throw Failure(reason: "a malformed body")
        }
        let createdAt = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try uint64()))
        let attempts = try int()
        let label = try string()
        let owner = try optionalString()
        return DeliveryRecord(
            id: id, kind: kind, target: target, body: body, createdAt: createdAt, attempts: attempts, label: label,
            owner: owner)
    }
}
