import AssistantREPL
import Foundation
import ShoppingAssistant

/// Command-line options of `assistant-bench`.
struct BenchOptions: Sendable {
    /// Smaller sizes and fewer repetitions: a smoke run that finishes in well under a minute.
    var quick = false
    /// The figures to run (1–11); all by default.
    var figures: Set<Int> = Set(figureNumbers)
    /// Where the transcript corpus is; found from the working directory or the source tree.
    var transcriptsDirectory: String?
    /// Internal: run this one figure in this process and report its verdict on stdout. The
    /// bench runs each figure so, in a fresh process, so that figures cannot disturb each
    /// other's memory figures or leave threads behind.
    var childFigure: Int?
    /// Run every figure in this process (for profiling one figure under valgrind).
    var inProcess = false

    /// Print the usage and exit (`--help`, `-h`).
    var showHelp = false

    static let childFlag = "--child-figure"
    static let figureNumbers = 1...11

    /// The options, parsed and described as `assistant`'s are.
    static let table = OptionTable<BenchOptions>([
        OptionDeclaration("quick", help: "small sizes and few repetitions (a smoke run)") { options, _ in
            options.quick = true
            return nil
        },
        OptionDeclaration("only", value: .required("list"), help: "run only these figures (1-11), e.g. --only 1,4") {
            options, value in
            let figures = value.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !figures.isEmpty, figures.allSatisfy({ $0.map(figureNumbers.contains) ?? false }) else {
                return "use figure numbers 1-11, e.g. --only 1,4"
            }
            options.figures = Set(figures.compactMap { $0 })
            return nil
        },
        OptionDeclaration(
            "transcripts", value: .required("dir"), help: "the transcript corpus for figure 6 (default: ./transcripts)"
        ) { options, value in
            options.transcriptsDirectory = value
            return nil
        },
        OptionDeclaration(
            "in-process",
            help:
                "run the figures in this process instead of one fresh process each (for profiling, e.g. under "
                + "valgrind --tool=callgrind)"
        ) { options, _ in
            options.inProcess = true
            return nil
        },
        OptionDeclaration(
            String(childFlag.dropFirst(2)), value: .required("n"),
            help: "internal: run figure n in this process and print its verdict for the parent"
        ) { options, value in
            guard let figure = Int(value), figureNumbers.contains(figure) else { return "use a figure number 1-11" }
            options.childFigure = figure
            return nil
        },
        OptionDeclaration("help", short: "h", help: "this text") { options, _ in
            options.showHelp = true
            return nil
        },
    ])

    static let usage = """
        usage: assistant-bench [--quick] [--only 1,2,…] [--transcripts DIR] [--in-process]

        Prints performance figures of the shopping assistant engine, each as a ratio to a
        baseline measured side by side in the same run, with its inputs and a verdict.

        \(table.helpLines(labelColumn: 24).joined(separator: "\n"))

        BENCH_DEBUG=1 in the environment prints the engines' debug log to stderr.

        Figures: 1 reply processing, 2 loopback round trip, 3 product actions, 4 long dialog,
        5 many engines, 6 transcript replay, 7 REPL start-up, 8 carousel with a
        10,000-character name, 9 many engines sending at once, 10 the delivery outbox on a
        file store, 11 restoring a dialog after a restart.
        Build in release mode: swift run -c release assistant-bench. Figure 7 runs the
        `assistant` executable found next to this one: build it first with the same flags
        (swift build -c release --product assistant).
        """

    /// Parses the arguments, or returns the message to print and the exit status.
    static func parse(_ arguments: [String]) -> Result<BenchOptions, BenchUsageError> {
        do {
            let options = try table.parse(arguments, into: BenchOptions())
            return options.showHelp ? .failure(.help) : .success(options)
        } catch {
            return .failure(.invalid(error.message))
        }
    }

    /// The arguments that make a child process run `figure` with these options.
    func childArguments(figure: Int) -> [String] {
        [Self.childFlag, String(figure)] + (quick ? ["--quick"] : [])
            + (transcriptsDirectory.map { ["--transcripts", $0] } ?? [])
    }

    /// `quick` or `full`, whichever applies.
    func size<T>(quick: T, full: T) -> T { self.quick ? quick : full }
}

enum BenchUsageError: Error {
    case help
    case invalid(String)
}

// MARK: - Report

/// What one figure concluded, for the summary at the end.
struct Verdict: Sendable, Codable {
    let figure: Int
    let name: String
    /// The headline number, e.g. `1.31×` or `12.4 KiB/engine`.
    let value: String
    /// The goal, if the figure has one, e.g. `≤ 1.5×`.
    let goal: String?
    /// `nil` when there is no goal.
    let met: Bool?

    var line: String {
        let outcome: String
        switch met {
        case true?: outcome = "MET"
        case false?: outcome = "MISSED"
        case nil: outcome = "no goal"
        }
        return "\(figure). \(name): \(value)" + (goal.map { " (goal \($0))" } ?? "") + " — \(outcome)"
    }
}

/// Prints as it goes, so a long run shows progress.
enum Report {
    static func heading(_ figure: Int, _ title: String) {
        print("")
        print("\(figure). \(title)")
    }

    static func line(_ text: String) {
        print("   " + text)
        fflush(nil)  // all streams; `stdout` itself is a global var Swift 6 rejects
    }

    private static let recorded = Locked<[Verdict]>([])

    /// Every verdict printed so far in this process, sub-figures included, for the summary.
    static var verdicts: [Verdict] { recorded.withLock { $0 } }

    /// The one-line verdict against the goal; the summary lists it too.
    static func verdict(_ verdict: Verdict) {
        recorded.withLock { $0.append(verdict) }
        let text: String
        switch verdict.met {
        case true?: text = "verdict: MET — \(verdict.value), goal \(verdict.goal ?? "")"
        case false?: text = "verdict: MISSED — \(verdict.value), goal \(verdict.goal ?? "")"
        case nil: text = "verdict: \(verdict.value) (no goal set)"
        }
        line(text)
    }
}
