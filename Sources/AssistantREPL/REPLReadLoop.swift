import ShoppingAssistant

/// The read loop of a session: the banner, a prompt per line, the echo of piped input, Ctrl-C
/// and Ctrl-D, and each line run to the end of its step (`REPLStepper`), until `:quit` or the
/// end of input. An observer (a recording) hears of each step as it begins and ends.
struct REPLReadLoop: Sendable {
    let session: REPLSession
    let stepper: REPLStepper
    let output: REPLOutput
    let settings: REPLSettings
    let onDemoStore: Bool
    /// Whether Ctrl-C ends what a line waits for: a terminal session on real time.
    let interruptible: Bool
    /// Warnings under the banner (`REPLSession.noteAtStart`).
    var notes: [String] = []

    /// Runs until `:quit` or the end of input.
    func run(reader: any LineReader, observer: (any REPLStepObserver)?) async {
        output.line(.bold, "Shopping assistant REPL — \(onDemoStore ? "built-in demo store" : "live services")")
        let start = onDemoStore ? ":product KIT-1001 or :home" : ":home or :product SKU (a SKU of your shop)"
        output.line(.dim, "Type :help for commands. Start with \(start).")
        for note in notes { output.line(.warning, note) }
        while true {
            let event = await reader.nextEvent(prompt: await session.prompt())
            switch event {
            case .endOfInput:
                output.aside(.dim, "bye")
                await finish()
                return
            case .interrupt:
                continue  // a pending reply keeps going (O8)
            case .line(let raw):
                let line = raw.trimmingCharacters(in: .whitespaces)
                if line.isEmpty { continue }
                observer?.stepBegan(line)
                if settings.echoesInput { output.echo("> " + TerminalSanitizer.sanitize(line)) }
                let keepGoing = await runStep(line, reader: reader)
                observer?.stepEnded()
                if !keepGoing {
                    await finish()
                    return
                }
            }
        }
    }

    /// How long a terminal session's quit waits for the tracking still queued (H2's flush
    /// deadline): a tracking host that never answers must not hold the terminal.
    static let quitFlushDeadline: Duration = .seconds(2)

    /// Ends the session's engine. Piped, recorded and virtual-time sessions wait for all the
    /// tracking still queued: what they print is what was sent, and a deadline there passes on
    /// virtual time. A terminal session on real time shuts the engine down, giving tracking
    /// `quitFlushDeadline` to leave.
    private func finish() async {
        let engine = session.engine  // the engine now: `:restart` makes a new one
        guard interruptible else {
            await stepper.flushTrackingAtTheEnd()
            await session.sayWhatStaysQueued()
            return await engine.dialogStoreWritten()  // the next session on the state directory reads it
        }
        await engine.shutdown(flushDeadline: Self.quitFlushDeadline)
        await session.sayWhatStaysQueued()
    }

    /// Runs a line. In a terminal session on real time, Ctrl-C stops whatever the line waits
    /// for and returns to the prompt at once: the command's task is cancelled (a `:wait` ends, a
    /// preparation it started reports `cancelled`), a message already sent is not (O8). Piped,
    /// recorded and virtual-time sessions run every line to its end, as before.
    private func runStep(_ line: String, reader: any LineReader) async -> Bool {
        guard interruptible else {
            let outcome = await stepper.run(line)
            if !outcome.finished { output.line(.error, "(the command waits for something that never happens)") }
            return outcome.keepGoing
        }
        let stepper = self.stepper
        let command = Task { await stepper.run(line).keepGoing }
        let interrupts = Task { await reader.nextInterrupt() }
        let keepGoing: Bool? = await withCheckedContinuation { continuation in
            let answered = Locked(false)
            let answer: @Sendable (Bool?) -> Void = { value in
                let first = answered.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: value) }
            }
            Task { answer(await command.value) }
            Task { if await interrupts.value { answer(nil) } }
        }
        // The wait for Ctrl-C must be over before the next read takes the terminal back.
        interrupts.cancel()
        _ = await interrupts.value
        if let keepGoing { return keepGoing }
        command.cancel()
        output.line(.warning, "(interrupted)")
        return true
    }
}
