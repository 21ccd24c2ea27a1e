import AssistantREPL
import Foundation

/// The options of `assistant replay`, parsed from the arguments after `replay`.
package struct TranscriptRunnerOptions: Sendable, Hashable {
    /// Files and folders to replay, as given.
    package var paths: [String] = []
    /// Rewrite files whose replay differs (`--bless`).
    package var bless = false
    /// Ask hunk by hunk which changes to take (`--bless=interactive`).
    package var interactive = false
    /// Where to write JUnit XML (`--junit FILE`).
    package var junitPath: String?
    /// Run only one part of the files (`--shard K/N`).
    package var shard: Shard?
    /// How many files replay at once (`--jobs N`); nil: one per core.
    package var jobs: Int?
    /// How many times each file replays (`--repeat N`); a file whose replays do not all come out
    /// the same fails.
    package var repeats = 1
    /// Print the help and exit (`--help`, `-h`).
    package var showHelp = false

    package init() {}

    /// Part `index` (1-based) of `count`: the files at sorted positions `index - 1`,
    /// `index - 1 + count`, … — every file in exactly one part.
    package struct Shard: Sendable, Hashable {
        package var index: Int
        package var count: Int

        package init(index: Int, count: Int) {
            self.index = index
            self.count = count
        }

        package func select<Element>(_ sorted: [Element]) -> [Element] {
            sorted.enumerated().filter { $0.offset % count == index - 1 }.map(\.element)
        }
    }

    /// A command line `assistant replay` rejects: the message names the argument; exit 2.
    package typealias ParseError = CommandLineError

    /// The options of `assistant replay`, in help order.
    package static let table = OptionTable<Self>(
        [
            OptionDeclaration(
                "bless", value: .inlineOnly("interactive"),
                help:
                    "Rewrite each file whose replay differs with what this run produced (inputs, answers and "
                    + "comments stay), only when that replays green; else the file is left as it was and the "
                    + "report says why. Read the change with git diff. With =interactive: one file at a time, "
                    + "asking for each hunk whether to take it (y/n; no answer or no terminal rejects it)."
            ) { options, value in
                guard value.isEmpty || value == "interactive" else { return "use --bless or --bless=interactive" }
                options.bless = true
                options.interactive = !value.isEmpty
                return nil
            },
            OptionDeclaration(
                "junit", value: .required("file"),
                help: "Also write the results as JUnit XML, the diff of each failure in its <failure> element."
            ) { options, value in
                options.junitPath = value
                return nil
            },
            OptionDeclaration(
                "shard", value: .required("k>/<n"),
                help:
                    "Replay only part k of n: the sorted files are dealt out in turn, so 1/2 and 2/2 together "
                    + "replay every file once."
            ) { options, value in
                let numbers = value.split(separator: "/", omittingEmptySubsequences: false).map { Int($0) }
                guard numbers.count == 2, let k = numbers[0], let n = numbers[1] else {
                    return "use K/N with 1 <= K <= N, e.g. 1/2"
                }
                guard n >= 1, (1...n).contains(k) else {
                    return .outOfRange(
                        (n < 1 ? "N must be at least 1" : "K must be from 1 to \(n)") + ", e.g. 1/\(max(n, 2))")
                }
                options.shard = Shard(index: k, count: n)
                return nil
            },
            OptionDeclaration(
                "jobs", value: .required("n"), help: "Replay at most n files at once (default: one per core)."
            ) { options, value in
                guard let jobs = Int(value) else { return "use a number from 1 to 1024" }
                guard (1...1024).contains(jobs) else { return .outOfRange("use a number from 1 to 1024") }
                options.jobs = jobs
                return nil
            },
            OptionDeclaration(
                "repeat", value: .required("n"),
                help:
                    "Replay each file n times; a file fails when any replay prints or sends anything differently "
                    + "from the first, and the two versions are shown."
            ) { options, value in
                guard let count = Int(value) else { return "use a number from 1 to 10000" }
                guard (1...10_000).contains(count) else { return .outOfRange("use a number from 1 to 10000") }
                options.repeats = count
                return nil
            },
            OptionDeclaration("help", short: "h", help: "Show help information.") { options, _ in
                options.showHelp = true
                return nil
            },
        ], positional: { $0.paths.append($1) })

    /// Parses the arguments after `replay`. Options and paths may come in any order; after
    /// `--` everything is a path.
    package static func parse(_ arguments: [String]) throws(ParseError) -> Self {
        let options = try table.parse(arguments, into: Self())
        if options.bless, options.repeats > 1 {
            throw ParseError(.conflict("--repeat checks files and --bless rewrites them: use one or the other."))
        }
        if !options.showHelp, options.paths.isEmpty {
            throw ParseError(
                .conflict("No transcript given: name files or folders, e.g. 'assistant replay transcripts'."))
        }
        return options
    }

    /// The usage line, shared by `--help` and error messages.
    package static let usage = """
        USAGE: assistant replay [--bless[=interactive]] [--junit <file>]
                                [--shard <k>/<n>] [--jobs <n>] [--repeat <n>] <path>...
        """

    /// The `assistant replay --help` text, without a final newline.
    package static func helpText() -> String {
        """
        OVERVIEW: Replay transcripts as tests, without Swift.

        Each file's session runs again through the REPL and the engine, on virtual
        time, against its recorded exchanges; a file passes when the REPL prints what
        the file says and the engine sends what it says. Files replay in parallel.

        \(usage)

        ARGUMENTS:
          <path>                  A transcript file, or a folder searched for
                                  *.transcript files, recursively.

        OPTIONS:
        \(table.helpLines().joined(separator: "\n"))

        Prints one line per file (PASS, FAIL with its diff, or BLESS) and a summary
        line, "N passed, M failed". Exits 0 when every file passed, 1 when one failed,
        2 on a usage error or when the paths hold no transcript.
        """
    }
}
