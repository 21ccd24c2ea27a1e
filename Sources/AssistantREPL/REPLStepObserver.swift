/// Told of each step of a session's read loop as it happens, such as a recording that files
/// requests and output under the line that caused them and writes each step out as it ends.
package protocol REPLStepObserver: Sendable {
    /// A line was read and is about to run.
    func stepBegan(_ line: String)
    /// The line and the work it waits for are done; the next read follows.
    func stepEnded()
}
