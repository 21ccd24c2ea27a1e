import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL
@testable import AssistantTranscripts

/// `assistant replay`: files and folders, shards, the summary, exit codes, JUnit XML, help.
@Suite(.timeLimit(.minutes(2))) struct TranscriptRunnerTests {
    /// A folder holding a passing transcript (recorded from a piped demo session), a failing
    /// copy and a nested one.
    private struct Corpus {
        let root: String
        var passing: String { root + "/a-pass.transcript" }
        var failing: String { root + "/b-fail.transcript" }
        var nested: String { root + "/nested/c-pass.transcript" }

        init() async throws {
            root = NSTemporaryDirectory() + "runner-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: root + "/nested", withIntermediateDirectories: true)
            let repl = try await DemoREPL(recording: true)
            let recorder = try #require(repl.recorder)
            await repl.session.run(
                reader: ScriptLineReader(lines: [":product KIT-1001", ":open", ":quit"]), observer: recorder)
            let text = TranscriptFormat.render(recorder.transcript)
            try text.write(toFile: root + "/a-pass.transcript", atomically: true, encoding: .utf8)
            try text.write(toFile: root + "/nested/c-pass.transcript", atomically: true, encoding: .utf8)
            try text.replacingOccurrences(of: "Помощник магазина\n", with: "Помощник <магазина> & co\n")
                .write(toFile: root + "/b-fail.transcript", atomically: true, encoding: .utf8)
            try "not a transcript".write(toFile: root + "/notes.txt", atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    private func run(_ arguments: [String]) async -> (code: Int32, output: [String], errors: [String]) {
        let output = Locked<[String]>([])
        let errors = Locked<[String]>([])
        let code = await TranscriptRunner.main(
            arguments, standardOutput: { line in output.withLock { $0.append(line) } },
            standardError: { line in errors.withLock { $0.append(line) } })
        return (code, output.withLock { $0 }, errors.withLock { $0 })
    }

    @Test func foldersAreSearchedForTranscriptsSortedAndWithoutRepeats() async throws {
        let corpus = try await Corpus()
        defer { corpus.remove() }
        #expect(
            try TranscriptRunner.files(in: [corpus.root, corpus.passing]) == [
                corpus.passing, corpus.failing, corpus.nested,
            ])
        #expect(throws: TranscriptRunner.PathError.self) { try TranscriptRunner.files(in: [corpus.root + "/missing"]) }
    }

    @Test func shardsTogetherRunEveryFileExactlyOnce() {
        let files = (1...11).map { "f\($0 < 10 ? "0" : "")\($0)" }
        for count in 1...4 {
            let parts = (1...count).map { TranscriptRunnerOptions.Shard(index: $0, count: count).select(files) }
            #expect(parts.flatMap { $0 }.sorted() == files, "\(count) shards")
            #expect(parts.map(\.count).max()! - parts.map(\.count).min()! <= 1, "balanced")
        }
    }

    @Test func aRunPrintsALinePerFileAndTheSummaryAndExitsOneOnAFailure() async throws {
        let corpus = try await Corpus()
        defer { corpus.remove() }
        let all = await run([corpus.root])
        #expect(all.code == 1)
        #expect(all.output.first == "PASS  \(corpus.passing)")
        #expect(all.output.contains("FAIL  \(corpus.failing)"))
        #expect(all.output.contains { $0.contains("\n-  ┌─ Помощник <магазина> & co\n+  ┌─ Помощник магазина\n") })
        #expect(all.output.last?.hasPrefix("2 passed, 1 failed in ") == true)
        let passing = await run([corpus.passing, corpus.nested, "--jobs", "1"])
        #expect(passing.code == 0)
        #expect(passing.output.last?.hasPrefix("2 passed, 0 failed in ") == true)
    }

    @Test func shardsOfARunSplitTheSortedFiles() async throws {
        let corpus = try await Corpus()
        defer { corpus.remove() }
        let first = await run(["--shard", "1/2", corpus.root])
        let second = await run(["--shard=2/2", corpus.root])
        let ran = (first.output + second.output).filter { $0.hasPrefix("PASS") || $0.hasPrefix("FAIL") }
        #expect(ran.map { String($0.dropFirst(6)) }.sorted() == [corpus.passing, corpus.failing, corpus.nested])
        #expect(first.output.last?.contains("(shard 1/2 of 3 files)") == true)
    }

    @Test func aJUnitReportThatCannotBeWrittenIsSaidBeforeAnyReplay() async throws {
        let corpus = try await Corpus()
        defer { corpus.remove() }
        let missing = corpus.root + "/no-such-folder/results.xml"
        let (code, output, errors) = await run(["--junit", missing, corpus.root])
        #expect(code == 2)
        #expect(output.isEmpty, "nothing replayed")
        #expect(
            errors == [
                "assistant replay: cannot write \(missing): \(corpus.root)/no-such-folder is not a writable folder"
            ])
    }

    @Test func junitXMLHoldsATestcasePerFileAndTheDiffInTheFailure() async throws {
        let corpus = try await Corpus()
        defer { corpus.remove() }
        let path = corpus.root + "/results.xml"
        _ = await run(["--junit", path, corpus.root])
        let xml = try String(contentsOfFile: path, encoding: .utf8)
        #expect(xml.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
        #expect(xml.contains(#"<testsuite name="transcripts" tests="3" failures="1" errors="0""#))
        #expect(xml.components(separatedBy: "<testcase ").count == 4)
        #expect(xml.contains(#"<failure message="\#(corpus.failing):"#))
        #expect(
            xml.contains(
                #"not in the replay: &quot;  ┌─ Помощник &lt;магазина&gt; &amp; co&quot;" type="TranscriptMismatch">"#))
        #expect(xml.contains("Помощник &lt;магазина&gt; &amp; co"), "the diff, escaped")
        #expect(!xml.contains("<магазина>"))
        #expect(JUnitReport.escape("a\u{1}b\"'") == "a\\u{1}b&quot;&apos;")
    }

    @Test func usageErrorsAndEmptyFoldersExitTwo() async throws {
        let corpus = try await Corpus()
        defer { corpus.remove() }
        #expect(await run([]).code == 2)
        #expect(
            await run(["--shard", "3/2", corpus.root]).errors.first
                == "assistant replay: The value '3/2' for --shard is out of range: K must be from 1 to 2, e.g. 1/2.\n"
                + "Try 'assistant replay --help'.")
        #expect(
            await run(["--shard", "-1/3", corpus.root]).errors.first?.hasPrefix(
                "assistant replay: The value '-1/3' for --shard is out of range: K must be from 1 to 3") == true)
        #expect(await run(["--shard", "x", corpus.root]).errors.first?.contains("is invalid: use K/N") == true)
        #expect(
            await run(["--jobs", "0", corpus.root]).errors.first?.hasPrefix(
                "assistant replay: The value '0' for --jobs is out of range: use a number from 1 to 1024.") == true)
        #expect(await run(["--jobs", "-2", corpus.root]).errors.first?.contains("is out of range") == true)
        #expect(await run(["--repeat", "0", corpus.root]).errors.first?.contains("is out of range") == true)
        #expect(await run(["--repeat", "2", "--bless", corpus.root]).code == 2)
        #expect(
            await run(["--bless=all", corpus.root]).errors.first?.contains("use --bless or --bless=interactive") == true
        )
        #expect(
            await run(["--frobnicate", corpus.root]).errors.first
                == "assistant replay: Unknown option '--frobnicate'.\nTry 'assistant replay --help'.")
        #expect(await run([corpus.root + "/missing"]).code == 2)
        #expect(await run([corpus.root + "/nested/none"]).code == 2)
        try FileManager.default.createDirectory(atPath: corpus.root + "/empty", withIntermediateDirectories: true)
        let empty = await run([corpus.root + "/empty"])
        #expect(empty.code == 2)
        #expect(empty.errors.first?.contains("no *.transcript file") == true)
    }

    @Test func blessRewritesADifferingFileWhichThenPasses() async throws {
        let corpus = try await Corpus()
        defer { corpus.remove() }
        let blessed = await run(["--bless", corpus.failing])
        #expect(blessed.code == 0)
        #expect(blessed.output.first == "BLESS  \(corpus.failing)")
        #expect(blessed.output.last?.hasPrefix("0 passed, 0 failed, 1 blessed") == true)
        #expect(await run([corpus.failing]).code == 0)
    }

    @Test func optionsParseInAnyOrder() throws {
        let options = try TranscriptRunnerOptions.parse([
            "a", "--bless", "--junit=out.xml", "--shard", "2/3", "--", "--b",
        ])
        #expect(options.paths == ["a", "--b"])
        #expect(options.bless && options.junitPath == "out.xml" && options.shard == .init(index: 2, count: 3))
        #expect(try TranscriptRunnerOptions.parse(["-h"]).showHelp)
        #expect(throws: TranscriptRunnerOptions.ParseError.self) { try TranscriptRunnerOptions.parse(["--junit"]) }
        #expect(throws: TranscriptRunnerOptions.ParseError.self) {
            try TranscriptRunnerOptions.parse(["--jobs", "0", "a"])
        }
    }

    /// The replay's table is parsed as `assistant`'s is: a typo gets the closest option, a
    /// flag's value is checked, a value may be joined with `=`.
    @Test func mistakesAreNamedAsForTheREPLsOptions() throws {
        func message(_ arguments: [String]) -> String? {
            do {
                _ = try TranscriptRunnerOptions.parse(arguments)
                return nil
            } catch { return error.message }
        }
        #expect(message(["--juint", "x", "a"]) == "Unknown option '--juint'. Did you mean '--junit'?")
        #expect(
            message(["--bless=all", "a"])
                == "The value 'all' for --bless is invalid: use --bless or --bless=interactive.")
        #expect(message(["--help=yes"]) == "The option '--help' does not take a value.")
        #expect(message(["--jobs=x", "a"]) == "The value 'x' for --jobs is invalid: use a number from 1 to 1024.")
        #expect(try TranscriptRunnerOptions.parse(["--bless=interactive", "a"]).interactive)
    }

    /// The options part is generated from the option table, as `assistant --help` is.
    @Test func helpTextIsPinned() async {
        let expected = """
            OVERVIEW: Replay transcripts as tests, without Swift.

            Each file's session runs again through the REPL and the engine, on virtual
            time, against its recorded exchanges; a file passes when the REPL prints what
            the file says and the engine sends what it says. Files replay in parallel.

            USAGE: assistant replay [--bless[=interactive]] [--junit <file>]
                                    [--shard <k>/<n>] [--jobs <n>] [--repeat <n>] <path>...

            ARGUMENTS:
              <path>                  A transcript file, or a folder searched for
                                      *.transcript files, recursively.

            OPTIONS:
              --bless[=interactive]   Rewrite each file whose replay differs with what this
                                      run produced (inputs, answers and comments stay), only
                                      when that replays green; else the file is left as it
                                      was and the report says why. Read the change with git
                                      diff. With =interactive: one file at a time, asking
                                      for each hunk whether to take it (y/n; no answer or no
                                      terminal rejects it).
              --junit <file>          Also write the results as JUnit XML, the diff of each
                                      failure in its <failure> element.
              --shard <k>/<n>         Replay only part k of n: the sorted files are dealt
                                      out in turn, so 1/2 and 2/2 together replay every file
                                      once.
              --jobs <n>              Replay at most n files at once (default: one per
                                      core).
              --repeat <n>            Replay each file n times; a file fails when any replay
                                      prints or sends anything differently from the first,
                                      and the two versions are shown.
              -h, --help              Show help information.

            Prints one line per file (PASS, FAIL with its diff, or BLESS) and a summary
            line, "N passed, M failed". Exits 0 when every file passed, 1 when one failed,
            2 on a usage error or when the paths hold no transcript.
            """
        #expect(TranscriptRunnerOptions.helpText() == expected)
        for line in expected.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
        let help = await run(["--help"])
        #expect(help.code == 0 && help.output == [expected])
    }
}
