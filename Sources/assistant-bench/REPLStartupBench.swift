import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 7: the `assistant` REPL's start-up on the demo store and its peak memory. The
/// built binary next to this one is spawned with stdin a pipe holding `:quit` and stdout on
/// `/dev/null`; the time is from spawning to reaping it (start-up to the first prompt,
/// reading `:quit`, exit), the memory is its peak RSS (`wait4` `ru_maxrss`).
///
/// The baseline, spawned alternately in the same way, is a bare process: `/bin/true`, which
/// loads nothing but the C library, so the ratio shows everything the REPL costs over the
/// floor of spawning a process. Beside it, this binary with a flag that exits before doing
/// anything shows what of that is only loading the Swift runtime and Foundation.
enum REPLStartupBench {
    static let exitAtOnceFlag = "--exit-at-once-for-baseline"
    static let measureFlag = "--measure-spawn"
    /// The floor: a process that loads only the C library and exits.
    static let bareProcess = "/bin/true"

    static func run(_ options: BenchOptions) async -> Verdict {
        let warmup = options.size(quick: 1, full: 3)
        let repetitions = options.size(quick: 5, full: 21)
        Report.heading(7, "REPL start-up to first prompt on the demo store, and its peak memory")
        guard let own = Subprocess.executablePath() else {
            Report.line("skipped: cannot read /proc/self/exe")
            return Verdict(figure: 7, name: "REPL start-up", value: "skipped", goal: nil, met: nil)
        }
        let directory = (own as NSString).deletingLastPathComponent
        let assistant = (directory as NSString).appendingPathComponent("assistant")
        guard access(assistant, X_OK) == 0 else {
            Report.line("skipped: no \(assistant); build it into the same directory first:")
            Report.line("  swift build -c release --product assistant (with the same --scratch-path)")
            return Verdict(figure: 7, name: "REPL start-up", value: "skipped", goal: nil, met: nil)
        }
        Report.line(
            "inputs: \(assistant) with stdin \":quit\\n\" (a pipe), \(repetitions) runs after \(warmup) warm-up, "
                + "alternating with the baseline, medians")

        var replTimes = Samples()
        var replPeaks = Samples()
        var baseTimes = Samples()
        var basePeaks = Samples()
        var swiftTimes = Samples()
        var swiftPeaks = Samples()
        for iteration in 0..<(warmup + repetitions) {
            guard let repl = measure(own, [":quit\n", assistant]),
                let base = measure(own, ["", bareProcess]),
                let swift = measure(own, ["", own, exitAtOnceFlag])
            else {
                Report.line("stopped: spawning failed (errno \(errno))")
                return Verdict(figure: 7, name: "REPL start-up", value: "failed", goal: nil, met: nil)
            }
            guard repl.status == 0, base.status == 0, swift.status == 0 else {
                Report.line(
                    "stopped: exit status \(repl.status) (assistant), \(base.status) (bare process), "
                        + "\(swift.status) (Swift process)")
                return Verdict(figure: 7, name: "REPL start-up", value: "failed", goal: nil, met: nil)
            }
            guard iteration >= warmup else { continue }
            replTimes.append(seconds: repl.wall)
            replPeaks.append(seconds: Double(repl.peakResident))
            baseTimes.append(seconds: base.wall)
            basePeaks.append(seconds: Double(base.peakResident))
            swiftTimes.append(seconds: swift.wall)
            swiftPeaks.append(seconds: Double(swift.peakResident))
        }

        let ratio = replTimes.median / baseTimes.median
        Report.line(
            "assistant, spawn → exit: \(replTimes.summary); peak RSS \(Format.bytes(replPeaks.median)) "
                + "(max \(Format.bytes(replPeaks.maximum)))")
        Report.line(
            "baseline, a bare process (\(bareProcess)): \(baseTimes.summary); peak RSS \(Format.bytes(basePeaks.median))"
        )
        Report.line(
            "for comparison, a Swift process on the same libraries that exits at once: \(swiftTimes.summary); "
                + "peak RSS \(Format.bytes(swiftPeaks.median))")
        Report.line(
            "ratio assistant / baseline: time \(Format.ratio(ratio)), peak RSS "
                + "\(Format.ratio(replPeaks.median / basePeaks.median)); REPL's own start-up and :quit "
                + "\(Format.seconds(replTimes.median - baseTimes.median))")
        let verdict = Verdict(
            figure: 7, name: "REPL start-up",
            value: "\(Format.seconds(replTimes.median)), peak RSS \(Format.bytes(replPeaks.median))", goal: nil,
            met: nil)
        Report.verdict(verdict)
        return verdict
    }

    private struct Measurement {
        /// Seconds from spawn to reaping.
        let wall: Double
        let peakResident: Int
        let status: Int32
    }

    /// Runs `[input, path, arguments…]` through a fresh copy of this binary (`measureFlag`).
    ///
    /// Why not spawn the target directly: `ru_maxrss` of a child is at least the RSS of the
    /// process that forked it (Linux records the pre-exec memory's high-water mark at
    /// `execve`, and `posix_spawn` shares the parent's memory until then), so a child of this
    /// process would report this process's peak. The fresh copy forks from a small footprint.
    private static func measure(_ own: String, _ arguments: [String]) -> Measurement? {
        guard let helper = Subprocess.spawn(own, arguments: [measureFlag] + arguments, output: .pipe),
            let output = helper.output
        else { return nil }
        var fields: [String] = []
        Subprocess.readLines(output) { fields += $0.split(separator: " ").map(String.init) }
        _ = Subprocess.wait(helper)
        guard fields.count == 3, let wall = Double(fields[0]), let peak = Int(fields[1]), let status = Int32(fields[2])
        else { return nil }
        return Measurement(wall: wall, peakResident: peak, status: status)
    }

    /// The helper's side of `measure`: spawns the target, reaps it, prints
    /// `<seconds> <peak bytes> <status>`. Returns the process exit status.
    static func measureSpawn(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 2 else { return 2 }
        let start = Timing.now
        guard
            let child = Subprocess.spawn(
                arguments[1], arguments: Array(arguments.dropFirst(2)), input: arguments[0], output: .discard)
        else { return 1 }
        let exit = Subprocess.wait(child)
        let wall = start.duration(to: Timing.now).seconds
        print("\(wall) \(exit.peakResident) \(exit.status)")
        return 0
    }
}
