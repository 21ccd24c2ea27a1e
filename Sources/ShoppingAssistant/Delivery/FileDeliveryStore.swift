import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps the outbox in journals in a directory, by default
/// `$XDG_STATE_HOME/shopping-assistant/outbox` (or `~/.local/state/…`), so that accepted
/// requests outlive a crash, a kill or a power cut (DL2, DL5).
///
/// Each open store owns one journal, `journal-<n>.log`, for as long as it holds the `flock`
/// on `journal-<n>.lock`: two engines in one process or in two processes never write one
/// file, and the kernel lets go of the lock when a process dies, however it dies. A store
/// that opens adopts the journals whose lock it can take, since their owners are gone: it
/// copies their records into its own journal, durably, and only then deletes them. A crash
/// in between leaves a record in two journals, which is why records are recognised by id
/// and kept once.
///
/// Every change is one frame written after the last with one `write` and flushed before the
/// method returns, but a removal, which the next flush carries (`sync()`): see
/// `DeliveryJournal` for the format. The file grows in steps, with zeros
/// written ahead of its frames, so that most flushes are `fdatasync`s of bytes that change no
/// size: they need no metadata commit, which an append's `fsync` waits for. What a crash can do
/// to a journal (a torn last frame) is repaired on opening, and what it cannot (damage in the
/// middle, a foreign or future file) is set aside as `<name>.corrupt` for inspection; both are
/// reported through the warning handler and never stop the engine. A journal that grows past
/// twice what its live records need is rewritten with only them.
///
/// Methods block on the disk and are meant to be called off the engine's actor; one lock
/// guards all state, so calls from several threads are safe.
public final class FileDeliveryStore: DeliveryStore {
    /// Where the journals live; created (mode 0700) by `open()`.
    public let directory: URL
    private let state = Locked(State())

    /// Slots tried before `open()` gives up: far more engines than one user runs at once, and
    /// few enough that a directory full of stuck locks fails quickly.
    static let maximumSlots = 256
    /// Bytes a journal may hold beyond twice its live records before it is compacted. A
    /// compaction costs two flushes and a rename, which every event arriving meanwhile waits
    /// for, so a short queue is rewritten about once per thousand events, not once per few dozen;
    /// reading a journal this size back at start costs milliseconds.
    static let compactionSlackBytes: Int64 = 1024 * 1024
    /// Zeros written ahead of the last frame. Overwriting bytes already on disk changes no
    /// size, so a frame's flush is a data flush without a metadata commit; the file grows in
    /// steps of this size, each paying one full `fsync`.
    static let writtenAheadBytes = 64 * 1024

    /// Nothing is read, created or locked until `open()`, so creating a store is free and
    /// cannot fail.
    public init(directory: URL) {
        self.directory = directory
        path = directory.path
    }

    deinit { close() }

