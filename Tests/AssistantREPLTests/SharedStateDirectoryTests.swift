import Foundation
import Testing

@testable import AssistantREPL

/// Two REPLs on one state directory share the queue safely but not the conversation: the
/// second says so as it starts.
@Suite(.timeLimit(.minutes(2))) struct SharedStateDirectoryTests {
    /// A state directory of the test's own.
    private static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("shared-state-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func aSecondSessionOnTheSameConversationSaysTheLastSavedWins() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("dialog.bin")
        let first = try await DemoREPL(width: 200, dialog: .file(file))
        let second = try await DemoREPL(width: 200, dialog: .file(file))
        let elsewhere = try await DemoREPL(width: 200, dialog: .file(directory.appendingPathComponent("other.bin")))
        #expect(!(await first.runSession([":quit"])).contains(DialogFileClaim.sharedWarning))
        let printed = await second.runSession([":quit"])
        #expect(printed.contains(DialogFileClaim.sharedWarning), "\(printed)")
        #expect(printed.firstIndex(of: DialogFileClaim.sharedWarning) == 2, "under the banner: \(printed)")
        #expect(!(await elsewhere.runSession([":quit"])).contains(DialogFileClaim.sharedWarning))
    }

    @Test func aConversationIsFreeAgainOnceItsSessionIsGone() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("dialog.bin")
        do {
            let earlier = try await DemoREPL(width: 200, dialog: .file(file))
            await earlier.session.engine.shutdown()
        }
        let later = try await DemoREPL(width: 200, dialog: .file(file))
        #expect(!(await later.runSession([":quit"])).contains(DialogFileClaim.sharedWarning))
    }
}
