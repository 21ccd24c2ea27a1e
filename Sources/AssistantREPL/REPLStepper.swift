import ShoppingAssistant

/// Runs one step of a session — a line, or time passing — on the session's time, and says
/// when it is over. The read loop and a transcript's replay both step through here, so a
/// line runs the same way whether someone typed it or a file holds it.
///
/// - On virtual time a line runs as counted work and the clock moves whenever nothing else
///   can (`VirtualTime.run`): the step is over when the line is done and nothing it caused
///   can run any more.
/// - On real time, a session that waits for each command (piped, recorded) also waits for the
///   lifecycle events and tracking URLs the line queued, and its impression clock
///   (`StepClock`) runs only while the line's command does, not while the step waits for that
///   tracking: the requests a line causes belong to it, and a recording replays. A failure's
///   `Retry-After` counts from the step's end, as in the replay.
/// - An interactive session on real time just runs the line.
package struct REPLStepper: Sendable {
    /// What a line's step came to.
    package struct Outcome: Sendable, Hashable {
        /// False after `:quit`.
        package var keepGoing: Bool
        /// False when the line waits for something no deadline will bring (virtual time only).
        package var finished: Bool
    }

    let session: REPLSession
    let time: VirtualTime?
    let stepClock: StepClock?
    let waitsForEachCommand: Bool

    /// Virtual time, when the session runs on it: a driver may let time pass between lines.
    package var virtualTime: VirtualTime? { time }

    /// Runs `line` (a command or chat text, trimmed) to the end of its step.
    package func run(_ line: String) async -> Outcome {
        guard let time else {
            stepClock?.start()
            let keepGoing = await session.handle(line)
            // The tracking the line queued is the step's too, but no command of the replay's
            // waits for it: its time (a loaded machine's, a slow host's) is not impression time.
            stepClock?.stop()
            if waitsForEachCommand {
                await session.engine.flushTracking()  // the engine now: `:restart` makes a new one
                await session.stepEnded()
            }
            return Outcome(keepGoing: keepGoing, finished: true)
        }
        let keepGoing = Locked(true)
        let session = self.session
        let finished = await time.run {
            let result = await session.handle(line)
            keepGoing.withLock { $0 = result }
        }
        await session.stepEnded()
        return Outcome(keepGoing: keepGoing.withLock { $0 }, finished: finished)
    }

    /// Waits for the first attempts of everything the session queued, at its end. On virtual
    /// time the clock moves meanwhile: a first attempt retried within its deadline (DL1)
    /// sleeps on it.
    package func flushTrackingAtTheEnd() async {
        let session = self.session
        guard let time else { return await session.engine.flushTracking() }
        _ = await time.run { await session.engine.flushTracking() }
    }

    /// Lets `duration` pass with no input, firing every deadline on the way in order (a
    /// transcript's `%wait`). Virtual time only: on real time it does nothing.
    package func pass(_ duration: Duration) async {
        guard let time else { return }
        await time.advance(by: duration)
        await session.stepEnded(restartingCountdowns: false)  // a failure shown meanwhile keeps its moment
    }
}
