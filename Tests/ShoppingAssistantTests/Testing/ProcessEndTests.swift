import Foundation
import ShoppingAssistantTestSupport
import Testing

/// How the tests wait for a child process: its end, with its status, without a thread that
/// waits (see `ProcessEnd`). These test the support, not engine rules, so they claim none.
@Suite(.timeLimit(.minutes(3))) struct ProcessEndTests {
    /// A shell that reads its standard input until it is closed (then exits with `code`) or
    /// the shell is killed.
    private static func blockedShell(exitingWith code: Int32 = 0) throws -> (Process, ProcessEnd, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "read line; exit \(code)"]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let end = ProcessEnd(watching: process)
        try process.run()
        return (process, end, input)
    }

    @Test func anExitStatusIsReported() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exit 3"]
        let end = ProcessEnd(watching: process)
        try process.run()
        let ended = await withinHangGuard("the shell exits") { await end.wait() } ?? nil
        #expect(ended == ProcessEnd.Status(status: 3, signaled: false))
        #expect(await end.wait() == ended, "a wait after the end returns at once")
    }

    @Test func aKilledProcessIsReportedToEveryWaiter() async throws {
        let (process, end, input) = try Self.blockedShell()
        defer { try? input.fileHandleForWriting.close() }
        #expect(end.status == nil, "still reading")
        let first = Task { await end.wait() }
        let second = Task { await end.wait() }
        kill(process.processIdentifier, SIGKILL)
        let both = await withinHangGuard("both waiters hear of the end") { [await first.value, await second.value] }
        #expect(both == [ProcessEnd.Status(status: SIGKILL, signaled: true), .init(status: SIGKILL, signaled: true)])
    }

    /// Children waited for at once each hear of their own end, in whatever order they end.
    @Test func childrenWaitedForAtOnceEachGetTheirOwnStatus() async throws {
        var children: [(Process, ProcessEnd, Pipe)] = []
        defer { for child in children where child.1.status == nil { kill(child.0.processIdentifier, SIGKILL) } }
        for code in 0..<20 { children.append(try Self.blockedShell(exitingWith: Int32(code))) }
        let waits = children.map { child in Task { await child.1.wait() } }
        for child in children.reversed() { try? child.2.fileHandleForWriting.close() }  // each `read` ends
        let statuses = await withinHangGuard("the children end") {
            var statuses: [ProcessEnd.Status?] = []
            for wait in waits { statuses.append(await wait.value) }
            return statuses
        }
        #expect(statuses == (0..<20).map { ProcessEnd.Status(status: Int32($0), signaled: false) })
    }

    /// A wait whose task is cancelled returns at once, `nil`, however long the process runs.
    @Test func aCancelledWaitReturnsNil() async throws {
        let (process, end, input) = try Self.blockedShell()
        defer {
            kill(process.processIdentifier, SIGKILL)
            try? input.fileHandleForWriting.close()
        }
        let wait = Task { await end.wait() }
        wait.cancel()
        let returned = await withinHangGuard("the cancelled wait returns") { await wait.value }
        #expect(returned == .some(nil), "cancelled, not ended")
        #expect(end.status == nil, "the shell still reads")
    }
}
