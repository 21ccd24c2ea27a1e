import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct StateDirectoryTests {
    /// A fresh directory under the system's temporary directory, removed afterwards.
    private func withScratch(_ body: (String) throws -> Void) throws {
        let scratch = NSTemporaryDirectory() + "state-dir-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try body(scratch)
    }

    @Test func theDefaultIsWhereTheLibraryKeepsTheIdentity() {
        for environment in [["XDG_STATE_HOME": "/x", "HOME": "/h"], ["HOME": "/h"], ["XDG_STATE_HOME": "/x/"]] {
            let directory = StateDirectory.standard(environment: environment)
            #expect(directory?.identityFile.path == FileIdentityStore.defaultLocation(environment: environment).path)
        }
        #expect(StateDirectory.standard(environment: ["HOME": "/h"])?.path == "/h/.local/state/shopping-assistant")
        #expect(
            StateDirectory.standard(environment: ["XDG_STATE_HOME": "/x/"])?.historyPath
                == "/x/shopping-assistant/history")
        #expect(
            StateDirectory.standard(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"])?.path
                == "/h/.local/state/shopping-assistant")
        #expect(StateDirectory.standard(environment: [:]) == nil)
    }

    @Test func anExplicitDirectoryIsCreatedPrivateWithItsParents() throws {
        try withScratch { scratch in
            let path = scratch + "/a/b/state"
            let directory = try StateDirectory.prepare(path)
            #expect(directory.historyPath == path + "/history")
            #expect(directory.identityFile.path == path + "/identity.json")
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
            #expect(try StateDirectory.prepare(path) == directory)  // an existing one is fine
        }
    }

    @Test func aDirectoryThatCannotBeCreatedIsAUsageError() throws {
        try withScratch { scratch in
            let file = scratch + "/file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            let error = try #require(throws: CommandLineOptions.ParseError.self) {
                try StateDirectory.prepare(file + "/state")
            }
            #expect(error.exitCode == 2)
            #expect(
                error.description
                    == "The value '\(file)/state' for --state-dir is invalid: cannot create it: \(file) is not a directory."
            )
            let notDirectory = try #require(throws: CommandLineOptions.ParseError.self) {
                try StateDirectory.prepare(file)
            }
            #expect(
                notDirectory.description == "The value '\(file)' for --state-dir is invalid: it is not a directory.")
            #expect(throws: CommandLineOptions.ParseError.self) { try StateDirectory.prepare("") }
        }
    }

    @Test(.enabled(if: getuid() != 0, "root may write anywhere")) func anUnwritableDirectoryIsAUsageError() throws {
        try withScratch { scratch in
            let locked = scratch + "/locked"
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
            try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: locked)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: locked) }
            let error = try #require(throws: CommandLineOptions.ParseError.self) { try StateDirectory.prepare(locked) }
            #expect(error.description.hasPrefix("The value '\(locked)' for --state-dir is invalid: it is not writable"))
            let below = try #require(throws: CommandLineOptions.ParseError.self) {
                try StateDirectory.prepare(locked + "/state")
            }
            #expect(below.description.contains("cannot create it: Permission denied"))
        }
    }
}
