import Foundation

/// Runs the selected figures in order and prints a summary of the verdicts.
enum Bench {
    /// Runs the figures on the cooperative pool and blocks the calling thread until done.
    static func runBlocking(_ options: BenchOptions) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await run(options)
            done.signal()
        }
        done.wait()
    }

    static func run(_ options: BenchOptions) async {
        print("assistant-bench — shopping assistant engine performance" + (options.quick ? " (--quick: smoke sizes)" : ""))
        for line in MachineFacts.lines { print("   " + line) }
        print("   every ratio compares two measurements taken side by side in this run; times are medians")

        let figures: [(Int, @Sendable (BenchOptions) async -> Verdict)] = [
            (1, ReplyProcessingBench.run),
            (2, LoopbackRoundTripBench.run),
            (3, ProductActionBench.run),
            (4, LongDialogBench.run),
            (5, ManyEnginesBench.run),
            (6, TranscriptReplayBench.run),
            (7, REPLStartupBench.run),
        ]
        var verdicts: [Verdict] = []
        let start = Timing.now
        for (number, run) in figures where options.figures.contains(number) {
            verdicts.append(await run(options))
        }

        print("")
        print("Summary (\(start.duration(to: Timing.now).short) in all)")
        for verdict in verdicts { print("   " + verdict.line) }
    }
}