    /// `$XDG_STATE_HOME/shopping-assistant/outbox`, else under `~/.local/state`: per user, next
    /// to `FileIdentityStore`'s `identity.json`, so two users of one machine never share a queue.
    public static func defaultLocation(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty {
            base = URL(fileURLWithPath: state, isDirectory: true)
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            base = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
                ".local/state", isDirectory: true)
        }
        return base.appendingPathComponent("shopping-assistant/outbox", isDirectory: true)
    }

    // MARK: - State

    /// Boxed so that the handler is never a bare closure in `Locked` (see `Locked`).
    private struct WarningHandler {
        let deliver: @Sendable (String) -> Void
    }

    /// The journal an open store owns.
    private struct Journal {
        let slot: Int
        /// Holds the slot's `flock` until the store closes.
        let lockFD: Int32
        /// Written at `size`; `-1` after a compaction could not reopen it, until a write does.
        var fd: Int32
        /// Where the next frame goes: the end of the last good one.
        var size: Int64
        /// Where the file ends: the bytes from `size` to here are zeros written ahead, so that a
        /// frame written into them changes no file size and its flush needs no metadata.
        var allocated: Int64
        /// Set by a rewrite: the next frame is flushed with `fsync`, whose journal commit also
        /// carries the rename, in case the directory's own flush failed.
        var renamePending = false
        /// Set by a removal written without its flush (`sync`): the next flush carries it.
        var removalsUnflushed = false
        /// Set when a flush failed with removals unflushed and the rewrite that repairs that
        /// failed too: the kernel may have dropped their pages, leaving a hole that would hide
        /// every later frame, so the next change rewrites the journal from its records first.
        var needsRewrite = false
        /// Flushes of the journal so far, for tests that removals share one.
        var flushes = 0
        /// Flushes that are to fail as a lost write makes them fail, for tests of the repair.
        var flushesToFail = 0
        /// Cleared when the disk had no room for the zeros: frames are then appended, each
        /// growing the file by itself, until a rewrite finds room for them again.
        var writesAhead = true
        var live: DeliveryJournal.LiveRecords
        /// Set when a failed write could not be undone, so the next write undoes it first:
        /// a frame after leftover bytes would read as damage in the middle.
        var hasStrayTail = false
        /// After a failed compaction, the size it is tried again at, so a full disk does not
        /// cost a rewrite and a warning on every change.
        var nextCompactionSize: Int64 = 0
    }

    private struct State {
        var journal: Journal?
        var isClosed = false
        var handler: WarningHandler?
        /// Warnings from before a handler was set, delivered when one is.
        var pending: [String] = []
    }

    // MARK: - DeliveryStore

    /// Delivers the warnings of an `open()` that happened before it was set, then each new one.
    public func setWarningHandler(_ handler: @escaping @Sendable (String) -> Void) {
        let pending = state.withLock { state -> [String] in
            state.handler = WarningHandler(deliver: handler)
            defer { state.pending = [] }
            return state.pending
        }
        for warning in pending { handler(warning) }
    }

    /// Takes a journal slot, repairs its journal, adopts the journals of engines that are gone,
    /// and returns every record, oldest first (this store's own keep their journal order).
    public func open() throws -> [DeliveryRecord] {
        var warnings: [String] = []
        defer { deliver(warnings) }
        return try state.withLock { state in
            guard !state.isClosed else { throw closedError }
            guard state.journal == nil else { throw DeliveryStoreError(reason: "the outbox \(path) is already open") }
            do {
                try FileManager.default.createDirectory(
                    atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DeliveryStoreError(reason: "the outbox directory \(path) cannot be created: \(error)")
            }
            let (slot, lockFD) = try takeSlot()
            var journal: Journal
            do {
                journal = try loadOwnJournal(slot: slot, lockFD: lockFD, warnings: &warnings)
            } catch {
                POSIX.release(lockFD)
                throw error
            }
            let own = journal.live.ordered
            let adopted = adoptOrphans(into: &journal, warnings: &warnings)
            compactIfNeeded(&journal, warnings: &warnings)
            state.journal = journal
            return Self.mergeOldestFirst(own, adopted)
        }
    }

    /// Adopts the journals whose owners have gone since `open()` (an engine calls it when a
    /// drain starts, so a crashed neighbour's queue is not left waiting for the next start)
    /// and returns the records that were not already here, oldest first.
    public func adoptOrphans() throws -> [DeliveryRecord] {
        try withJournal { journal, warnings in adoptOrphans(into: &journal, warnings: &warnings) }
    }

    /// Appends the records as one frame, flushed before it returns with the removals written
    /// before it: after a crash all of them are kept or none. A record whose id is kept
    /// replaces it, in that same frame.
    public func append(_ records: [DeliveryRecord]) throws {
        try withJournal { journal, warnings in
            var seen = Set<UUID>()
            let fresh = records.filter { journal.live[$0.id] != $0 && seen.insert($0.id).inserted }
            guard !fresh.isEmpty else { return try flushRemovals(&journal, warnings: &warnings) }
            try commit(.add(fresh), to: &journal, warnings: &warnings)
        }
    }

    /// Keeps the new count durably, with the removals written before it; an id not kept here
    /// is ignored, as the record is gone.
    public func updateAttempts(of id: UUID, to attempts: Int) throws {
        try withJournal { journal, warnings in
            guard let record = journal.live[id], record.attempts != attempts else {
                return try flushRemovals(&journal, warnings: &warnings)
            }
            try commit(.attempts(id, attempts), to: &journal, warnings: &warnings)
        }
    }

    /// Forgets the records; ids not kept here are ignored. The frame is written at once, so a
    /// killed process keeps the removal, and flushed by the next `sync()` or the next change
    /// that flushes: a drain's removals share one flush, and a power cut before it brings a
    /// delivered record back, to be sent again, never loses one.
    public func remove(_ ids: [UUID]) throws {
        try withJournal { journal, warnings in
            var seen = Set<UUID>()
            let known = ids.filter { journal.live.contains($0) && seen.insert($0).inserted }
            guard !known.isEmpty else { return }
            try commit(.remove(known), to: &journal, warnings: &warnings, flushing: false)
        }
    }

    /// Flushes the removals written since the last flush, if any.
    public func sync() throws {
        try withJournal { journal, warnings in try flushRemovals(&journal, warnings: &warnings) }
    }

    /// Forgets every record of this store durably.
    public func removeAll() throws {
        try withJournal { journal, warnings in
            guard journal.live.count > 0 else { return try flushRemovals(&journal, warnings: &warnings) }
            try commit(.clearAll, to: &journal, warnings: &warnings)
        }
    }

    /// Closes the journal and lets go of its lock, so the next engine can take the slot or
    /// adopt its records; later calls throw. The files stay, without the zeros written ahead, and a
    /// journal with nothing live is cut to its header.
    public func close() {
        var warnings: [String] = []
        defer { deliver(warnings) }
        state.withLock { state in
            state.isClosed = true
            // The removals written without a flush are flushed before the lock goes.
            if var open = state.journal {
                do { try flushRemovals(&open, warnings: &warnings) } catch { warnings.append("\(error)") }
                state.journal = open
            }
            release(&state.journal)
        }
    }

    // MARK: - Paths

    /// The directory's path, spelled once: every write names its journal in case it fails.
    private let path: String
    private func journalName(_ slot: Int) -> String { "journal-\(slot).log" }
    private func journalPath(_ slot: Int) -> String { path + "/" + journalName(slot) }
    private func lockPath(_ slot: Int) -> String { path + "/journal-\(slot).lock" }

    /// The journal this store writes, while it is open: for tests and diagnostics.
    var ownJournalPath: String? { state.withLock { $0.journal.map { journalPath($0.slot) } } }

    /// How many times the open journal was flushed: for tests that removals share a flush.
    var flushCount: Int { state.withLock { $0.journal?.flushes ?? 0 } }

    /// Makes the next `count` flushes of the open journal fail with `EIO`, as one does after
    /// the kernel lost a write: for tests of the repair that follows.
    func failNextFlushes(_ count: Int) { state.withLock { $0.journal?.flushesToFail = count } }

    private var closedError: DeliveryStoreError { DeliveryStoreError(reason: "the outbox \(path) is closed") }

    // MARK: - Opening

    /// The first slot whose lock is free. Lock files are never deleted: a process could
    /// still lock a deleted one's inode while another creates and locks a new file of the
    /// same name, and both would think they own the slot.
    private func takeSlot() throws -> (slot: Int, lockFD: Int32) {
        for slot in 0..<Self.maximumSlots {
            switch POSIX.tryLock(lockPath(slot)) {
            case .locked(let fd): return (slot, fd)
            case .busy: continue
            case .failed(let reason):
                throw DeliveryStoreError(reason: "the outbox lock \(lockPath(slot)) \(reason)")
            }
        }
        throw DeliveryStoreError(reason: "all \(Self.maximumSlots) journal slots of the outbox \(path) are in use")
    }

    /// Reads this store's journal (left by an earlier engine in this slot), repairing what a
    /// crash did to it and setting aside what it cannot repair.
    private func loadOwnJournal(slot: Int, lockFD: Int32, warnings: inout [String]) throws -> Journal {
        let file = journalPath(slot)
        removeTemporaryFiles(of: slot)
        let fd = POSIX.openJournal(file)
        guard fd >= 0 else {
            let error = errno
            guard error == ENOENT else {
                throw DeliveryStoreError(reason: "the outbox journal \(file) cannot be opened (errno \(error))")
            }
            return try freshJournal(slot: slot, lockFD: lockFD)
        }
        let contents: DeliveryJournal.Contents
        do {
            contents = try DeliveryJournal.load(fd: fd)
        } catch {
            POSIX.release(fd)
            throw DeliveryStoreError(reason: "the outbox journal \(file) cannot be read: \(error.reason)")
        }
        warnings += skippedWarnings(contents, file: file)
        var journal = Journal(
            slot: slot, lockFD: lockFD, fd: fd, size: contents.validBytes, allocated: contents.fileBytes,
            live: contents.live)
        switch contents.damage {
        case nil:
            return journal
        case .tornHeader:
            POSIX.release(fd)
            return try freshJournal(slot: slot, lockFD: lockFD)
        case .foreign(let reason):
            POSIX.release(fd)
            let moved = moveAside(file)
            warnings.append(
                "the outbox journal \(file) \(reason); the queue starts empty"
                    + (moved ? " (the file was moved to \(file).corrupt)" : ""))
            return try freshJournal(slot: slot, lockFD: lockFD)
        case .tornTail(let offset):
            warnings.append(
                "the outbox journal \(file) ended with a record cut short at byte offset \(offset), as a crash"
                    + " during a write leaves it; it was dropped and the \(contents.live.count) records before it kept")
            journal.allocated = contents.validBytes
            if ftruncate(fd, off_t(contents.validBytes)) == 0, POSIX.flush(fd) == nil { return journal }
            // The stray tail must go before anything is appended; rewriting the file also does it.
            try rewriteOrRelease(&journal)
            return journal
        case .corrupt(let offset, let reason):
            let preserved = preserveAside(file)
            warnings.append(
                "the outbox journal \(file) has \(reason) at byte offset \(offset); the \(contents.live.count)"
                    + " records before it were kept and the rest is lost"
                    + (preserved ? " (the file as it was is in \(file).corrupt)" : ""))
            try rewriteOrRelease(&journal)
            return journal
        }
    }

    /// A repair that fails while opening closes the journal it was repairing: `open()` lets
    /// go of the slot's lock, and the file must not stay open behind it.
    private func rewriteOrRelease(_ journal: inout Journal) throws {
        do {
            try rewrite(&journal)
        } catch {
            if journal.fd >= 0 { POSIX.release(journal.fd) }
            throw error
        }
    }

    /// An empty journal with its header, created atomically so that no reader sees a half header.
    private func freshJournal(slot: Int, lockFD: Int32) throws -> Journal {
        var journal = Journal(
            slot: slot, lockFD: lockFD, fd: -1, size: 0, allocated: 0, live: DeliveryJournal.LiveRecords())
        try rewrite(&journal)
        return journal
    }

    // MARK: - Adopting

    private func adoptOrphans(into journal: inout Journal, warnings: inout [String]) -> [DeliveryRecord] {
        var adopted: [DeliveryRecord] = []
        for slot in journalSlots() where slot != journal.slot {
            adopted += adopt(slot: slot, into: &journal, warnings: &warnings)
        }
        return adopted.enumerated().sorted { ($0.element.createdAt, $0.offset) < ($1.element.createdAt, $1.offset) }
            .map(\.element)
    }

    /// Slots with a journal file, found by name (`journal-<n>.log`, `n` written as the store
    /// writes it, so no file is taken for two slots).
    private func journalSlots() -> [Int] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return names.compactMap { name -> Int? in
            guard name.hasPrefix("journal-"), name.hasSuffix(".log") else { return nil }
            let number = name.dropFirst("journal-".count).dropLast(".log".count)
            guard let slot = Int(number), slot >= 0, String(slot) == number else { return nil }
            return slot
        }.sorted()
    }

    /// Moves the records of `slot`'s journal into `journal` if its owner is gone (its lock is
    /// free), then deletes it; a failure leaves it in place for a later adoption.
    private func adopt(slot: Int, into journal: inout Journal, warnings: inout [String]) -> [DeliveryRecord] {
        let file = journalPath(slot)
        let lockFD: Int32
        switch POSIX.tryLock(lockPath(slot)) {
        case .locked(let fd): lockFD = fd
        case .busy: return []
        case .failed(let reason):
            warnings.append("the outbox journal \(file) was left for later: its lock \(reason)")
            return []
        }
        // Released only once the journal is gone, so no one else adopts it meanwhile.
        defer { POSIX.release(lockFD) }
        removeTemporaryFiles(of: slot)
        let fd = POSIX.openForReading(file)
        guard fd >= 0 else {
            let error = errno
            // Gone already: another store adopted it between the listing and the lock.
            if error != ENOENT { warnings.append("the outbox journal \(file) cannot be opened (errno \(error))") }
            return []
        }
        let contents: DeliveryJournal.Contents
        do {
            contents = try DeliveryJournal.load(fd: fd)
        } catch {
            POSIX.release(fd)
            warnings.append("the outbox journal \(file) cannot be read (\(error.reason)); it was left for later")
            return []
        }
        POSIX.release(fd)
        if case .foreign(let reason) = contents.damage {
            let moved = moveAside(file)
            warnings.append(
                "the outbox journal \(file) \(reason); its records are lost"
                    + (moved ? " (the file was moved to \(file).corrupt)" : ""))
            return []
        }
        let fresh = contents.live.ordered.filter { !journal.live.contains($0.id) }
        do {
            for batch in Self.batches(of: fresh) { try commit(.add(batch), to: &journal, warnings: &warnings) }
        } catch {
            warnings.append("the records of the outbox journal \(file) could not be adopted (\(error)); left for later")
            return []
        }
        warnings += skippedWarnings(contents, file: file)
        switch contents.damage {
        case .corrupt(let offset, let reason):
            let moved = moveAside(file)
            warnings.append(
                "the outbox journal \(file) has \(reason) at byte offset \(offset); the \(contents.live.count)"
                    + " records before it were adopted and the rest is lost"
                    + (moved ? " (the file was moved to \(file).corrupt)" : ""))
        case .tornTail(let offset):
            warnings.append(
                "the outbox journal \(file) ended with a record cut short at byte offset \(offset), as a crash"
                    + " during a write leaves it; the \(contents.live.count) records before it were adopted")
            unlink(file)
        case nil, .tornHeader, .foreign:
            unlink(file)
        }
        // The deletion must be durable before these records can be sent and forgotten here,
        // or a power cut could bring the old journal back and send them twice.
        POSIX.syncDirectory(path)
        return fresh
    }

    /// `records` in groups that each fit in one frame: normally one group.
    private static func batches(of records: [DeliveryRecord]) -> [[DeliveryRecord]] {
        var batches: [[DeliveryRecord]] = []
        var batch: [DeliveryRecord] = []
        var bytes = 0
        for record in records {
            let size = DeliveryJournal.framedBytes(of: record)
            if !batch.isEmpty, bytes + size > DeliveryJournal.maximumPayloadBytes {
                batches.append(batch)
                batch = []
                bytes = 0
            }
            batch.append(record)
            bytes += size
        }
        if !batch.isEmpty { batches.append(batch) }
        return batches
    }

    /// `own` in its order with `adopted` (sorted by age) merged in by age, so each keeps its order.
    private static func mergeOldestFirst(_ own: [DeliveryRecord], _ adopted: [DeliveryRecord]) -> [DeliveryRecord] {
        guard !adopted.isEmpty else { return own }
        var merged: [DeliveryRecord] = []
        merged.reserveCapacity(own.count + adopted.count)
        var next = 0
        for record in own {
            while next < adopted.count, adopted[next].createdAt < record.createdAt {
                merged.append(adopted[next])
                next += 1
            }
            merged.append(record)
        }
        merged += adopted[next...]
        return merged
    }

    // MARK: - Writing

    /// Writes one operation after the last frame with one `write` loop and, unless `flushing`
    /// is off (a removal), one flush, and applies it only once both succeeded. A failure
    /// truncates the file back, so that a frame the caller was told is lost does not come back
    /// after a restart; one that may have cost removals written without a flush rewrites the
    /// journal from its records.
    private func commit(
        _ operation: DeliveryJournal.Operation, to journal: inout Journal, warnings: inout [String],
        flushing: Bool = true
    ) throws {
        let file = journalPath(journal.slot)
        let frame = DeliveryJournal.frame(operation)
        guard frame.count - DeliveryJournal.frameHeaderBytes <= DeliveryJournal.maximumPayloadBytes else {
            throw DeliveryStoreError(reason: "the records are too large for one outbox journal entry")
        }
        if journal.needsRewrite { try repair(&journal) }
        if journal.fd < 0 {
            journal.fd = POSIX.openJournal(file)
            guard journal.fd >= 0 else {
                throw DeliveryStoreError(reason: "the outbox journal \(file) cannot be opened (errno \(errno))")
            }
        }
        if journal.hasStrayTail {
            guard ftruncate(journal.fd, off_t(journal.size)) == 0 else {
                throw DeliveryStoreError(reason: "the outbox journal \(file) cannot be truncated (errno \(errno))")
            }
            journal.hasStrayTail = false
            journal.allocated = journal.size
        }
        let end = journal.size + Int64(frame.count)
        // Past the zeros written ahead, the file grows by a frame and the next zeros in the same
        // write, and that once its flush must carry the new size.
        let grows = end > journal.allocated
        let writesAhead = grows && journal.writesAhead
        var bytes = writesAhead ? frame + [UInt8](repeating: 0, count: Self.writtenAheadBytes) : frame
        // A frame that grows the file is flushed whatever it holds: its size needs the commit.
        let defers = !flushing && !grows
        var failure = POSIX.writeAll(bytes, to: journal.fd, at: journal.size)
        if failure != nil, writesAhead, ftruncate(journal.fd, off_t(journal.size)) == 0 {
            // A disk with room for the frame but not for the zeros ahead still takes the frame;
            // later frames do not fill the disk with zeros again to learn the same. Only after a
            // write that failed: a flush that failed is no matter of room.
            bytes = frame
            failure = POSIX.writeAll(bytes, to: journal.fd, at: journal.size)
            journal.writesAhead = false
        }
        let unflushedBefore = journal.removalsUnflushed
        if failure == nil, !defers { failure = Self.flushAfterWrite(&journal, grown: grows) }
        if let failure {
            // Truncating drops the zeros ahead too; the next write grows the file again.
            journal.hasStrayTail = ftruncate(journal.fd, off_t(journal.size)) != 0 || POSIX.flush(journal.fd) != nil
            journal.allocated = journal.size
            if unflushedBefore { repairLosingNothing(&journal, after: failure, warnings: &warnings) }
            throw DeliveryStoreError(reason: "the outbox journal \(file) could not be written: \(failure)")
        }
        if grows { journal.allocated = journal.size + Int64(bytes.count) }
        journal.size = end
        if defers { journal.removalsUnflushed = true }
        journal.live.apply(operation)
        compactIfNeeded(&journal, warnings: &warnings)
    }

    /// Flushes the removals written without a flush, if any. A flush that fails may have cost
    /// their pages (the kernel reports a lost write once, and may then drop it), leaving a
    /// hole that would hide every frame after it: the journal is rewritten from its records,
    /// which makes the removals durable after all.
    private func flushRemovals(_ journal: inout Journal, warnings: inout [String]) throws {
        if journal.needsRewrite { return try repair(&journal) }
        guard journal.removalsUnflushed, journal.fd >= 0, let failure = Self.flushAfterWrite(&journal) else { return }
        repairLosingNothing(&journal, after: failure, warnings: &warnings)
        if journal.needsRewrite {
            throw DeliveryStoreError(
                reason: "the outbox journal \(journalPath(journal.slot)) could not be flushed: \(failure)")
        }
    }

    /// After a flush failed with removals unflushed: rewrites the journal from its records, or
    /// leaves that to the next change when the rewrite fails too.
    private func repairLosingNothing(_ journal: inout Journal, after failure: String, warnings: inout [String]) {
        do {
            try repair(&journal)
            warnings.append(
                "the outbox journal \(journalPath(journal.slot)) could not be flushed (\(failure)); rewritten whole")
        } catch {
            warnings.append("\(error); it is rewritten before its next change")
        }
    }

    private func repair(_ journal: inout Journal) throws {
        journal.needsRewrite = true
        try rewrite(&journal)
        journal.needsRewrite = false
    }

    /// Flushes what was written: with `fsync` when the file grew or a rename waits for its
    /// commit, else with `fdatasync`, which flushes no metadata. Every frame written before is
    /// then durable, the removals left unflushed among them.
    private static func flushAfterWrite(_ journal: inout Journal, grown: Bool = false) -> String? {
        var failure = grown || journal.renamePending ? POSIX.flush(journal.fd) : POSIX.flushData(journal.fd)
        journal.flushes += 1
        if journal.flushesToFail > 0 {
            journal.flushesToFail -= 1
            failure = failure ?? "errno \(EIO)"
        }
        guard failure == nil else { return failure }
        journal.renamePending = false
        journal.removalsUnflushed = false
        return nil
    }

    /// Rewrites the journal with only its live records once it holds more than twice what
    /// they need plus some slack, so its size follows the queue, not the queue's history.
    private func compactIfNeeded(_ journal: inout Journal, warnings: inout [String]) {
        let needed = Int64(DeliveryJournal.header.count + journal.live.framedBytes)
        guard journal.size > 2 * needed + Self.compactionSlackBytes, journal.size >= journal.nextCompactionSize else {
            return
        }
        do {
            try rewrite(&journal)
        } catch {
            journal.nextCompactionSize = journal.size + Self.compactionSlackBytes
            warnings.append("\(error); it stays as it is for now")
        }
    }

    /// Replaces the journal atomically with a header and one frame per live record, then
    /// reopens it: a crash leaves the old journal or the new one, both holding every record.
    private func rewrite(_ journal: inout Journal) throws {
        let file = journalPath(journal.slot)
        var bytes = DeliveryJournal.header
        bytes.reserveCapacity(bytes.count + journal.live.framedBytes)
        for record in journal.live.ordered { bytes += DeliveryJournal.frame(.add([record])) }
        let used = bytes.count
        bytes += [UInt8](repeating: 0, count: Self.writtenAheadBytes)
        var writesAhead = true
        if AtomicFile.replace(file, with: Data(bytes)) != nil {
            // A disk with room for the records but not for the zeros ahead still takes them.
            bytes.removeLast(Self.writtenAheadBytes)
            writesAhead = false
            if let failure = AtomicFile.replace(file, with: Data(bytes)) {
                throw DeliveryStoreError(reason: "the outbox journal \(file) could not be rewritten: \(failure)")
            }
        }
        journal.writesAhead = writesAhead
        journal.renamePending = true
        journal.removalsUnflushed = false  // the new file was flushed whole
        if journal.fd >= 0 { POSIX.release(journal.fd) }
        journal.size = Int64(used)
        journal.allocated = Int64(bytes.count)
        journal.hasStrayTail = false
        journal.nextCompactionSize = 0
        // The lock is on the separate lock file, so the slot stays owned across the rename.
        journal.fd = POSIX.openJournal(file)
        guard journal.fd >= 0 else {
            throw DeliveryStoreError(reason: "the outbox journal \(file) cannot be reopened (errno \(errno))")
        }
    }

    private func release(_ journal: inout Journal?) {
        guard let open = journal else { return }
        journal = nil
        if open.fd >= 0 {
            // A journal at rest ends at its last frame; a crash that keeps either size keeps every
            // frame. One with nothing live is cut to its header, so that the next start reads no
            // history; a crash that keeps the old size keeps frames that leave nothing live too.
            let end = open.live.count == 0 ? Int64(DeliveryJournal.header.count) : open.size
            if open.allocated > end, !open.hasStrayTail { _ = ftruncate(open.fd, off_t(end)) }
            POSIX.release(open.fd)
        }
        POSIX.release(open.lockFD)
    }

    // MARK: - Files aside

    /// Renames `file` to `<file>.corrupt`, replacing an older one: the latest damage is the
    /// one worth inspecting.
    private func moveAside(_ file: String) -> Bool { rename(file, file + ".corrupt") == 0 }

    /// Keeps the bytes of `file` as `<file>.corrupt` while `file` stays, so that its good
    /// records are still there if a crash comes before they are rewritten.
    private func preserveAside(_ file: String) -> Bool {
        let aside = file + ".corrupt"
        unlink(aside)
        if link(file, aside) == 0 { return true }
        return (try? FileManager.default.copyItem(atPath: file, toPath: aside)) != nil
    }

    /// Temporary files of rewrites that never finished. Only the slot's owner writes them, and
    /// this store holds the slot's lock, so their writer is gone.
    private func removeTemporaryFiles(of slot: Int) {
        let prefix = AtomicFile.temporaryPrefix(for: journalName(slot))
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names where name.hasPrefix(prefix) { unlink(path + "/" + name) }
    }

    // MARK: - Warnings

    private func skippedWarnings(_ contents: DeliveryJournal.Contents, file: String) -> [String] {
        contents.skipped.map {
            "the outbox journal \(file) has a record at byte offset \($0.offset) with \($0.reason); it was skipped"
        }
    }

    private func withJournal<Result>(_ body: (inout Journal, inout [String]) throws -> Result) throws -> Result {
        var warnings: [String] = []
        defer { deliver(warnings) }
        return try state.withLock { state in
            guard state.journal != nil else {
                throw state.isClosed ? closedError : DeliveryStoreError(reason: "the outbox \(path) is not open")
            }
            return try body(&state.journal!, &warnings)
        }
    }

    private func deliver(_ warnings: [String]) {
        guard !warnings.isEmpty else { return }
        let handler = state.withLock { state -> WarningHandler? in
            if state.handler == nil { state.pending += warnings }
            return state.handler
        }
        for warning in warnings { handler?.deliver(warning) }
    }
}

