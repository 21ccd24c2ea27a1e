import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

/// The identity file survives a crash in the middle of a write, and a file that cannot be
/// read as an identity is a clear warning in the engine's log and a fresh identity, never a
/// crash or a stall.
@Suite(.timeLimit(.minutes(5)))
struct IdentityStoreCrashTests {
    static func temporaryDirectory() -> URL {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("identity-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func leftovers(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.contains(".tmp-") }
    }

    @Test func aSavedIdentityIsReadBackWithPrivatePermissionsAndNoTemporaryFile() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("state/identity.json")
        let store = FileIdentityStore(fileURL: file)
        let warnings = Locked<[String]>([])
        store.setWarningHandler { warning in warnings.withLock { $0.append(warning) } }

        #expect(store.loadUid() == nil, "a first launch")
        store.saveUid("u-8f3c")
        store.saveUid("u-9000")

        #expect(FileIdentityStore(fileURL: file).loadUid() == "u-9000")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(Self.leftovers(in: file.deletingLastPathComponent()).isEmpty)
        #expect(warnings.withLock { $0 }.isEmpty)
    }

    enum Corruption: String, CaseIterable, Sendable {
        case garbage, truncatedJSON, wrongType, emptyFile, emptyUID, invalidUTF8, hugeFile, directory

        func make(at url: URL) throws {
            switch self {
            case .garbage: try Data([0x00, 0xFF, 0x13, 0x37]).write(to: url)
            case .truncatedJSON: try Data(#"{"uid":"u-8f"#.utf8).write(to: url)
            case .wrongType: try Data(#"{"uid":42}"#.utf8).write(to: url)
            case .emptyFile: try Data().write(to: url)
            case .emptyUID: try Data(#"{"uid":""}"#.utf8).write(to: url)
            case .invalidUTF8:
                try Data([0x7B, 0x22, 0x75, 0x69, 0x64, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D]).write(to: url)
            case .hugeFile: try Data(repeating: UInt8(ascii: " "), count: 2 * 1024 * 1024).write(to: url)
            case .directory: try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            }
        }
    }

    @Test(arguments: Corruption.allCases)
    func aCorruptFileIsAWarningInTheEngineLogAndAFreshIdentity(_ corruption: Corruption) async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("identity.json")
        try corruption.make(at: file)
        let logs = Locked<[(AssistantLogLevel, String)]>([])

        let engine = AssistantEngine(
            configuration: AssistantEngineConfiguration(apiKey: "k", section: "s"),
            transport: ScriptedTransport(clock: ManualClock()),
            identityStore: FileIdentityStore(fileURL: file),
            logger: AssistantLogger(level: .error) { level, message in logs.withLock { $0.append((level, message)) } })

        #expect(await engine.canonicalUserId == nil, "a fresh identity")
        let warnings = logs.withLock { $0 }.filter { $0.1.contains("identity store:") }
        #expect(warnings.count == 1, "one warning: \(warnings.map(\.1))")
        let warning = try #require(warnings.first)
        #expect(warning.0 == .error, "visible at the default level")
        #expect(warning.1.contains(file.path) && warning.1.contains("fresh identity"), "\(warning.1)")
        // Kept aside for inspection; the next save writes a good file in its place.
        #expect(FileManager.default.fileExists(atPath: file.path + ".corrupt"))
        let store = FileIdentityStore(fileURL: file)
        store.saveUid("u-new")
        #expect(FileIdentityStore(fileURL: file).loadUid() == "u-new")
    }

    // A save that cannot be written is a warning, and the store says it refused, so that the
    // engine keeps the uid and writes it again (B14); the same write is taken once the way is
    // clear.
    // covers: B14
    @Test func aSaveThatCannotBeWrittenIsAWarningAndARefusal() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A regular file where the directory should be: no permission bits make this writable,
        // not even for root.
        let blocker = directory.appendingPathComponent("blocker")
        _ = FileManager.default.createFile(atPath: blocker.path, contents: Data())
        let store = FileIdentityStore(fileURL: blocker.appendingPathComponent("identity.json"))
        let warnings = Locked<[String]>([])
        store.setWarningHandler { warning in warnings.withLock { $0.append(warning) } }

        store.saveUid("u-8f3c")

        #expect(warnings.withLock { $0 }.count == 1)
        #expect(warnings.withLock { $0 }.first?.contains("could not be saved") == true)
        #expect(!store.attemptToSaveUid("u-8f3c"))
        #expect(warnings.withLock { $0 }.count == 2, "and says why each time")
        try FileManager.default.removeItem(at: blocker)
        #expect(store.attemptToSaveUid("u-8f3c"))
        #expect(store.loadUid() == "u-8f3c")
        #expect(warnings.withLock { $0 }.count == 2)
    }

