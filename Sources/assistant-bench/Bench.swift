import Foundation
import ShoppingAssistant

/// Runs the selected figures, each in a fresh child process by default, and prints a summary
/// of the verdicts.
enum Bench {
    /// A child prints its verdict on a line starting with this, as JSON.
    static let verdictPrefix = "@verdict "

    static let figures: [Int: @Sendable (BenchOptions) async -> Verdict] = [
        1: ReplyProcessingBench.run,
        2: LoopbackRoundTripBench.run,
        3: ProductActionBench.run,
        4: LongDialogBench.run,
        5: ManyEnginesBench.run,
        6: TranscriptReplayBench.run,
        7: REPLStartupBench.run,
        8: CarouselDrawingBench.run,
        9: ManySendersBench.run,
        10: OutboxBench.run,
        11: DialogRestoreBench.run,
    ]

    /// Runs on the cooperative pool and blocks the calling thread until done; returns the
    /// process exit status.
    static func runBlocking(_ options: BenchOptions) -> Int32 {
        let done = DispatchSemaphore(value: 0)
        let status = Locked<Int32>(0)
        Task.detached {
            let result = await run(options)
            status.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return status.withLock { $0 }
    }

    static func run(_ options: BenchOptions) async -> Int32 {
        if let figure = options.childFigure, let run = figures[figure] {
            for verdict in await verdicts(of: run, options) {
                let json = (try? JSONEncoder().encode(verdict)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                print(verdictPrefix + json)
            }
            return 0
        }

        print(
            "assistant-bench — shopping assistant engine performance" + (options.quick ? " (--quick: smoke sizes)" : "")
        )
        for line in MachineFacts.lines { print("   " + line) }
        print("   every ratio compares two measurements taken side by side in this run; times are medians")
        print("   each figure runs in a fresh process" + (options.inProcess ? " (not now: --in-process)" : ""))

        var verdicts: [Verdict] = []
        var failed = false
        let start = Timing.now
        for figure in figures.keys.sorted() where options.figures.contains(figure) {
            if options.inProcess, let run = figures[figure] {
                verdicts += await Self.verdicts(of: run, options)
            } else if let childVerdicts = runChild(figure, options) {
                verdicts += childVerdicts
            } else {
                failed = true
            }
        }

        print("")
        print("Summary (\(start.duration(to: Timing.now).short) in all)")
        for verdict in verdicts { print("   " + verdict.line) }
        return failed ? 1 : 0
    }

    /// A figure's verdicts, sub-figures first, its headline verdict last.
    private static func verdicts(of run: @Sendable (BenchOptions) async -> Verdict, _ options: BenchOptions) async
        -> [Verdict]
    {
        let before = Report.verdicts.count
        let headline = await run(options)
        let printed = Array(Report.verdicts.dropFirst(before))
        return printed.contains { $0.figure == headline.figure && $0.name == headline.name }
            ? printed : printed + [headline]
    }

    /// Runs one figure in a fresh copy of this binary, passing its output through; returns
    /// every verdict it printed.
    private static func runChild(_ figure: Int, _ options: BenchOptions) -> [Verdict]? {
        guard let path = Subprocess.executablePath(),
            let child = Subprocess.spawn(path, arguments: options.childArguments(figure: figure), output: .pipe),
            let output = child.output
        else {
            print("\(figure). could not start a child process (errno \(errno))")
            return nil
        }
        var verdicts: [Verdict] = []
        Subprocess.readLines(output) { line in
            if line.hasPrefix(verdictPrefix) {
                if let verdict = try? JSONDecoder().decode(
                    Verdict.self, from: Data(line.dropFirst(verdictPrefix.count).utf8))
                {
                    verdicts.append(verdict)
                }
            } else {
                print(line)
                fflush(nil)
            }
        }
        let exit = Subprocess.wait(child)
        if exit.status != 0 || verdicts.isEmpty {
            print("   figure \(figure) failed: the child process exited with status \(exit.status)")
            return nil
        }
        return verdicts
    }
}