/// The system calls the store makes, outside the class so that `open` and `close` name the C
/// functions and not the store's methods.
private enum POSIX {
    enum LockOutcome {
        case locked(Int32)
        case busy
        case failed(String)
    }

    /// Opens (creating it) and locks `file` without waiting. A `flock` belongs to the open file
    /// description, so two stores of one process exclude each other as two processes do, and
    /// the lock dies with its process; `fcntl` locks have neither property.
    static func tryLock(_ file: String) -> LockOutcome {
        let fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return .failed("cannot be opened (errno \(errno))") }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            close(fd)
            return error == EWOULDBLOCK ? .busy : .failed("cannot be locked (errno \(error))")
        }
        return .locked(fd)
    }

    /// The journal for writing at an offset and reading back; never created here (see `rewrite`).
    static func openJournal(_ file: String) -> Int32 { open(file, O_RDWR | O_CLOEXEC | O_NOFOLLOW) }

    static func openForReading(_ file: String) -> Int32 { open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }

    static func release(_ fd: Int32) { close(fd) }

    /// Writes all of `bytes` at `position`, retrying interrupted and partial writes; what
    /// failed, or `nil`.
    static func writeAll(_ bytes: [UInt8], to fd: Int32, at position: Int64) -> String? {
        bytes.withUnsafeBytes { buffer -> String? in
            var offset = 0
            while offset < buffer.count {
                let written = pwrite(
                    fd, buffer.baseAddress! + offset, buffer.count - offset, off_t(position) + off_t(offset))
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return "cannot write (errno \(written < 0 ? errno : EIO))" }
                offset += written
            }
            return nil
        }
    }

    static func flush(_ fd: Int32) -> String? {
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            return "cannot flush (errno \(errno))"
        }
        return nil
    }

    /// Flushes the file's data and only the metadata needed to read it back, which, when its
    /// size has not changed, is none. Darwin's `fsync` is the counterpart.
    static func flushData(_ fd: Int32) -> String? {
        #if canImport(Glibc)
            while fdatasync(fd) != 0 {
                if errno == EINTR { continue }
                return "cannot flush (errno \(errno))"
            }
            return nil
        #else
            return flush(fd)
        #endif
    }

    static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = flush(fd)
        close(fd)
    }
}
