import AssistantREPL
import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantTranscripts

/// Every line a replay prints has one position, fixed by what caused it: answers of in-process
/// backends come one at a time and only when nothing else can run, in the file's order, and
/// timers due at the same instant fire one at a time.
@Suite(.timeLimit(.minutes(2))) struct CausalOrderTests {
    /// The corpus's product tap, its first click URL answered 404 (final: dropped with an error
    /// line, DL3): the error line used to land before or after `── chat closed ──` as threads
    /// were scheduled. Blessed once, the copy passes every replay, each replay the same.
    @Test func aRefusedClickURLsErrorLineHasOnePlaceAfterOneBless() async throws {
        let path = TranscriptReplayTests.directory.appendingPathComponent(
            "demo-gift-question-and-product-tap.transcript"
        ).path
        let original = try String(contentsOfFile: path, encoding: .utf8)
        let tap = try #require(original.range(of: "> :tap 1\n"))
        let click = "→ GET tracking https://t.demo-store.example/c?i=p-001\n→ User-Agent: <user-agent>\n"
        let tail = original[tap.upperBound...].replacingOccurrences(of: click + "← 204", with: click + "← 404")
        #expect(tail != String(original[tap.upperBound...]))
        let copy = NSTemporaryDirectory() + "refused-click-\(UUID().uuidString).transcript"
        try (original[..<tap.upperBound] + tail).write(toFile: copy, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: copy) }

        let blessed = await TranscriptRunner.check(file: copy, display: "copy", bless: true)
        #expect(blessed.status == .blessed, "\(blessed.report ?? "")")
        let text = try String(contentsOfFile: copy, encoding: .utf8)
        #expect(text.contains("  [error] delivery: tracking https://t.demo-store.example/c?i=p-001 dropped"))
        let replays = await TranscriptRunner.check(file: copy, display: "copy", bless: false, repeats: 30)
        #expect(replays.status == .passed, "\(replays.report ?? "")")
    }

    /// `--repeat`'s report: how many replays differ from the first, and both versions as a diff.
    @Test func aVaryingReplayIsReportedWithBothVersions() {
        let first = ["> :tap 1", "  ── chat closed ──", "  [error] url … not delivered", "  (screen: home)"]
        let other = ["> :tap 1", "  [error] url … not delivered", "  ── chat closed ──", "  (screen: home)"]
        #expect(TranscriptRunner.variation(in: [first, first, first], display: "x") == nil)
        let report = TranscriptRunner.variation(in: [first, first, other, other], display: "x")
        #expect(
            report == """
                x: the replay varies: 2 of 4 replays differ from the first, replay 3 so:
                --- x (replay 1)
                +++ x (replay 3)
                @@ line 1 @@
                 > :tap 1
                -  ── chat closed ──
                   [error] url … not delivered
                +  ── chat closed ──
                   (screen: home)
                """)
    }

    @Test func heldRequestsGoOneAtATimeInRankOrderWhateverTheirArrival() async throws {
        let time = VirtualTime()
        let released = Locked<[String]>([])
        // Arrive in the order c, a, b; go in rank order a, b, c.
        for (name, order) in [("c", 3), ("a", 1), ("b", 2)] {
            time.activity.spawn {
                try? await time.requests.hold { HeldRequests.Rank(order: order, text: name) }
                released.withLock { $0.append(name) }
            }
            await time.activity.waitUntilIdle()
        }
        #expect(time.requests.count == 3)
        var order: [[String]] = []
        while time.requests.releaseFirst() {
            await time.activity.waitUntilIdle()
            order.append(released.withLock { $0 })
        }
        #expect(order == [["a"], ["a", "b"], ["a", "b", "c"]])
    }

    @Test func aHeldRequestWhoseTaskIsCancelledLeavesTheQueue() async throws {
        let time = VirtualTime()
        let task = time.activity.spawn {
            await #expect(throws: CancellationError.self) {
                try await time.requests.hold { HeldRequests.Rank(order: 0, text: "") }
            }
        }
        await time.activity.waitUntilIdle()
        #expect(time.requests.count == 1)
        task.cancel()
        await task.value
        #expect(time.requests.count == 0)
        #expect(!time.requests.releaseFirst())
    }

    @Test func timersDueAtOneInstantFireOneAtATime() async throws {
        let time = VirtualTime()
        let fired = Locked<[Int]>([])
        for number in 1...3 {
            time.activity.spawn {
                try? await time.clock.sleep(until: time.clock.now.advanced(by: .seconds(1)))
                fired.withLock { $0.append(number) }
            }
            await time.activity.waitUntilIdle()
        }
        #expect(time.clock.wakeNext())
        await time.activity.waitUntilIdle()
        #expect(fired.withLock { $0 } == [1], "one sleeper, the first to go to sleep")
        #expect(time.clock.now.offset == .seconds(1))
        await time.advance(by: .zero)
        #expect(fired.withLock { $0 } == [1, 2, 3])
    }
}
