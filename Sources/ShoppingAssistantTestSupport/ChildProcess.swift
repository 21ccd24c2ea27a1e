import Foundation
import ShoppingAssistant

/// The running test binary started again as a child process that plays one role (write a file
/// in a loop until killed, make one request in a clean home directory, run something that may
/// crash), so crash-safety and process-wide side effects are tested for real. The child runs
/// the tests matching `filter` with `roleVariable` set; the test that plays the role reads it,
/// reports through `ChildProcess.report(_:)`, and does nothing when the variable is unset.
///
/// Nothing here waits on wall time: the parent waits for the lines the child reports, and a
/// hang guard in the caller bounds that.
package final class ChildProcess: Sendable {
    package static let roleVariable = "SHOPPING_ASSISTANT_CHILD_ROLE"
    private static let marker = "CHILD-REPORT: "

    private struct State {
        var buffer = Data()
        var lines: [String] = []
        /// The child's other output lines (its test library's report, for one).
        var output: [String] = []
        var waiters: [(part: String, continuation: CheckedContinuation<String?, Never>)] = []
        var ended = false
    }

    private let process: Process
    private let end: ProcessEnd
    private let state = Locked(State())

    /// Starts the child. `environment` is added to this process's environment (a `nil` value
    /// removes a variable).
    /// `capturesStandardError` puts the child's standard error in `output` too (its test
    /// library's report goes there); by default it is discarded.
    package init(
        role: String, filter: String, environment: [String: String?] = [:], capturesStandardError: Bool = false
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        var variables = ProcessInfo.processInfo.environment
        variables[Self.roleVariable] = role
        // A child that crashes on purpose must end at once: the runtime's backtracer would
        // symbolicate the whole test binary first (minutes under the thread sanitizer), and its
        // output goes nowhere.
        variables["SWIFT_BACKTRACE"] = variables["SWIFT_BACKTRACE"] ?? "enable=no"
        for (name, value) in environment { variables[name] = value }
        process.environment = variables
        let output = Pipe()
        // Only this child may hold the pipe: a child another test starts meanwhile would keep
        // its write end open, and this child's output would not close when it is killed. Its
        // own copy, duplicated onto its standard output, does not carry the flag.
        for descriptor in [output.fileHandleForReading.fileDescriptor, output.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        process.standardOutput = output
        if capturesStandardError {
            process.standardError = output
        } else {
            process.standardError = FileHandle.nullDevice
        }
        process.standardInput = FileHandle.nullDevice
        self.process = process
        end = ProcessEnd(watching: process)
        output.fileHandleForReading.readabilityHandler = { [state] handle in
            let data = handle.availableData
            let ready = state.withLock { state -> [(CheckedContinuation<String?, Never>, String?)] in
                if data.isEmpty {
                    state.ended = true
                    defer { state.waiters = [] }
                    return state.waiters.map { ($0.continuation, nil) }
                }
                state.buffer.append(data)
                while let newline = state.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: state.buffer[..<newline], as: UTF8.self)
                    state.buffer.removeSubrange(...newline)
                    if let range = line.range(of: Self.marker) {
                        state.lines.append(String(line[range.upperBound...]))
                    } else {
                        state.output.append(line)
                    }
                }
                var ready: [(CheckedContinuation<String?, Never>, String?)] = []
                state.waiters.removeAll { waiter in
                    guard let line = state.lines.first(where: { $0.contains(waiter.part) }) else { return false }
                    ready.append((waiter.continuation, line))
                    return true
                }
                return ready
            }
            if data.isEmpty { handle.readabilityHandler = nil }
            for (continuation, line) in ready { continuation.resume(returning: line) }
        }
        try process.run()
    }

    /// In the child: reports a line to the parent.
    package static func report(_ line: String) {
        let text = marker + line + "\n"
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// The role this process plays, if it is a child.
    package static var role: String? { ProcessInfo.processInfo.environment[roleVariable] }

    /// Waits for the first reported line containing `part`; `nil` if the child ended first.
    package func line(containing part: String) async -> String? {
        await withCheckedContinuation { continuation in
            let found = state.withLock { state -> String?? in
                if let line = state.lines.first(where: { $0.contains(part) }) { return .some(line) }
                if state.ended { return .some(nil) }
                state.waiters.append((part, continuation))
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
    }

    /// Every line reported so far.
    package var lines: [String] { state.withLock { $0.lines } }

    /// Waits until the child has closed its output, so that every line it wrote is in.
    package func outputClosed() async {
        _ = await line(containing: "\u{0}")  // no reported line contains NUL: waits for the end
    }

    /// Every other line the child wrote so far (standard output, and standard error if captured).
    package var output: [String] { state.withLock { $0.output } }

    /// Ends the child at once, as a crash would (SIGKILL).
    package func kill() {
        if end.status == nil { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    /// Waits for the child to end: its exit status, or the signal that ended it; `nil` if the
    /// calling task was cancelled first. No thread waits meanwhile (see `ProcessEnd`).
    package func exit() async -> ProcessEnd.Status? { await end.wait() }

    package var processIdentifier: Int32 { process.processIdentifier }
}
