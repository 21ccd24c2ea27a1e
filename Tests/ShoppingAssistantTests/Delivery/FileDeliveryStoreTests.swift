import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct FileDeliveryStoreTests {

    // MARK: - Helpers

    /// A fresh directory per test, removed when the test is done with it. `inMemory` puts it on
    /// tmpfs where there is one, for tests of thousands of writes whose subject is not the
    /// disk's flush: each `fsync` there costs nothing instead of milliseconds.
    private func withDirectory(inMemory: Bool = false, _ body: (URL) throws -> Void) rethrows {
        let shm = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        let base = inMemory && access(shm.path, W_OK) == 0 ? shm : FileManager.default.temporaryDirectory
        let directory = base.appendingPathComponent("FileDeliveryStoreTests-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    /// Collects what a store reports.
    private final class Warnings: Sendable {
        private let lines = Locked<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func handler() -> @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
    }

    private func store(_ directory: URL, _ warnings: Warnings = Warnings()) -> FileDeliveryStore {
        let store = FileDeliveryStore(directory: directory)
        store.setWarningHandler(warnings.handler())
        return store
    }

    /// A record with every field set, distinct per `number`; odd numbers have no body and no owner.
    private func record(_ number: Int, attempts: Int = 0) -> DeliveryRecord {
        DeliveryRecord(
            id: UUID(), kind: number % 3 == 0 ? .event : number % 3 == 1 ? .visit : .tracking,
            target: number % 3 == 2 ? "https://t.example/ri?m=\(number)" : "event",
            body: number % 2 == 0 ? Data((0...255).map { UInt8(($0 + number) & 0xFF) }) : nil,
            createdAt: Date(timeIntervalSince1970: 1_700_000_000.123_456 + Double(number)), attempts: attempts,
            label: "label \(number) — ✓", owner: number % 2 == 0 ? "u-\(number)" : nil)
    }

    private func journal(_ directory: URL, slot: Int = 0) -> String { directory.path + "/journal-\(slot).log" }

    private func bytes(_ path: String) -> [UInt8] { FileManager.default.contents(atPath: path).map(Array.init) ?? [] }

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    private func write(_ bytes: [UInt8], to path: String) {
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    }

    /// A store opened on the first slot, what it reported and what it read. A child process
    /// that another test forks at the instant a store of this process closes shares the closed
    /// store's lock until it runs its program, so a store opened in that instant rightly takes
    /// the next slot; it is closed, its journal removed (or put back as the first slot's, when
    /// it adopted that one), and the first slot tried again.
    private func openOnFirstSlot(_ directory: URL) throws -> (FileDeliveryStore, Warnings, [DeliveryRecord]) {
        for _ in 0..<1_000 {
            let warnings = Warnings()
            let store = store(directory, warnings)
            let records = try store.open()
            if store.ownJournalPath == journal(directory) { return (store, warnings, records) }
            let slot = store.ownJournalPath
            store.close()
            if let slot {
                // The child may have let go before this store looked for orphans: then it adopted
                // the first slot's journal, which goes back where the test left it.
                if !exists(journal(directory)) {
                    try? FileManager.default.moveItem(atPath: slot, toPath: journal(directory))
                }
                try? FileManager.default.removeItem(atPath: slot)
                try? FileManager.default.removeItem(atPath: slot.replacingOccurrences(of: ".log", with: ".lock"))
            }
        }
        Issue.record("the first slot stayed taken")
        return (store(directory), Warnings(), [])
    }

    /// Writes three records with one append each and returns them with the byte offset at
    /// which each one's frame starts.
    private func threeRecords(in directory: URL) throws -> ([DeliveryRecord], [Int]) {
        let store = store(directory)
        _ = try store.open()
        var records: [DeliveryRecord] = []
        var offsets: [Int] = []
        // Counted from the frames: the file holds zeros written ahead while the store is open.
        var offset = DeliveryJournal.header.count
        for number in 0..<3 {
            offsets.append(offset)
            records.append(record(number))
            try store.append([records[number]])
            offset += DeliveryJournal.frame(.add([records[number]])).count
        }
        store.close()
        return (records, offsets)
    }

    // MARK: - Format

    @Test func crc32MatchesTheStandardCheckValue() {
        #expect(Checksum.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(Checksum.crc32([UInt8]()) == 0)
    }

    /// Eight bytes at a time and the bytes left over give the CRC a bit at a time gives, at
    /// every length and every alignment of the bytes in memory.
    @Test func crc32EightBytesAtATimeIsTheBitwiseCRC() {
        func bitwise(_ bytes: ArraySlice<UInt8>) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            return crc ^ 0xFFFF_FFFF
        }
        var generator = SplitMix64(seed: 0x5EED)
        let bytes = (0..<4_200).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        for start in 0..<8 {
            for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1_000, 4_096 + 3] {
                let slice = bytes[start..<(start + length)]
                #expect(Checksum.crc32(slice) == bitwise(slice), "at \(start), \(length) bytes")
                #expect(Checksum.crc32(AnySequence(slice)) == bitwise(slice), "not contiguous: \(length) bytes")
            }
        }
    }

    @Test func xxh64MatchesTheReferenceValues() {
        let checksum = { (bytes: [UInt8]) in bytes.withUnsafeBytes(Checksum.xxh64) }
        #expect(checksum([]) == 0xEF46_DB37_51D8_E999)
        #expect(checksum(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(checksum(Array("Nobody inspects the spammish repetition".utf8)) == 0xFBCE_A83C_8A37_8BF1)
        // Many 32-byte stripes: every path of the loop.
        #expect(checksum((0..<768).map { UInt8($0 % 256) }) == 0x8E03_C838_C596_036F)
    }

    @Test func computedFrameSizeMatchesTheEncodedFrame() throws {
        for number in 0..<6 {
            let record = record(number, attempts: number)
            let frame = DeliveryJournal.frame(.add([record]))
            #expect(DeliveryJournal.framedBytes(of: record) == frame.count)
            let decoded = try DeliveryJournal.decode(frame[DeliveryJournal.frameHeaderBytes...])
            #expect(decoded == .add([record]))
        }
    }

    // MARK: - Round trip

    // covers: DL5
    @Test func recordsAttemptsAndRemovalsSurviveReopening() throws {
        try withDirectory { directory in
            let first = store(directory)
            #expect(try first.open().isEmpty)
            let records = (0..<5).map { record($0) }
            try first.append(Array(records[0..<3]))
            try first.append(Array(records[3...]))
            try first.append([records[0]])  // already kept: ignored
            try first.updateAttempts(of: records[1].id, to: 3)
            try first.updateAttempts(of: UUID(), to: 1)  // unknown: ignored
            try first.remove([records[2].id, UUID()])
            first.close()

            var expected = records
            expected[1].attempts = 3
            expected.remove(at: 2)
            let second = store(directory)
            let reopened = try second.open()
            #expect(reopened == expected)
            // Bytes and dates come back exactly, not merely equal after rounding.
            for (got, want) in zip(reopened, expected) {
                #expect(got.body == want.body)
                #expect(got.createdAt.timeIntervalSinceReferenceDate == want.createdAt.timeIntervalSinceReferenceDate)
            }
            try second.removeAll()
            second.close()

            let third = store(directory)
            #expect(try third.open().isEmpty)
            try third.append([records[4]])
            third.close()
            let fourth = store(directory)
            #expect(try fourth.open() == [records[4]])
            fourth.close()
        }
    }

    /// A removal is in the file as soon as `remove` returns, so a process killed then keeps it
    /// (the copy below is the file as the next process would read it), but it is flushed only
    /// by `sync()` or by the next write that flushes: removals share one flush.
    // covers: DL5
    @Test func removalsAreInTheFileAtOnceAndShareTheNextFlush() throws {
        try withDirectory { directory in
            // On the first slot: the journal copied below is that slot's.
            let (store, _, opened) = try openOnFirstSlot(directory)
            #expect(opened.isEmpty)
            let records = (0..<4).map { record($0) }
            try store.append(Array(records[0..<3]))
            #expect(store.flushCount == 1)
            try store.remove([records[0].id])
            try store.remove([records[1].id])
            #expect(store.flushCount == 1)

            let copy = URL(fileURLWithPath: directory.path + "-copy", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: copy) }
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: journal(directory), toPath: journal(copy))
            let next = self.store(copy)
            #expect(try next.open() == [records[2]])
            next.close()

            try store.sync()
            #expect(store.flushCount == 2)
            try store.sync()  // nothing left to flush
            #expect(store.flushCount == 2)
            try store.remove([records[2].id])
            try store.append([records[3]])  // its flush carries the removal before it
            #expect(store.flushCount == 3)
            try store.sync()
            #expect(store.flushCount == 3)
            // A write with nothing to write still flushes the removals before it.
            try store.remove([records[3].id])
            try store.append([])
            #expect(store.flushCount == 4)
            try store.updateAttempts(of: records[3].id, to: 2)  // gone: nothing to write or flush
            try store.removeAll()  // empty already: likewise
            #expect(store.flushCount == 4)
            store.close()
            let (reopened, _, read) = try openOnFirstSlot(directory)
            #expect(read.isEmpty)
            reopened.close()
        }
    }

    /// A flush that fails while removals wait for it may mean the kernel dropped their pages
    /// (it reports a lost write once): the journal is rewritten whole from its records, so no
    /// hole can hide the frames after it. A sync that meets it reports the repair and
    /// succeeds; a write that meets it fails, and the journal keeps everything before it.
    // covers: DL5
    @Test func aFailedFlushOfUnflushedRemovalsRewritesTheJournalFromItsRecords() throws {
        try withDirectory { directory in
            let (store, warnings, read) = try openOnFirstSlot(directory)
            #expect(read.isEmpty)
            let records = (0..<4).map { record($0) }
            try store.append(Array(records[0..<3]))
            try store.remove([records[0].id])
            store.failNextFlushes(1)
            try store.sync()
            #expect(warnings.all.contains { $0.contains("could not be flushed") && $0.contains("rewritten whole") })
            let rewritten = try #require(store.ownJournalPath.map(bytes))
            let expected =
                DeliveryJournal.header + [records[1], records[2]].flatMap { DeliveryJournal.frame(.add([$0])) }
            #expect(rewritten.starts(with: expected), "the journal holds its records")
            #expect(rewritten.dropFirst(expected.count).allSatisfy { $0 == 0 }, "and no more: zeros after them")

            try store.remove([records[1].id])
            store.failNextFlushes(1)
            #expect(throws: DeliveryStoreError.self) { try store.append([records[3]]) }
            #expect(warnings.all.filter { $0.contains("rewritten whole") }.count == 2)
            store.close()
            let (reopened, _, kept) = try openOnFirstSlot(directory)
            #expect(kept == [records[2]])
            reopened.close()
        }
    }

    /// A compaction right after a removal written without its flush rewrites the journal
    /// whole, flushed: the removal is durable with it, and nothing is left to flush.
    // covers: DL5
    @Test func aCompactionAfterUnflushedRemovalsLeavesNothingToFlush() throws {
        try withDirectory(inMemory: true) { directory in
            let (store, _, read) = try openOnFirstSlot(directory)
            #expect(read.isEmpty)
            let kept = record(0)
            try store.append([kept])
            let path = try #require(store.ownJournalPath)
            func size() -> Int64 {
                var info = stat()
                return stat(path, &info) == 0 ? Int64(info.st_size) : -1
            }
            // Each cycle writes more than 64 bytes, so the slack runs out within this many.
            let cycles = Int(FileDeliveryStore.compactionSlackBytes) / 64
            var compacted = false
            for number in 1...cycles where !compacted {
                let passing = record(number)
                try store.append([passing])
                let sizeBefore = size()
                try store.remove([passing.id])
                compacted = size() < sizeBefore
            }
            #expect(compacted, "the journal was compacted")
            let flushes = store.flushCount
            try store.sync()
            #expect(store.flushCount == flushes, "the compaction flushed the removal")
            store.close()
            let (reopened, _, records) = try openOnFirstSlot(directory)
            #expect(records == [kept])
            reopened.close()
        }
    }

    @Test func openCreatesAPrivateDirectoryAndOneJournal() throws {
        try withDirectory { directory in
            let store = store(directory.appendingPathComponent("outbox"))
            _ = try store.open()
            defer { store.close() }
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.path + "/outbox")
            #expect((attributes[.posixPermissions] as? Int) == 0o700)
            #expect(store.ownJournalPath == directory.path + "/outbox/journal-0.log")
            let journal = try FileManager.default.attributesOfItem(atPath: directory.path + "/outbox/journal-0.log")
            #expect((journal[.posixPermissions] as? Int) == 0o600)
            #expect(
                bytes(directory.path + "/outbox/journal-0.log")
                    == Array("SAOUTBOX".utf8) + [1, 0]
                    + [UInt8](repeating: 0, count: FileDeliveryStore.writtenAheadBytes))
        }
    }

    @Test func defaultLocationIsTheOutboxNextToTheIdentity() {
        #expect(
            FileDeliveryStore.defaultLocation(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]).path
                == "/s/shopping-assistant/outbox")
        #expect(
            FileDeliveryStore.defaultLocation(environment: ["HOME": "/h"]).path
                == "/h/.local/state/shopping-assistant/outbox")
    }

    // MARK: - Damage

    // covers: DL5
    // A call let through the session gate writes its new bytes under the id it was held as:
    // the store keeps the new record in the old one's place, and a crash that tears that write
    // at any byte keeps the held bytes, never both.
    // covers: DL5, B8
    @Test func aRecordAppendedAgainReplacesItsBytesInPlaceAndATornReplacementKeepsTheOld() throws {
        try withDirectory { directory in
            let (first, held, last) = (record(0), record(2), record(4))
            let store = store(directory)
            _ = try store.open()
            try store.append([first, held, last])
            let before = DeliveryJournal.header.count + DeliveryJournal.frame(.add([first, held, last])).count
            let released = DeliveryRecord(
                id: held.id, kind: held.kind, target: held.target, body: Data(#"{"user":{"ses":"s-1"}}"#.utf8),
                createdAt: held.createdAt, label: held.label, owner: held.owner)
            try store.append([released])
            try store.append([released])  // the same bytes again write nothing
            store.close()
            let whole = bytes(journal(directory))
            let (reopened, _, reread) = try openOnFirstSlot(directory)
            #expect(reread == [first, released, last])
            reopened.close()
            for cut in before..<whole.count {
                write(Array(whole[..<cut]), to: journal(directory))
                let (torn, _, opened) = try openOnFirstSlot(directory)
                #expect(opened == [first, held, last], "cut at \(cut)")
                torn.close()
            }
        }
    }

    // covers: DL5
    @Test func aTornLastRecordIsDroppedAtEveryCutWithOrWithoutZerosAfterItAndLaterAppendsSurvive() throws {
        try withDirectory { directory in
            let (records, offsets) = try threeRecords(in: directory)
            let whole = bytes(journal(directory))
            let added = record(9)
            // A kill during an append leaves the frame's first bytes; one during a write into
            // the zeros written ahead leaves them followed by those zeros.
            let zeros = [UInt8](repeating: 0, count: FileDeliveryStore.writtenAheadBytes)
            for cut in (offsets[2] + 1)..<whole.count {
                for after in [[], zeros] {
                    write(Array(whole[..<cut]) + after, to: journal(directory))
                    let (store, warnings, opened) = try openOnFirstSlot(directory)
                    #expect(opened == Array(records[0..<2]), "cut at \(cut)")
                    #expect(warnings.all.count == 1, "cut at \(cut)")
                    #expect(warnings.all.first?.contains("cut short at byte offset \(offsets[2])") == true)
                    #expect(!exists(journal(directory) + ".corrupt"), "cut at \(cut)")
                    #expect(bytes(journal(directory)).count == offsets[2], "truncated to the last good record")
                    try store.append([added])
                    store.close()

                    let (reopened, clean, reread) = try openOnFirstSlot(directory)
                    #expect(reread == Array(records[0..<2]) + [added], "cut at \(cut)")
                    #expect(clean.all.isEmpty)
                    reopened.close()
                }
            }
        }
    }

    // covers: DL5
    @Test func zerosAfterTheLastRecordAreTheJournalsEndAndTheNextRecordGoesBeforeThem() throws {
        try withDirectory { directory in
            let (records, offsets) = try threeRecords(in: directory)
            let whole = bytes(journal(directory))
            write(whole + [UInt8](repeating: 0, count: 4096), to: journal(directory))
            let warnings = Warnings()
            let store = store(directory, warnings)
            #expect(try store.open() == records)
            #expect(warnings.all.isEmpty, "zeros are what a store writes ahead, not damage")
            #expect(!exists(journal(directory) + ".corrupt"))
            let added = record(7)
            try store.append([added])
            #expect(Array(bytes(journal(directory))[..<whole.count]) == whole)
            store.close()
            #expect(bytes(journal(directory)).count == whole.count + DeliveryJournal.frame(.add([added])).count)
            #expect(offsets[0] == DeliveryJournal.header.count)

            let (reopened, clean, reread) = try openOnFirstSlot(directory)
            #expect(reread == records + [added])
            #expect(clean.all.isEmpty)
            reopened.close()
        }
    }

    // covers: DL5
    @Test func framesAreWrittenIntoZerosWrittenAheadAndAJournalAtRestEndsAtItsLastFrame() throws {
        try withDirectory { directory in
            let (store, _, _) = try openOnFirstSlot(directory)
            let ahead = FileDeliveryStore.writtenAheadBytes
            #expect(bytes(journal(directory)).count == DeliveryJournal.header.count + ahead, "created with zeros ahead")
            let first = record(0)
            try store.append([first])
            #expect(bytes(journal(directory)).count == DeliveryJournal.header.count + ahead, "written into them")
            let small = record(1)
            let large = DeliveryRecord(
                id: UUID(), kind: .event, target: "event", body: Data(repeating: 7, count: ahead),
                createdAt: small.createdAt, label: small.label, owner: small.owner)
            try store.append([large])
            let used =
                DeliveryJournal.header.count + DeliveryJournal.frame(.add([first])).count
                + DeliveryJournal.frame(.add([large])).count
            #expect(bytes(journal(directory)).count == used + ahead, "grown by the frame and a step of zeros")
            store.close()
            #expect(bytes(journal(directory)).count == used, "at rest without the zeros")

            let (reopened, warnings, reread) = try openOnFirstSlot(directory)
            #expect(reread == [first, large])
            #expect(warnings.all.isEmpty)
            reopened.close()
        }
    }

    /// Everything delivered, the journal at rest is its header alone: the next start reads no
    /// history, however much the slack before a compaction let it hold, and a close whose
    /// flush fails leaves the same.
    @Test func aJournalClosedWithNothingLiveIsItsHeaderAlone() throws {
        try withDirectory { directory in
            let (store, _, _) = try openOnFirstSlot(directory)
            let records = (0..<50).map { record($0) }
            for record in records { try store.append([record]) }
            try store.remove(records.map(\.id))
            store.close()
            let atRest = bytes(journal(directory))
            #expect(atRest.count == DeliveryJournal.header.count, "\(atRest.count) bytes at rest")
            #expect(atRest.starts(with: DeliveryJournal.header))

            let (reopened, warnings, reread) = try openOnFirstSlot(directory)
            #expect(reread.isEmpty)
            #expect(warnings.all.isEmpty)
            let kept = record(50)
            try reopened.append([kept])
            reopened.close()
            let written = DeliveryJournal.header + DeliveryJournal.frame(.add([kept]))
            #expect(bytes(journal(directory)).count == written.count, "the kept record's frame after the header")

            // The close's flush of the last removal fails: the journal is rewritten, then cut.
            let (last, _, again) = try openOnFirstSlot(directory)
            #expect(again == [kept])
            try last.remove([kept.id])
            last.failNextFlushes(1)
            last.close()
            #expect(bytes(journal(directory)).count == DeliveryJournal.header.count)
            let (emptied, _, none) = try openOnFirstSlot(directory)
            #expect(none.isEmpty)
            emptied.close()
        }
    }

    // covers: DL5
    @Test func aFlippedByteInTheMiddleKeepsTheRecordsBeforeItAndSetsTheFileAside() throws {
        try withDirectory { directory in
            let (records, offsets) = try threeRecords(in: directory)
            var damaged = bytes(journal(directory))
            damaged[offsets[1] + 20] ^= 0x40
            write(damaged, to: journal(directory))

            let warnings = Warnings()
            let store = store(directory, warnings)
            #expect(try store.open() == [records[0]])
            #expect(warnings.all.count == 1)
            #expect(warnings.all.first?.contains("byte offset \(offsets[1])") == true)
            #expect(bytes(journal(directory) + ".corrupt") == damaged)
            let added = record(7)
            try store.append([added])
            store.close()

            let clean = Warnings()
            let reopened = self.store(directory, clean)
            #expect(try reopened.open() == [records[0], added])
            #expect(clean.all.isEmpty)
            reopened.close()
        }
    }

    @Test func aRecordThatDecodesBadlyDespiteItsChecksumIsSkippedAlone() throws {
        try withDirectory { directory in
            let (records, offsets) = try threeRecords(in: directory)
            let whole = bytes(journal(directory))
            let unknown: [UInt8] = [99, 1, 2, 3]
            let crc = Checksum.crc32(unknown)
            let frame =
                [UInt8(unknown.count), 0, 0, 0] + (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) } + unknown
            write(Array(whole[..<offsets[1]]) + frame + Array(whole[offsets[1]...]), to: journal(directory))

            let warnings = Warnings()
            let store = store(directory, warnings)
            #expect(try store.open() == records)
            #expect(warnings.all.count == 1)
            #expect(warnings.all.first?.contains("byte offset \(offsets[1])") == true)
            store.close()
        }
    }

    @Test func aForeignOrFutureFileIsSetAsideAndTheQueueStartsEmpty() throws {
        let future = Array("SAOUTBOX".utf8) + [2, 0] + [UInt8](repeating: 7, count: 40)
        for contents in [Array("not an outbox journal at all".utf8), future] {
            try withDirectory { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                write(contents, to: journal(directory))
                let warnings = Warnings()
                let store = store(directory, warnings)
                #expect(try store.open().isEmpty)
                #expect(warnings.all.count == 1)
                #expect(bytes(journal(directory) + ".corrupt") == contents)
                let added = record(1)
                try store.append([added])
                store.close()
                let reopened = self.store(directory)
                #expect(try reopened.open() == [added])
                reopened.close()
            }
        }
    }

    @Test func warningsFromOpeningReachAHandlerSetLater() throws {
        try withDirectory { directory in
            let (_, offsets) = try threeRecords(in: directory)
            write(Array(bytes(journal(directory))[..<(offsets[2] + 3)]), to: journal(directory))
            let store = FileDeliveryStore(directory: directory)
            _ = try store.open()
            let warnings = Warnings()
            store.setWarningHandler(warnings.handler())
            #expect(warnings.all.count == 1)
            store.close()
        }
    }

    // MARK: - Owners

    // covers: DL5
    @Test func twoOpenStoresWriteSeparateJournalsAndNeitherSeesTheOther() throws {
        try withDirectory { directory in
            let first = store(directory)
            let second = store(directory)
            _ = try first.open()
            try first.append([record(0)])
            #expect(try second.open().isEmpty)
            try second.append([record(1)])
            #expect(first.ownJournalPath == journal(directory, slot: 0))
            #expect(second.ownJournalPath == journal(directory, slot: 1))
            #expect(try first.adoptOrphans().isEmpty)
            #expect(try second.adoptOrphans().isEmpty)
            first.close()
            second.close()
        }
    }

    // covers: DL5
    @Test func aClosedStoresRecordsAreAdoptedExactlyOnce() throws {
        try withDirectory { directory in
            let stores = (0..<3).map { _ in store(directory) }
            var written: [[DeliveryRecord]] = []
            for (number, store) in stores.enumerated() {
                _ = try store.open()
                written.append([record(2 * number), record(2 * number + 1)])
                try store.append(written[number])
            }
            stores[1].close()
            stores[2].close()

            // Takes the freed slot 1 and adopts slot 2; slot 0's owner is alive and keeps its own.
            let third = store(directory)
            #expect(try third.open() == written[1] + written[2])
            #expect(third.ownJournalPath == journal(directory, slot: 1))
            #expect(!exists(journal(directory, slot: 2)))
            #expect(try third.adoptOrphans().isEmpty)
            third.close()

            let fourth = store(directory)
            #expect(try fourth.open() == written[1] + written[2])
            #expect(try fourth.adoptOrphans().isEmpty)

            // A running store adopts a neighbour that closes later, once.
            stores[0].close()
            #expect(try fourth.adoptOrphans() == written[0])
            #expect(try fourth.adoptOrphans().isEmpty)
            #expect(!exists(journal(directory, slot: 0)))
            fourth.close()

            let fifth = store(directory)
            #expect(try fifth.open() == Array(written.joined()))
            fifth.close()
        }
    }

    // covers: DL5
    @Test func aRecordLeftInTwoJournalsByACrashIsKeptOnce() throws {
        try withDirectory { directory in
            let (records, _) = try threeRecords(in: directory)
            // A crash after adopting slot 1 into slot 0 but before deleting it.
            write(bytes(journal(directory)), to: journal(directory, slot: 1))
            let store = store(directory)
            #expect(try store.open() == records)
            #expect(!exists(journal(directory, slot: 1)))
            store.close()
            let reopened = self.store(directory)
            #expect(try reopened.open() == records)
            reopened.close()
        }
    }

    // covers: DL5
    @Test func anOrphanWithATornOrDamagedRecordGivesUpOnlyThatRecord() throws {
        for damagesTheMiddle in [false, true] {
            try withDirectory { directory in
                let (records, offsets) = try threeRecords(in: directory)
                var damaged = bytes(journal(directory))
                if damagesTheMiddle {
                    damaged[offsets[1] + 20] ^= 0x40
                } else {
                    damaged.removeLast(5)
                }
                #expect(unlink(journal(directory)) == 0)
                write(damaged, to: journal(directory, slot: 1))

                // Takes the empty slot 0 and adopts slot 1, whose owner is gone.
                let warnings = Warnings()
                let store = store(directory, warnings)
                #expect(try store.open() == Array(records[0..<(damagesTheMiddle ? 1 : 2)]))
                #expect(warnings.all.count == 1)
                #expect(!exists(journal(directory, slot: 1)))
                #expect(exists(journal(directory, slot: 1) + ".corrupt") == damagesTheMiddle)
                store.close()
            }
        }
    }

    // covers: DL5
    @Test func anOrphanLeftWithItsZerosAheadIsAdoptedWholeOrWithoutItsTornLastRecord() throws {
        for tornBeforeTheZeros in [false, true] {
            try withDirectory { directory in
                let (records, offsets) = try threeRecords(in: directory)
                let whole = bytes(journal(directory))
                // What a killed owner leaves: its frames, then the zeros it wrote ahead of them.
                let frames = tornBeforeTheZeros ? Array(whole[..<(whole.count - 5)]) : whole
                let orphan = frames + [UInt8](repeating: 0, count: FileDeliveryStore.writtenAheadBytes)
                #expect(unlink(journal(directory)) == 0)
                write(orphan, to: journal(directory, slot: 1))

                let warnings = Warnings()
                let store = store(directory, warnings)
                #expect(try store.open() == Array(records[0..<(tornBeforeTheZeros ? 2 : 3)]))
                #expect(warnings.all.count == (tornBeforeTheZeros ? 1 : 0), "\(warnings.all)")
                if tornBeforeTheZeros {
                    #expect(warnings.all.first?.contains("cut short at byte offset \(offsets[2])") == true)
                }
                #expect(!exists(journal(directory, slot: 1)))
                #expect(!exists(journal(directory, slot: 1) + ".corrupt"))
                store.close()
            }
        }
    }

    // MARK: - Compaction

    @Test func theJournalStaysSmallThroughTenThousandAddAndRemoveCycles() throws {
        try withDirectory(inMemory: true) { directory in
            let store = store(directory)
            _ = try store.open()
            let kept = record(0)
            try store.append([kept])
            // Twice the live record and the slack before a compaction, and the zeros written ahead
            // of the frames with the frame that grew the file into them.
            let bound =
                2 * (10 + DeliveryJournal.framedBytes(of: kept)) + Int(FileDeliveryStore.compactionSlackBytes) + 1024
                + FileDeliveryStore.writtenAheadBytes + DeliveryJournal.framedBytes(of: record(1))
            for cycle in 1...10_000 {
                let passing = record(cycle)
                try store.append([passing])
                try store.remove([passing.id])
                var info = stat()
                #expect(stat(journal(directory), &info) == 0)
                if info.st_size > bound {
                    Issue.record("\(info.st_size) bytes after \(cycle) cycles, more than \(bound)")
                    break
                }
            }
            store.close()
            let reopened = self.store(directory)
            #expect(try reopened.open() == [kept])
            reopened.close()
        }
    }

    // covers: DL5
    @Test func appendsFromManyThreadsAreAllKept() throws {
        try withDirectory(inMemory: true) { directory in
            let store = store(directory)
            _ = try store.open()
            let failures = Locked(0)
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for number in 0..<50 {
                    do {
                        let added = record(1000 * thread + number)
                        try store.append([added])
                        if number % 2 == 0 { try store.remove([added.id]) }
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
            #expect(failures.withLock { $0 } == 0)
            store.close()
            let reopened = self.store(directory)
            #expect(try reopened.open().count == 8 * 25)
            reopened.close()
        }
    }

    // MARK: - Lifecycle

    @Test func aStoreThrowsBeforeOpeningAndAfterClosing() throws {
        try withDirectory { directory in
            let store = store(directory)
            #expect(throws: DeliveryStoreError.self) { try store.append([record(0)]) }
            _ = try store.open()
            #expect(throws: DeliveryStoreError.self) { try store.open() }
            store.close()
            #expect(throws: DeliveryStoreError.self) { try store.open() }
            #expect(throws: DeliveryStoreError.self) { try store.append([record(0)]) }
            #expect(throws: DeliveryStoreError.self) { try store.updateAttempts(of: UUID(), to: 1) }
            #expect(throws: DeliveryStoreError.self) { try store.remove([UUID()]) }
            #expect(throws: DeliveryStoreError.self) { try store.removeAll() }
            #expect(throws: DeliveryStoreError.self) { try store.adoptOrphans() }
            store.close()
        }
    }
}
