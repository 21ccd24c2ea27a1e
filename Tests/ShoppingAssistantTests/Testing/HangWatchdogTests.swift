import Foundation
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

/// The watchdog behind the hang guards: a process in which nothing runs any more ends with a
/// line saying which wait it was stuck in, instead of stalling the run. Test support, so it
/// claims no rule.
@Suite(.timeLimit(.minutes(4))) struct HangWatchdogTests {
    static let role = "stuck"

    @Test func aWaitIsWatchedUntilItEnds() {
        let watchdog = HangWatchdog(grace: .seconds(3_600))
        let first = watchdog.begin("first", limit: .seconds(60))
        let second = watchdog.begin("second", limit: .seconds(60))
        #expect(watchdog.watchedWaits == ["first", "second"])
        watchdog.end(first)
        #expect(watchdog.watchedWaits == ["second"])
        watchdog.end(second)
        #expect(watchdog.watchedWaits.isEmpty)
    }

    /// Every guard's timer is watched while it waits, and no longer once it returned, however
    /// it ended: here, cancelled.
    @Test func aGuardsWaitIsWatchedWhileItWaits() async {
        let name = "a wait of this test \(UUID().uuidString)"
        let wait = Task { await wallClockWait(.seconds(3_600), for: name) }
        let seen = await withinHangGuard("the wait is watched") {
            while !HangWatchdog.shared.watchedWaits.contains(name) { await Task.yield() }
            return true
        }
        #expect(seen == true)
        wait.cancel()
        await wait.value
        #expect(!HangWatchdog.shared.watchedWaits.contains(name))
    }

    /// A child starts a guarded wait that never returns, as one does in a process where
    /// nothing runs any more (every thread of Dispatch's pool blocked: how many it takes
    /// depends on how far the pool grows, so the child does not rely on it). With no grace,
    /// the watchdog ends it at once.
    @Test func aWaitThatNeverReturnsEndsTheProcessAndIsNamed() async throws {
        let child = try ChildProcess(
            role: Self.role, filter: "ChildProcessRoles", environment: [HangWatchdog.graceVariable: "0"],
            capturesStandardError: true)
        let ended =
            await withinHangGuard("the stuck child ends", seconds: childProcessGuardSeconds) {
                let status = await child.exit()
                await child.outputClosed()
                return status
            } ?? nil
        if ended == nil { child.kill() }
        #expect(ended == ProcessEnd.Status(status: 70, signaled: false))
        #expect(
            child.output.contains { $0.hasPrefix("hang watchdog: the stuck child's wait") },
            "\(child.output.suffix(5))")
    }

    /// In the child: a watched wait that never ends, the test blocked behind it.
    static func stuckChildRun() async {
        _ = HangWatchdog.shared.begin("the stuck child's wait", limit: .zero)
        await wallClockWait(.seconds(3_600), for: "the stuck child's test")
    }
}
