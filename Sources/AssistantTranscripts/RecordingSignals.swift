import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Ends a recording cleanly when the session is ended by a signal — SIGTERM, SIGHUP (a
/// terminal closed), SIGINT where no line editor takes Ctrl-C — so the file holds every step
/// that ended and says it was cut short, instead of nothing.
///
/// The handler only writes the signal's number to a pipe (all a handler may safely do); a
/// thread of its own reads it, finishes the recording, gives a terminal back the modes it had
/// before the line editor made it raw, and exits with 128 + the signal's number, as the
/// signal would have.
package enum RecordingSignals {
    /// The write end of the pipe, set before any handler is installed.
    nonisolated(unsafe) private static var pipeEnd: Int32 = -1

    /// Installs handlers for `signals` that finish `recorder` (reporting a write failure
    /// through `failed`) and exit. Call once.
    package static func install(
        _ signals: [Int32], finishing recorder: TranscriptRecorder,
        failed: @escaping @Sendable (String) -> Void
    ) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        pipeEnd = ends[1]
        let readEnd = ends[0]
        // The terminal's modes before the line editor takes it raw, given back on the way out.
        var modes = termios()
        let terminal = isatty(STDIN_FILENO) == 1 && tcgetattr(STDIN_FILENO, &modes) == 0
        let saved = modes
        Thread.detachNewThread {
            var number: UInt8 = 0
            while read(readEnd, &number, 1) < 0, errno == EINTR {}
            let signal = Int32(number)
            do {
                try recorder.finish(cutShort: name(of: signal))
            } catch {
                failed("\(error)")
            }
            if terminal {
                var restored = saved
                _ = tcsetattr(STDIN_FILENO, TCSANOW, &restored)
            }
            exit(128 + signal)
        }
        for signal in signals {
            _ = Glibc.signal(signal) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(RecordingSignals.pipeEnd, &byte, 1)
            }
        }
    }

    /// `SIGTERM`, `SIGHUP`, `SIGINT`, or the number.
    static func name(of signal: Int32) -> String {
        switch signal {
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        case SIGINT: return "SIGINT"
        default: return "signal \(signal)"
        }
    }
}
