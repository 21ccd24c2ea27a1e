import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantTranscripts

/// What a file claims is checked, a failure says its first problem in one line, and a file
/// holds no invisible format characters.
@Suite(.timeLimit(.minutes(2))) struct ClaimsAndReportsTests {
    private func copy(_ edit: (String) -> String) throws -> String {
        let original = try String(contentsOfFile: SafeBlessTests.handWritten, encoding: .utf8)
        let path = NSTemporaryDirectory() + "claims-\(UUID().uuidString).transcript"
        try edit(original).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aCoversClaimOfAnUnknownRuleFailsTheFile() async throws {
        let path = try copy { $0.replacingOccurrences(of: "# covers: S3\n", with: "# covers: S3, ZZ99\n") }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = await TranscriptRunner.check(file: path, display: "copy", bless: false)
        #expect(result.status == .failed)
        #expect(result.report == "copy:2: covers: ZZ99 is not a rule ID of behavior.md")
        #expect(result.headline == result.report)
        #expect(CoversClaim.problems(in: "# covers: S3 D5,PR10\n> x\n# covers: ZZ99\n").isEmpty, "after the inputs")
        #expect(CoversClaim.problems(in: "# covers: s3\n") == ["1: covers: s3 is not a rule ID of behavior.md"])
    }

    /// A file with CRLF line endings (a Windows checkout) is read line by line like any other:
    /// it passes as it is and fails where it differs — never one long comment that checks nothing.
    @Test func aFileWithCRLFLineEndingsIsCheckedLikeAnyOther() async throws {
        let crlf = { (text: String) in text.replacingOccurrences(of: "\n", with: "\r\n") }
        let same = try copy(crlf)
        let wrong = try copy {
            crlf($0.replacingOccurrences(of: "  assistant › Есть, 12 видов.\n", with: "  assistant › Нет.\n"))
        }
        let unknown = try copy { crlf($0.replacingOccurrences(of: "# covers: S3\n", with: "# covers: ZZ99\n")) }
        defer { for path in [same, wrong, unknown] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(await TranscriptRunner.check(file: same, display: "copy", bless: false).status == .passed)
        let differs = await TranscriptRunner.check(file: wrong, display: "copy", bless: false)
        #expect(differs.status == .failed)
        #expect(differs.headline == #"copy:62: not in the replay: "  assistant › Нет.""#)
        #expect(await TranscriptRunner.check(file: unknown, display: "copy", bless: false).status == .failed)
        // Old Mac line endings, CR alone, too.
        let wrongCR = try copy {
            $0.replacingOccurrences(of: "  assistant › Есть, 12 видов.\n", with: "  assistant › Нет.\n")
                .replacingOccurrences(of: "\n", with: "\r")
        }
        defer { try? FileManager.default.removeItem(atPath: wrongCR) }
        #expect(await TranscriptRunner.check(file: wrongCR, display: "copy", bless: false).status == .failed)
    }

    /// Bless keeps what a person wrote: a comment among the steps stays before the step it
    /// was written above (one among a step's lines, at the step's end), and one after the last.
    @Test func blessKeepsTheCommentsWrittenAmongTheSteps() async throws {
        let path = try copy {
            $0.replacingOccurrences(of: "> Есть кружки?\n", with: "# IMPORTANT: why this step\n> Есть кружки?\n")
                .replacingOccurrences(of: "  assistant › Есть, 12 видов.\n", with: "  assistant › Нет.\n")
                + "# the end\n"
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let blessed = await TranscriptRunner.check(file: path, display: "copy", bless: true)
        #expect(blessed.status == .blessed)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("# IMPORTANT: why this step\n> Есть кружки?\n"))
        #expect(text.hasSuffix("> :quit\n# the end\n"))
        #expect(text.contains("  assistant › Есть, 12 видов.\n"))
        #expect(await TranscriptRunner.check(file: path, display: "copy", bless: false).status == .passed)
    }

    /// A report quotes the file and what was printed: their control characters are spelled
    /// out, so a line of either cannot retitle, recolour or move the terminal it is read in.
    @Test func aReportSpellsOutTheControlCharactersItQuotes() async throws {
        let path = try copy {
            $0.replacingOccurrences(
                of: "  assistant › Есть, 12 видов.\n", with: "  assistant › \u{1b}]0;pwned\u{7}\u{1b}[31mRED\n")
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let printed = Locked<[String]>([])
        let code = await TranscriptRunner.main(
            [path], standardOutput: { line in printed.withLock { $0.append(line) } }, standardError: { _ in })
        #expect(code == 1)
        let text = printed.withLock { $0.joined(separator: "\n") }
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(text.contains(#"\u001b]0;pwned\u0007\u001b[31mRED"#))
    }

    /// The list claims are checked against is the spec's, whenever the spec is at hand
    /// (`BEHAVIOR_SPEC` names it, else the shared folder beside the checkout,
    /// `../shared/spec/behavior.md`, as in `.ci/run`; `.ci/rule-ids` regenerates the list).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: specPath)))
    func theCheckedInRuleIDsAreTheSpecs() throws {
        let spec = try String(contentsOfFile: Self.specPath, encoding: .utf8)
        let ids = spec.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("- **") else { return nil }
            let id = line.dropFirst(4).prefix { $0.isLetter || $0.isNumber }
            return id.first?.isUppercase == true && id.last?.isNumber == true ? String(id) : nil
        }
        #expect(ids.count > 50)
        #expect(BehaviorRuleIDs.text.split(separator: "\n").map(String.init) == ids)
    }

    static let specPath =
        ProcessInfo.processInfo.environment["BEHAVIOR_SPEC"]
        ?? URL(fileURLWithPath: #filePath)  // <root>/Tests/TranscriptTests/this file
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/spec/behavior.md").path

    /// JUnit's `failure@message` is the first problem, not the diff's header.
    @Test func aFailuresHeadlineIsItsFirstProblem() async throws {
        let question = #""text":"Есть кружки?""#
        let differs = try copy { $0.replacingOccurrences(of: question, with: #""text":"Есть чашки?""#) }
        let printed = try copy {
            $0.replacingOccurrences(of: "  assistant › Есть, 12 видов.\n", with: "  assistant › Нет.\n")
        }
        defer { for path in [differs, printed] { try? FileManager.default.removeItem(atPath: path) } }
        let request = await TranscriptRunner.check(file: differs, display: "copy", bless: false)
        #expect(
            request.headline
                == #"copy: line 55: the request differs from the recorded one: POST shopping /v1/messages — text: "Есть чашки?" in the file, "Есть кружки?" sent"#
        )
        let output = await TranscriptRunner.check(file: printed, display: "copy", bless: false)
        #expect(output.headline == #"copy:62: not in the replay: "  assistant › Нет.""#)
        let xml = JUnitReport.xml(suite: "t", results: [output], seconds: 0)
        #expect(xml.contains(#"<failure message="copy:62: not in the replay: &quot;  assistant › Нет.&quot;""#))
        #expect(
            await TranscriptRunner.check(file: SafeBlessTests.handWritten, display: "x", bless: false).headline == nil)
    }

    /// A server's bidi override and zero-width characters reach a file as `\u202e` escapes,
    /// which read back as the same JSON.
    @Test func formatControlsAreWrittenEscaped() throws {
        let name = "Кружка \u{202E}ацьлак\u{202C} \u{200B}\u{2066}x\u{2069}\u{200F}"
        let body = #"{"name":"\#(name)"}"#
        let transcript = Transcript(segments: [
            Transcript.Segment(
                step: .input("hi"),
                exchanges: [
                    Transcript.Exchange(
                        method: "POST", service: "shopping", target: "/v1/messages", body: #"{"text":"hi"}"#,
                        outcome: .response(status: 200, latency: .zero, body: body), headers: [.init("X-Name", name)])
                ])
        ])
        let text = TranscriptFormat.render(transcript)
        #expect(!text.unicodeScalars.contains { $0.properties.generalCategory == .format })
        #expect(text.contains(#"\u202eацьлак\u202c \u200b\u2066x\u2069\u200f"#))
        let read = try TranscriptFormat.parse(text)
        guard case .response(_, _, let written)? = read.segments.first?.exchanges.first?.outcome else {
            Issue.record("no answer")
            return
        }
        #expect(CanonicalJSON.value(written) == CanonicalJSON.value(body))
        #expect(FormatControls.escape("\u{E0041}") == #"\udb40\udc41"#)
    }
}
