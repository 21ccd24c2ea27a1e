import AssistantTranscripts
import Foundation
import ShoppingAssistantTestSupport
import Testing

/// Replays every file in `transcripts/` through the REPL core and the engine, on a manual
/// clock and a replaying transport, with the code `assistant replay` runs. Set
/// `TRANSCRIPT_BLESS=1` to rewrite the files whose replay differs (inputs, answers and
/// comments are kept as written).
@Suite(.timeLimit(.minutes(2))) struct TranscriptReplayTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("transcripts")

    static var files: [String] {
        ((try? TranscriptRunner.files(in: [directory.path])) ?? []).map {
            String($0.dropFirst(directory.path.count + 1))
        }
    }

    @Test func corpusIsNotEmpty() {
        #expect(Self.files.count > 0, "no transcripts found in \(Self.directory.path)")
    }

    @Test(arguments: files)
    func replays(_ name: String) async throws {
        let bless = ProcessInfo.processInfo.environment["TRANSCRIPT_BLESS"] == "1"
        let display = "transcripts/\(name)"
        let result = await TranscriptRunner.check(
            file: Self.directory.appendingPathComponent(name).path, display: display, bless: bless)
        guard result.status == .failed else { return }
        for part in ConsoleParts.split(result.report ?? "\(display) failed", title: display) {
            Issue.record(Comment(rawValue: part))
        }
    }
}
