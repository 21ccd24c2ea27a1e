import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Figure 7: the `assistant` REPL's start-up on the demo store and its peak memory. The
/// built binary next to this one is spawned with stdin a pipe holding `:quit` and stdout and
/// stderr on `/dev/null`; the time is from spawning to reaping it (start-up to the first
/// prompt, reading `:quit`, exit), the memory is its peak RSS (`wait4` `ru_maxrss`).
///
/// The baseline, spawned alternately in the same way, is this binary with a flag that exits
/// before doing anything: a Swift process loading the same runtime and Foundation.
enum REPLStartupBench {
    static let exitAtOnceFlag = "--exit-at-once-for-baseline"

    static func run(_ options: BenchOptions) async -> Verdict {
        let warmup = options.size(quick: 1, full: 3)
        let repetitions = options.size(quick: 5, full: 21)
        Report.heading(7, "REPL start-up to first prompt on the demo store, and its peak memory")
        guard let own = executablePath() else {
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
        for iteration in 0..<(warmup + repetitions) {
            guard let repl = spawn(assistant, arguments: [], input: ":quit\n"),
                let base = spawn(own, arguments: [exitAtOnceFlag], input: "")
            else {
                Report.line("stopped: spawning failed (errno \(errno))")
                return Verdict(figure: 7, name: "REPL start-up", value: "failed", goal: nil, met: nil)
            }
            guard repl.status == 0 else {
                Report.line("stopped: assistant exited with status \(repl.status)")
                return Verdict(figure: 7, name: "REPL start-up", value: "failed", goal: nil, met: nil)
            }
            guard iteration >= warmup else { continue }
            replTimes.append(repl.wall)
            replPeaks.append(seconds: Double(repl.peakResident))
            baseTimes.append(base.wall)
            basePeaks.append(seconds: Double(base.peakResident))
        }

        let ratio = replTimes.median / baseTimes.median
        Report.line(
            "assistant, spawn → exit: \(replTimes.summary); peak RSS median \(Format.bytes(replPeaks.median)) "
                + "(max \(Format.bytes(replPeaks.maximum)))")
        Report.line(
            "baseline Swift process (same libraries, exits at once): \(baseTimes.summary); "
                + "peak RSS \(Format.bytes(basePeaks.median))")
        Report.line(
            "ratio assistant / baseline: time \(Format.ratio(ratio)), peak RSS "
                + "\(Format.ratio(replPeaks.median / basePeaks.median))")
        let verdict = Verdict(
            figure: 7, name: "REPL start-up",
            value: "\(Format.seconds(replTimes.median)), peak RSS \(Format.bytes(replPeaks.median))", goal: nil, met: nil)
        Report.verdict(verdict)
        return verdict
    }

    private struct Outcome {
        let wall: Duration
        /// Bytes.
        let peakResident: Int
        let status: Int32
    }

    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Spawns `path` with `input` on a pipe as stdin, output discarded, and reaps it.
    private static func spawn(_ path: String, arguments: [String], input: String) -> Outcome? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        let (readEnd, writeEnd) = (fds[0], fds[1])

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, readEnd, STDIN_FILENO)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }

        let start = Timing.now
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(readEnd)
        guard spawned == 0 else {
            close(writeEnd)
            errno = spawned
            return nil
        }
        let bytes = Array(input.utf8)
        if !bytes.isEmpty { _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) } }
        close(writeEnd)

        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let wall = start.duration(to: Timing.now)
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Outcome(wall: wall, peakResident: usage.ru_maxrss * 1024, status: exitStatus)
    }
}
