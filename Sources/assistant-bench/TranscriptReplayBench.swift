import AssistantREPL
import AssistantTranscripts
import Foundation

/// Figure 6: how fast the transcript corpus replays. Every file in `transcripts/` is replayed
/// with `TranscriptReplayer` (REPL core, engine, manual clock, replaying transport) several
/// times; the figure is the wall time spent against the virtual time the replays covered.
enum TranscriptReplayBench {
    static func run(_ options: BenchOptions) async -> Verdict {
        let repetitions = options.size(quick: 3, full: 10)
        Report.heading(6, "Transcript corpus replay: wall time vs virtual time covered")
        guard let directory = locate(options.transcriptsDirectory) else {
            Report.line("skipped: no transcripts/ directory (run from the package root or pass --transcripts DIR)")
            return Verdict(figure: 6, name: "transcript replay", value: "skipped", goal: nil, met: nil)
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".transcript") }.sorted()
        Report.line(
            "inputs: \(names.count) files in \(directory), \(repetitions) replays each after 1 warm-up, median per file"
        )

        var totalWall = 0.0
        var totalVirtual = 0.0
        var replayed = 0
        var steps = 0
        var rows: [(name: String, wall: Double, virtual: Double)] = []
        var withProblems: [String] = []
        for name in names {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                Report.line("\(name): unreadable, skipped")
                continue
            }
            let transcript: Transcript
            do {
                transcript = try TranscriptFormat.parse(text)
            } catch {
                Report.line("\(name): does not parse (\(error)), skipped")
                continue
            }
            var virtual = Duration.zero
            var problems: [String] = []
            var wall = Samples()
            for repetition in 0...repetitions {
                let start = Timing.now
                let replay = await TranscriptReplayer.replay(transcript)
                let elapsed = start.duration(to: Timing.now)
                virtual = replay.virtualTime
                problems = replay.problems
                if repetition > 0 { wall.append(elapsed) }
            }
            if !problems.isEmpty { withProblems.append(name) }
            totalWall += wall.median
            totalVirtual += virtual.seconds
            steps += transcript.segments.count
            replayed += 1
            rows.append((name, wall.median, virtual.seconds))
        }
        for row in rows.sorted(by: { $0.wall > $1.wall }).prefix(3) {
            Report.line(
                "slowest: \(row.name): wall \(Format.seconds(row.wall)), virtual \(Format.seconds(row.virtual))")
        }
        guard replayed > 0 else {
            Report.line("skipped: no transcript could be replayed")
            return Verdict(figure: 6, name: "transcript replay", value: "skipped", goal: nil, met: nil)
        }
        let ratio = totalWall / totalVirtual
        Report.line(
            "total: wall \(Format.seconds(totalWall)) for \(Format.seconds(totalVirtual)) of virtual time "
                + "(\(replayed) files, \(steps) steps; \(Format.seconds(totalWall / Double(steps))) per step)")
        Report.line(
            "ratio wall / virtual: \(String(format: "%.2g", ratio)) (virtual time runs "
                + "\(Format.count(Int((1 / ratio).rounded())))× faster than the wall clock)")
        if !withProblems.isEmpty {
            Report.line("note: replays reported problems in \(withProblems.joined(separator: ", ")) (see swift test)")
        }
        let verdict = Verdict(
            figure: 6, name: "transcript replay, wall / virtual", value: String(format: "%.2g", ratio), goal: nil,
            met: nil)
        Report.verdict(verdict)
        return verdict
    }

    /// `--transcripts`, else `./transcripts`, else the package's own, found from this file.
    private static func locate(_ given: String?) -> String? {
        func isDirectory(_ path: String) -> Bool {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
        if let given { return isDirectory(given) ? given : nil }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let candidates = [
            FileManager.default.currentDirectoryPath + "/transcripts",
            packageRoot.appendingPathComponent("transcripts").path,
        ]
        return candidates.first(where: isDirectory)
    }
}
