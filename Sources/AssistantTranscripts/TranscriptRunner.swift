import Foundation
import ShoppingAssistant

#if canImport(Glibc)
    import Glibc
#endif

/// Runs transcripts as tests: `assistant replay` for teams that do not write Swift, and the
/// `swift test` suite, through the same `check(file:display:bless:)`.
package enum TranscriptRunner {
    /// How one file came out.
    package enum Status: String, Sendable, Hashable {
        case passed = "PASS"
        case failed = "FAIL"
        /// Differed, was rewritten, and the rewritten file passes.
        case blessed = "BLESS"
    }

    package struct FileResult: Sendable, Hashable {
        /// The path as the run names it (`transcripts/x.transcript`).
        package let path: String
        package let status: Status
        /// The diff and problems of a failed file (the problems a blessing found, for a
        /// blessed one); nil when it passed.
        package let report: String?
        /// Wall time of the replay.
        package let seconds: Double
        /// The first problem, in one line (JUnit's `failure@message`); nil when it passed.
        package let headline: String?
    }

    /// A path that cannot be run: the message names it.
    package struct PathError: Error, Sendable, Hashable, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    // MARK: - Files

    /// The transcripts `paths` name, sorted and without repeats: a file as given (whatever its
    /// name), a folder's `*.transcript` files at any depth.
    package static func files(in paths: [String]) throws(PathError) -> [String] {
        var found: [String] = []
        var seen = Set<String>()
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw PathError(message: "\(path): no such file or folder")
            }
            var candidates: [String] = []
            if isDirectory.boolValue {
                let enumerator = FileManager.default.enumerator(atPath: path)
                while let relative = enumerator?.nextObject() as? String {
                    if relative.hasSuffix(".transcript") {
                        candidates.append((path as NSString).appendingPathComponent(relative))
                    }
                }
            } else {
                candidates.append(path)
            }
            for candidate in candidates where seen.insert((candidate as NSString).standardizingPath).inserted {
                found.append(candidate)
            }
        }
        return found.sorted()
    }

    // MARK: - One file

    /// Replays the transcript at `path`, naming it `display` in the report. With `bless`, a
    /// file that differs is rewritten with this run's output — only when the rewritten text
    /// replays green on its own, and atomically; otherwise the file stays as it was and the
    /// report says what could not be reconciled. With a `review`, only the hunks it accepts are
    /// taken (`--bless=interactive`). With `repeats` above one it replays that many times and
    /// fails when any replay did anything differently from the first (`--repeat`).
    package static func check(
        file path: String, display: String, bless: Bool, repeats: Int = 1, review: HunkReview? = nil
    ) async -> FileResult {
        let seconds = secondsSince()
        func result(_ status: Status, _ report: String?, headline: String? = nil) -> FileResult {
            let first = report.flatMap { $0.split(separator: "\n", maxSplits: 1).first.map(String.init) }
            return FileResult(
                path: display, status: status, report: report, seconds: seconds(),
                headline: status == .failed ? headline ?? first : nil)
        }
        let original: String
        let transcript: Transcript
        do {
            original = try String(contentsOfFile: path, encoding: .utf8)
            transcript = try TranscriptFormat.parse(original)
        } catch let error as TranscriptError {
            return result(.failed, "\(display):\(error.line): \(error.message)")
        } catch {
            return result(.failed, "\(display): cannot be read: \(error.localizedDescription)")
        }
        // A claim of a rule the spec does not have fails the file, whatever the replay does.
        let claims = CoversClaim.problems(in: original).map { "\(display):\($0)" }
        let checked = await check(
            original: original, transcript: transcript, path: path, display: display, bless: bless, repeats: repeats,
            review: review)
        guard !claims.isEmpty else {
            return result(checked.status, checked.report, headline: checked.headline)
        }
        let blessed = checked.status == .blessed ? ["\(display): rewritten by bless; its claims still fail it"] : []
        return result(.failed, (claims + [checked.report].compactMap { $0 } + blessed).joined(separator: "\n"))
    }

    /// What replaying (and blessing) a read file came to.
    private struct Checked {
        let status: Status
        let report: String?
        var headline: String?
    }

    private static func check(
        original: String, transcript: Transcript, path: String, display: String, bless: Bool, repeats: Int,
        review: HunkReview?
    ) async -> Checked {
        func result(_ status: Status, _ report: String?) -> Checked {
            Checked(status: status, report: report)
        }
        let replay = await TranscriptReplayer.replay(transcript)
        if repeats > 1, let varies = await variation(of: transcript, first: replay, repeats: repeats, display: display)
        {
            return result(.failed, varies)
        }
        guard let report = replay.report(file: display) else { return result(.passed, nil) }
        let failed = Checked(status: .failed, report: report, headline: replay.headline(file: display))
        guard bless, replay.diff.differs else { return failed }
        guard bless, replay.diff.differs else { return result(.failed, report) }
        var text = TranscriptFormat.render(replay.actual)
        if let review {
            let changes = LineChanges(old: Self.lines(of: original), new: Self.lines(of: text))
            var accepted = Set<Int>()
            for hunk in changes.hunks.indices where review.accepts(changes.render(hunk: hunk, name: display)) {
                accepted.insert(hunk)
            }
            guard !accepted.isEmpty else {
                return Checked(
                    status: .failed, report: report + "\n\(display): no change accepted: unchanged",
                    headline: failed.headline)
            }
            text = changes.merged(accepting: accepted).joined(separator: "\n") + "\n"
        }
        // The rewritten text must pass on its own, read back as the file will be (its own line
        // numbers in any report), before it replaces the file.
        let unchanged = "\(display): not blessed, the file is unchanged: "
        let rewritten: Transcript
        do {
            rewritten = try TranscriptFormat.parse(text)
        } catch {
            return Checked(
                status: .failed, report: report + "\n" + unchanged + "the rewritten text would not read: \(error)",
                headline: failed.headline)
        }
        let again = await TranscriptReplayer.replay(rewritten)
        if let still = again.report(file: display + " (as blessed)") {
            return Checked(
                status: .failed, report: report + "\n" + unchanged + "the rewritten file would still fail:\n" + still,
                headline: failed.headline)
        }
        // A blessed file keeps its permissions.
        let mode = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int
        if let failure = AtomicFile.replace(path, with: Data(text.utf8), permissions: mode_t(mode ?? 0o644)) {
            return Checked(
                status: .failed, report: report + "\n" + unchanged + "it cannot be rewritten: \(failure)",
                headline: failed.headline)
        }
        return result(
            .blessed,
            replay.problems.isEmpty ? nil : replay.problems.map { "\(display): \($0)" }.joined(separator: "\n"))
    }

    /// A file's lines without the final newline's empty one.
    private static func lines(of text: String) -> [String] {
        var lines = TranscriptFormat.lines(of: text)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// Replays `transcript` until `repeats` replays are done, and says how the first replay
    /// that came out differently from `first` differed; nil when every one was the same.
    private static func variation(
        of transcript: Transcript, first: TranscriptReplay, repeats: Int, display: String
    ) async -> String? {
        var traces = [first.trace]
        for _ in 2...repeats { traces.append(await TranscriptReplayer.replay(transcript).trace) }
        return variation(in: traces, display: display)
    }

    /// How the traces of several replays of one file vary: how many differ from the first, and
    /// the diff between the first and the first that differs; nil when all are the same.
    static func variation(in traces: [[String]], display: String) -> String? {
        guard let first = traces.first else { return nil }
        let differing = traces.indices.filter { traces[$0] != first }
        guard let index = differing.first else { return nil }
        let diff =
            LineChanges(old: first, new: traces[index]).render(
                oldName: "\(display) (replay 1)", newName: "\(display) (replay \(index + 1))")
            ?? ""
        return "\(display): the replay varies: \(differing.count) of \(traces.count) replays differ from the first, "
            + "replay \(index + 1) so:\n" + diff
    }

    /// Wall seconds since this call, as a function.
    private static func secondsSince() -> @Sendable () -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        return {
            let elapsed = start.duration(to: clock.now)
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }

    // MARK: - Many files

    /// Replays `files`, at most `jobs` at once, and hands each result to `report` in the
    /// files' order as soon as it and every file before it are done.
    package static func run(
        _ files: [String], bless: Bool, jobs: Int, repeats: Int = 1, review: HunkReview? = nil,
        report: @Sendable (FileResult) -> Void = { _ in }
    ) async -> [FileResult] {
        var results = [FileResult?](repeating: nil, count: files.count)
        var printed = 0
        await withTaskGroup(of: (Int, FileResult).self) { group in
            var next = 0
            func launch() {
                guard next < files.count else { return }
                let index = next
                next += 1
                group.addTask {
                    (
                        index,
                        await check(
                            file: files[index], display: files[index], bless: bless, repeats: repeats, review: review)
                    )
                }
            }
            for _ in 0..<max(1, jobs) { launch() }
            for await (index, result) in group {
                results[index] = result
                while printed < results.count, let ready = results[printed] {
                    report(ready)
                    printed += 1
                }
                launch()
            }
        }
        return results.compactMap { $0 }
    }

    /// The summary line: `N passed, M failed` (and how many were blessed).
    package static func summary(_ results: [FileResult]) -> String {
        let passed = results.filter { $0.status == .passed }.count
        let failed = results.filter { $0.status == .failed }.count
        let blessed = results.filter { $0.status == .blessed }.count
        return "\(passed) passed, \(failed) failed" + (blessed > 0 ? ", \(blessed) blessed" : "")
    }

    // MARK: - The command

    /// `assistant replay ARGUMENTS`: returns the exit code (0 all passed, 1 a file failed, 2 a
    /// usage error or no transcript).
    package static func main(
        _ arguments: [String], standardOutput: @escaping @Sendable (String) -> Void = { print($0) },
        standardError: @escaping @Sendable (String) -> Void = {
            FileHandle.standardError.write(Data(($0 + "\n").utf8))
        },
        standardInput: @escaping @Sendable () -> String? = { isatty(STDIN_FILENO) == 1 ? readLine() : nil }
    ) async -> Int32 {
        let options: TranscriptRunnerOptions
        do {
            options = try TranscriptRunnerOptions.parse(arguments)
        } catch {
            standardError("assistant replay: \(error.message)\nTry 'assistant replay --help'.")
            return 2
        }
        if options.showHelp {
            standardOutput(TranscriptRunnerOptions.helpText())
            return 0
        }
        let all: [String]
        do {
            all = try files(in: options.paths)
        } catch {
            standardError("assistant replay: \(error.message)")
            return 2
        }
        guard !all.isEmpty else {
            standardError("assistant replay: no *.transcript file in \(options.paths.joined(separator: ", "))")
            return 2
        }
        // A report that cannot be written is said before the run, not after it.
        if let path = options.junitPath {
            let directory = (path as NSString).deletingLastPathComponent
            let folder = directory.isEmpty ? "." : directory
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue,
                FileManager.default.isWritableFile(atPath: folder)
            else {
                standardError("assistant replay: cannot write \(path): \(folder) is not a writable folder")
                return 2
            }
        }
        let selected = options.shard.map { $0.select(all) } ?? all
        let elapsed = secondsSince()
        // Interactive blessing asks about one file at a time.
        let jobs = options.interactive ? 1 : options.jobs ?? ProcessInfo.processInfo.activeProcessorCount
        let review =
            options.interactive
            ? HunkReview { hunk in
                standardOutput(FormatControls.visible(hunk.joined(separator: "\n")))
                standardOutput("Accept this change? [y/N]")
                let answer = standardInput()?.trimmingCharacters(in: .whitespaces).lowercased()
                return answer == "y" || answer == "yes"
            } : nil
        let results = await run(
            selected, bless: options.bless, jobs: jobs, repeats: options.repeats, review: review
        ) { result in
            // What a file or the engine wrote is quoted with its control characters spelled out.
            standardOutput("\(result.status.rawValue)  \(FormatControls.visible(result.path))")
            if let report = result.report { standardOutput(FormatControls.visible(report)) }
        }
        let seconds = elapsed()
        let shard = options.shard.map { " (shard \($0.index)/\($0.count) of \(all.count) files)" } ?? ""
        standardOutput(summary(results) + shard + String(format: " in %.2f s", seconds))
        if let path = options.junitPath {
            let suite = "transcripts" + (options.shard.map { " \($0.index)/\($0.count)" } ?? "")
            do {
                try JUnitReport.xml(suite: suite, results: results, seconds: seconds)
                    .write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                standardError("assistant replay: cannot write \(path): \(error.localizedDescription)")
                return 2
            }
        }
        return results.contains { $0.status == .failed } ? 1 : 0
    }
}
