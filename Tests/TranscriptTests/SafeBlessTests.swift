import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantTranscripts

/// Blessing writes only a file that then replays green, atomically, with the names the file
/// already uses; `--bless=interactive` takes only the hunks someone accepts.
@Suite(.timeLimit(.minutes(2))) struct SafeBlessTests {
    static let handWritten = TranscriptReplayTests.directory.appendingPathComponent(
        "hand-written-home-screen-question-gets-a-plain-answer.transcript"
    ).path

    /// A copy of the hand-written transcript with `edit` made, removed at the end of the test.
    struct Copy {
        let path = NSTemporaryDirectory() + "bless-\(UUID().uuidString).transcript"

        init(_ edit: (String) -> String) throws {
            let original = try String(contentsOfFile: SafeBlessTests.handWritten, encoding: .utf8)
            let edited = edit(original)
            #expect(edited != original, "the edit changes the file")
            try edited.write(toFile: path, atomically: true, encoding: .utf8)
        }

        var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    private static let message = #""messageId":"<message>""#
    private static let question = #""text":"Есть кружки?""#

    /// The message request no longer matches (its text differs) but its ID still does: blessed,
    /// the request keeps `<message>`, the name its kept answer uses, and the file passes.
    @Test func aReblessedRequestKeepsThePlaceholderItsAnswerUses() async throws {
        let copy = try Copy { $0.replacingOccurrences(of: Self.question, with: #""text":"Есть чашки?""#) }
        defer { copy.remove() }
        let blessed = await TranscriptRunner.check(file: copy.path, display: "copy", bless: true)
        #expect(blessed.status == .blessed, "\(blessed.report ?? "")")
        let request = try #require(copy.text.split(separator: "\n").first { $0.hasPrefix("→ POST shopping") })
        #expect(request.contains(Self.message) && request.contains(Self.question))
        #expect(
            request.contains(#""threadId":"<uuid-1>""#), "only the thread, which the file leaves out, is named anew")
        #expect(await TranscriptRunner.check(file: copy.path, display: "copy", bless: false).status == .passed)
    }

    /// A UUID the file writes out is reported as written, never under a name the file does not
    /// use.
    @Test func aLiteralIDIsReportedAsWritten() async throws {
        let literal = "00000000-0000-4000-8000-000000000001"
        let copy = try Copy {
            $0.replacingOccurrences(of: "<message>", with: literal)
                .replacingOccurrences(of: Self.question, with: #""text":"Есть чашки?""#)
        }
        defer { copy.remove() }
        let result = await TranscriptRunner.check(file: copy.path, display: "copy", bless: false)
        let report = try #require(result.report)
        #expect(report.contains(#"+→ POST shopping /v1/messages {"messageId":"\#(literal)""#), "\(report)")
        #expect(report.contains(#"+← 200 {"assistantMessageId":"am-1","messageId":"\#(literal)""#))
    }

    /// An answer naming a placeholder nothing binds fails however the file is rewritten: bless
    /// leaves the file byte for byte as it was and says why, with the line of the file.
    @Test func aFileThatWouldStillFailIsLeftUnchanged() async throws {
        let copy = try Copy {
            $0.replacingOccurrences(of: #""assistantMessageId":"am-1""#, with: #""assistantMessageId":"<nobody>""#)
                .replacingOccurrences(of: "  assistant › Есть, 12 видов.\n", with: "  assistant › Нет.\n")
        }
        defer { copy.remove() }
        let before = copy.text
        let result = await TranscriptRunner.check(file: copy.path, display: "copy", bless: true)
        #expect(result.status == .failed)
        #expect(copy.text == before)
        let report = try #require(result.report)
        #expect(report.contains("copy: not blessed, the file is unchanged: the rewritten file would still fail:"))
        #expect(
            report.contains("copy (as blessed): line 55: its answer names <nobody>, which no request bound before it"))
        // This copy's own: the other tests bless copies of their own in the same directory.
        let name = (copy.path as NSString).lastPathComponent
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
            .filter { $0.hasPrefix("." + name) }
        #expect(leftovers.isEmpty, "no temporary file left behind")
    }

    /// Two hunks: a blank line the rewrite drops, and a changed output line. Accepting only
    /// the second keeps the blank line and passes; rejecting every hunk changes nothing.
    @Test func interactiveBlessTakesOnlyTheAcceptedHunks() async throws {
        let copy = try Copy {
            $0.replacingOccurrences(of: "> :open\n", with: "\n> :open\n")
                .replacingOccurrences(of: "  assistant › Есть, 12 видов.\n", with: "  assistant › Нет.\n")
        }
        defer { copy.remove() }
        let before = copy.text
        let asked = Locked<[[String]]>([])
        let none = HunkReview { hunk in
            asked.withLock { $0.append(hunk) }
            return false
        }
        let rejected = await TranscriptRunner.check(file: copy.path, display: "copy", bless: true, review: none)
        #expect(rejected.status == .failed && copy.text == before)
        let hunks = asked.withLock { $0 }
        #expect(hunks.count == 2)
        #expect(hunks.first?.first?.hasPrefix("@@ copy:") == true && hunks.first?.contains("-") == true)
        #expect(hunks.last?.contains("-  assistant › Нет.") == true)
        #expect(hunks.last?.contains("+  assistant › Есть, 12 видов.") == true)

        let second = HunkReview { $0.contains("+  assistant › Есть, 12 видов.") }
        let blessed = await TranscriptRunner.check(file: copy.path, display: "copy", bless: true, review: second)
        #expect(blessed.status == .blessed, "\(blessed.report ?? "")")
        #expect(copy.text.contains("\n\n> :open\n") && copy.text.contains("  assistant › Есть, 12 видов.\n"))
    }

    /// Without a terminal or an answer, every hunk is rejected and the file stays as it was.
    @Test func interactiveBlessWithoutAnswersChangesNothing() async throws {
        let copy = try Copy {
            $0.replacingOccurrences(of: "  assistant › Есть, 12 видов.\n", with: "  assistant › Нет.\n")
        }
        defer { copy.remove() }
        let before = copy.text
        let output = Locked<[String]>([])
        let code = await TranscriptRunner.main(
            ["--bless=interactive", copy.path], standardOutput: { line in output.withLock { $0.append(line) } },
            standardError: { _ in }, standardInput: { nil })
        #expect(code == 1 && copy.text == before)
        let printed = output.withLock { $0 }
        #expect(printed.contains("Accept this change? [y/N]"))
        #expect(printed.contains { $0.contains("no change accepted: unchanged") })
    }
}

extension SafeBlessTests {
    /// `y` at each prompt takes every hunk: the file is blessed and passes.
    @Test func interactiveBlessWithYesAnswersBlesses() async throws {
        let copy = try Copy {
            $0.replacingOccurrences(of: "  assistant › Есть, 12 видов.\n", with: "  assistant › Нет.\n")
        }
        defer { copy.remove() }
        let code = await TranscriptRunner.main(
            ["--bless=interactive", copy.path], standardOutput: { _ in }, standardError: { _ in },
            standardInput: { "y" })
        #expect(code == 0)
        #expect(copy.text.contains("  assistant › Есть, 12 видов.\n"))
        #expect(await TranscriptRunner.check(file: copy.path, display: "copy", bless: false).status == .passed)
    }
}
