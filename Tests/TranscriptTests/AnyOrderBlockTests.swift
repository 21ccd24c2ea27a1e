import Foundation
import Testing

@testable import AssistantTranscripts

/// `%any-order` … `%end`: output lines that may come in any order among themselves, one after
/// another, as FileCheck's `CHECK-DAG` — for where the engine's order is genuinely not defined.
@Suite(.timeLimit(.minutes(2))) struct AnyOrderBlockTests {
    static let reply = "  assistant › Есть, 12 видов.\n  rate this reply: :like or :dislike\n"
    static let swapped = "  rate this reply: :like or :dislike\n  assistant › Есть, 12 видов.\n"

    private func copy(_ edit: (String) -> String) throws -> String {
        let original = try String(contentsOfFile: SafeBlessTests.handWritten, encoding: .utf8)
        #expect(original.contains(Self.reply))
        let path = NSTemporaryDirectory() + "any-order-\(UUID().uuidString).transcript"
        try edit(original).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func linesOfABlockMatchInAnyOrderAndSwappedLinesOutsideOneFail() async throws {
        let block = try copy { $0.replacingOccurrences(of: Self.reply, with: "%any-order\n" + Self.swapped + "%end\n") }
        let plain = try copy { $0.replacingOccurrences(of: Self.reply, with: Self.swapped) }
        defer { for path in [block, plain] { try? FileManager.default.removeItem(atPath: path) } }
        let passed = await TranscriptRunner.check(file: block, display: "block", bless: false, repeats: 3)
        #expect(passed.status == .passed, "\(passed.report ?? "")")
        #expect(await TranscriptRunner.check(file: plain, display: "plain", bless: false).status == .failed)
    }

    /// A block whose lines are not all printed fails with a diff around it, and bless keeps the
    /// block where the rewritten lines still form it.
    @Test func aBlockThatDoesNotMatchFailsAndBlessKeepsOneThatDoes() async throws {
        let changed = try copy {
            $0.replacingOccurrences(
                of: Self.reply,
                with: "%any-order\n  rate this reply: :like or :dislike\n  assistant › Нет.\n%end\n")
        }
        defer { try? FileManager.default.removeItem(atPath: changed) }
        let failed = await TranscriptRunner.check(file: changed, display: "c", bless: false)
        let report = try #require(failed.report)
        #expect(report.contains("-%any-order\n+  assistant › Есть, 12 видов.\n"), "\(report)")
        #expect(report.contains("-  assistant › Нет.\n-%end\n"), "\(report)")

        let path = try copy {
            $0.replacingOccurrences(of: Self.reply, with: "%any-order\n" + Self.swapped + "%end\n")
                .replacingOccurrences(of: "  you › Есть кружки?\n", with: "  you › ?\n")
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let blessed = await TranscriptRunner.check(file: path, display: "b", bless: true)
        #expect(blessed.status == .blessed, "\(blessed.report ?? "")")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("  you › Есть кружки?\n"))
        #expect(text.contains("%any-order\n" + Self.swapped + "%end\n"))
    }

    @Test func blocksReadBackAndMalformedOnesNameTheirLine() throws {
        let text = "> x\n  a\n%any-order\n  b\n  c\n%end\n  d\n"
        let transcript = try TranscriptFormat.parse(text)
        #expect(transcript.segments.first?.unordered == [1..<3])
        #expect(TranscriptFormat.render(transcript).hasSuffix(text))
        #expect(throws: TranscriptError(line: 2, message: "%any-order without its %end")) {
            try TranscriptFormat.parse("> x\n%any-order\n  a\n> y\n")
        }
        #expect(throws: TranscriptError(line: 2, message: "an %any-order block holds output lines only")) {
            try TranscriptFormat.parse("> x\n%any-order\n→ GET tracking https://t/x\n← 204\n%end\n")
        }
        #expect(throws: TranscriptError(line: 2, message: "an %any-order block holds two output lines or more")) {
            try TranscriptFormat.parse("> x\n%any-order\n  a\n%end\n")
        }
        #expect(throws: TranscriptError(line: 2, message: "%end without %any-order")) {
            try TranscriptFormat.parse("> x\n%end\n")
        }
    }
}