    @Test func theTemporaryFileOfACrashedSaveIsRemovedAndTheIdentityKept() throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("identity.json")
        FileIdentityStore(fileURL: file).saveUid("u-8f3c")
        // What a save killed before its rename leaves: a partial temporary file of a process
        // that no longer exists (pid 2^22 + 1 is above Linux's pid_max default).
        let abandoned = directory.appendingPathComponent(".identity.json.tmp-4194305-77")
        try Data(#"{"uid":"u-ha"#.utf8).write(to: abandoned)

        #expect(FileIdentityStore(fileURL: file).loadUid() == "u-8f3c")
        #expect(!FileManager.default.fileExists(atPath: abandoned.path))
    }

    /// A child process saves identities of ~32 KB in a loop and is killed with SIGKILL as it
    /// starts a save, after a different number of saves each round. Every
    /// time, the file holds one complete identity the child wrote, and the next load clears
    /// what the killed save left behind.
    @Test func aSaveKilledMidWriteLeavesTheOldOrTheNewIdentity() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("identity.json")
        var interrupted = 0
        for round in 1...6 {
            let child = try ChildProcess(
                role: "identity-writer", filter: "ChildProcessRoles", environment: ["IDENTITY_FILE": file.path])
            let killedAfter = round * 7
            // Killed as soon as the child starts a save: the kill lands inside it or just after.
            let reported = await withinHangGuard(
                "the child saves \(killedAfter) identities", seconds: childProcessGuardSeconds
            ) {
                await child.line(containing: "saving \(killedAfter)")
            }
            child.kill()
            let ended =
                await withinHangGuard("the child ends", seconds: childProcessGuardSeconds) {
                    await child.exit()
                } ?? nil
            #expect(ended?.signaled == true, "killed, not exited: \(String(describing: ended))")
            try #require(reported != nil)
            if !Self.leftovers(in: directory).isEmpty { interrupted += 1 }

            let store = FileIdentityStore(fileURL: file)
            let warnings = Locked<[String]>([])
            store.setWarningHandler { warning in warnings.withLock { $0.append(warning) } }
            let uid = try #require(store.loadUid(), "round \(round): the file holds an identity")
            let number = Int(uid.split(separator: "-").dropFirst().first ?? "") ?? 0
            #expect(number >= killedAfter - 1, "round \(round): \(number) is the last whole save or a later one")
            #expect(uid.hasSuffix(IdentityWriterRole.padding(for: number)), "round \(round): complete")
            #expect(warnings.withLock { $0 }.isEmpty, "round \(round): \(warnings.withLock { $0 })")
            #expect(Self.leftovers(in: directory).isEmpty, "round \(round): the killed save's file is gone")
        }
        print("identity file: \(interrupted) of 6 kills landed while a save's temporary file existed")
    }
}

/// What the child of `aSaveKilledMidWriteLeavesTheOldOrTheNewIdentity` does.
enum IdentityWriterRole {
    static func padding(for number: Int) -> String { String(repeating: "\(number % 10)", count: 32_000) }

    static func run() {
        guard let path = ProcessInfo.processInfo.environment["IDENTITY_FILE"] else { return }
        let store = FileIdentityStore(fileURL: URL(fileURLWithPath: path))
        var number = 0
        while true {
            number += 1
            let uid = "uid-\(number)-" + padding(for: number)
            ChildProcess.report("saving \(number)")
            store.saveUid(uid)
        }
    }
}

/// The roles a child process of this test binary plays; see `ChildProcess`. Run normally,
/// it does nothing.
@Suite(.timeLimit(.minutes(2))) struct ChildProcessRoles {
    @Test func playTheRoleThisProcessWasStartedFor() async {
        switch ChildProcess.role {
        case "identity-writer": IdentityWriterRole.run()
        case DeliveryWriterRole.role: await DeliveryWriterRole.run()
        case FullDiskWriterRole.role: FullDiskWriterRole.run()
        case "partial-headers": await PartialHeadersCrashTests.childRun()
        case "footprint": await TransportFootprintTests.childRun()
        case "curl-proxy": await CurlTransportTests.proxyChildRun()
        case HangWatchdogTests.role: await HangWatchdogTests.stuckChildRun()
        default: return
        }
    }
}
