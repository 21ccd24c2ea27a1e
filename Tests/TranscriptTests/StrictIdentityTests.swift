import AssistantTranscripts
import Foundation
import ShoppingAssistantTestSupport
import Testing

/// A placeholder bound once must be the same text everywhere after: the corpus's retry
/// transcript, changed so that its retry carries a new message ID, fails with a diff of that
/// request and a report naming the field.
@Suite(.timeLimit(.minutes(2))) struct StrictIdentityTests {
    @Test func aRetryWithANewMessageIDFails() async throws {
        let path = TranscriptReplayTests.directory.appendingPathComponent(
            "retry-resends-byte-identical-request.transcript"
        ).path
        let original = try String(contentsOfFile: path, encoding: .utf8)
        let retry = try #require(original.range(of: "> :retry\n"))
        let tail = original[retry.upperBound...].replacingOccurrences(
            of: #""messageId":"<uuid-1>","resourceId""#, with: #""messageId":"<uuid-3>","resourceId""#)
        #expect(tail != String(original[retry.upperBound...]), "the retry's request names its message ID")
        let copy = NSTemporaryDirectory() + "retry-new-id-\(UUID().uuidString).transcript"
        try (original[..<retry.upperBound] + tail).write(toFile: copy, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: copy) }

        let result = await TranscriptRunner.check(file: copy, display: "retry-new-id", bless: false)
        #expect(result.status == .failed)
        let report = try #require(result.report)
        #expect(report.contains(#"-→ POST shopping /v1/messages {"messageId":"<uuid-3>""#))
        #expect(report.contains(#"+→ POST shopping /v1/messages {"messageId":"<uuid-1>""#))
        #expect(
            report.contains(
                #"the request differs from the recorded one: POST shopping /v1/messages — messageId: "<uuid-3>" in the file, "<uuid-1>" sent"#
            ))
    }
}

@Suite struct ConsolePartsTests {
    @Test func aLongReportIsSplitIntoPartsTheConsoleKeepsAndNothingIsLost() {
        let line = "│ Термокружка 450 мл │ " + String(repeating: "ж", count: 40)
        let report =
            (1...200).map { "\($0) \(line)" }.joined(separator: "\n") + "\n" + String(repeating: "я", count: 5_000)
        let parts = ConsoleParts.split(report, title: "t")
        #expect(parts.count > 1)
        #expect(parts.allSatisfy { $0.utf8.count <= ConsoleParts.maximumBytes })
        #expect(parts.first?.hasPrefix("t (part 1 of \(parts.count)):\n") == true)
        let body = parts.map { $0.split(separator: "\n", maxSplits: 1).last.map(String.init) ?? "" }
            .joined(separator: "\n").replacingOccurrences(of: "\n…", with: "")
        #expect(body == report)
        #expect(ConsoleParts.split("short", title: "t") == ["short"])
    }
}
