import AssistantREPL
import Foundation
import Testing

/// Replays every file in `transcripts/` through the REPL core and the engine, on a manual
/// clock and a replaying transport. Set `TRANSCRIPT_BLESS=1` to rewrite the expected output
/// of transcripts whose output changed (requests and answers are kept as written).
@Suite(.timeLimit(.minutes(2))) struct TranscriptReplayTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("transcripts")

    static var files: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".transcript") }.sorted()
    }

    @Test func corpusIsNotEmpty() {
        #expect(Self.files.count > 0, "no transcripts found in \(Self.directory.path)")
    }

    @Test(arguments: files)
    func replays(_ name: String) async throws {
        let path = Self.directory.appendingPathComponent(name).path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let transcript: Transcript
        do {
            transcript = try TranscriptFormat.parse(text)
        } catch {
            Issue.record("\(name): \(error)")
            return
        }
        let replay = await TranscriptReplayer.replay(transcript)
        let display = "transcripts/\(name)"
        if let diff = TranscriptDiff.compare(expected: transcript, actual: replay.actual, file: display) {
            if ProcessInfo.processInfo.environment["TRANSCRIPT_BLESS"] == "1" {
                try TranscriptFormat.render(replay.actual).write(toFile: path, atomically: true, encoding: .utf8)
            } else {
                Issue.record(Comment(rawValue: "\(display) differs (TRANSCRIPT_BLESS=1 rewrites it):\n\(diff)"))
            }
        }
        for problem in replay.problems {
            Issue.record(Comment(rawValue: "\(display): \(problem)"))
        }
    }
}
