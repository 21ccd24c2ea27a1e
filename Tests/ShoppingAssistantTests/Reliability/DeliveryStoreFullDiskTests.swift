import Foundation
import ShoppingAssistantTestSupport
import Testing

@testable import ShoppingAssistant

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A disk that is almost full: the store writes zeros ahead of its frames, and a disk without
/// room for them must still take every frame it has room for.
@Suite(.timeLimit(.minutes(2)))
struct DeliveryStoreFullDiskTests {
    /// A child process whose files may not grow past `limit` bytes (`RLIMIT_FSIZE`, as a full
    /// disk refuses a write) opens a store and appends records until one is refused. Every
    /// record it was told is kept is read back by the next store, and the records filled the
    /// room the limit left, where the zeros ahead would have refused the very first.
    @Test func aDiskWithoutRoomForTheZerosAheadStillTakesEveryFrameItHasRoomFor() async throws {
        // covers: DL5
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("outbox-full-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = try ChildProcess(
            role: FullDiskWriterRole.role, filter: "ChildProcessRoles",
            environment: [FullDiskWriterRole.directoryVariable: directory.path])
        let ended = await withinHangGuard("the writer ends", seconds: childProcessGuardSeconds) {
            await child.exit()
        }
        _ = await withinHangGuard("the writer's output closes") { await child.outputClosed() }
        #expect(ended??.signaled == false, "the writer exited by itself: \(String(describing: ended))")
        let lines = child.lines
        #expect(lines.contains("opened"), "\(lines)")
        let accepted = lines.compactMap { line -> Int? in
            guard line.hasPrefix("accepted ") else { return nil }
            return Int(line.dropFirst("accepted ".count))
        }
        #expect(lines.contains { $0.hasPrefix("refused ") }, "the limit was reached: \(lines)")

        let store = FileDeliveryStore(directory: directory)
        let kept = try store.open()
        store.close()
        #expect(kept.map(\.label) == accepted.map(FullDiskWriterRole.label), "every accepted record, in order")
        let frame = DeliveryJournal.frame(.add([FullDiskWriterRole.record(0)])).count
        let room = FullDiskWriterRole.limit - DeliveryJournal.header.count
        #expect(accepted.count == room / frame, "\(accepted.count) records of \(frame) bytes in \(room) bytes")
    }
}

/// The child of `DeliveryStoreFullDiskTests`.
enum FullDiskWriterRole {
    static let role = "full-disk-writer"
    static let directoryVariable = "FULL_DISK_DIRECTORY"
    /// Room for a few records, far less than the zeros a store writes ahead.
    static let limit = FileDeliveryStore.writtenAheadBytes / 4

    static func label(_ number: Int) -> String { "record \(number)" }

    static func record(_ number: Int) -> DeliveryRecord {
        DeliveryRecord(
            id: UUID(), kind: .event, target: "event", body: Data(repeating: UInt8(number & 0xFF), count: 300),
            createdAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(number)), label: label(number), owner: nil)
    }

    static func run() {
        guard let directory = ProcessInfo.processInfo.environment[directoryVariable] else { return }
        // A write past the limit then fails with EFBIG instead of ending the process.
        signal(SIGXFSZ, SIG_IGN)
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
        #else
            let resource = RLIMIT_FSIZE
        #endif
        var original = rlimit()
        guard getrlimit(resource, &original) == 0 else { return ChildProcess.report("no limit (errno \(errno))") }
        // Only the soft limit, lifted again before the process ends: what else it writes on its
        // way out (a coverage profile) must not be cut short.
        var bound = rlimit(rlim_cur: rlim_t(limit), rlim_max: original.rlim_max)
        guard setrlimit(resource, &bound) == 0 else { return ChildProcess.report("no limit (errno \(errno))") }
        defer { setrlimit(resource, &original) }
        let store = FileDeliveryStore(directory: URL(fileURLWithPath: directory, isDirectory: true))
        do {
            _ = try store.open()
        } catch {
            return ChildProcess.report("open failed: \(error)")
        }
        ChildProcess.report("opened")
        for number in 0..<1_000 {
            do {
                try store.append([record(number)])
                ChildProcess.report("accepted \(number)")
            } catch {
                ChildProcess.report("refused \(number): \(error)")
                break
            }
        }
        store.close()
    }
}
