import Foundation

/// Writes the dialog to its store from one serial queue, off the engine's actor: a file store
/// flushes to disk on every change, and the engine's other calls must not wait for the disk.
///
/// Only the latest state matters, so a change made while a write is under way replaces any
/// change still waiting behind it. Each change gets a number; a request whose meaning depends
/// on the dialog being kept first (a message's `POST`, D19: a message in flight at exit is
/// reconciled from what was kept) waits until the changes before it are written.
final class DialogWriter: Sendable {
    private enum Change: Sendable {
        case save(StoredDialog)
        case remove
    }

    private struct State: WaitingState {
        /// The change waiting for the queue, and its number.
        var waiting: (change: Change, number: UInt64)?
        /// The number of the last change asked for, and of the last one the store has taken
        /// (written, refused, or replaced by a later change before it was written).
        var asked: UInt64 = 0
        var written: UInt64 = 0
        var draining = false
        var waiters = ParkedCallers<Void, UInt64>()
    }

    private let store: any DialogStore
    private let logger: AssistantLogger
    private let activity: ActivityMonitor?
    private let queue = DispatchQueue(label: "shopping-assistant.dialog-store")
    private let state = Locked(State())

    init(store: any DialogStore, logger: AssistantLogger, activity: ActivityMonitor?) {
        self.store = store
        self.logger = logger
        self.activity = activity
    }

    /// Keeps `dialog` as the stored dialog (D18).
    func save(_ dialog: StoredDialog) { ask(.save(dialog)) }

    /// Empties the store (D20).
    func remove() { ask(.remove) }

    /// The number of the last change asked for: `waitUntilWritten(through:)` with it waits
    /// for every change asked so far.
    var lastAsked: UInt64 { state.withLock { $0.asked } }

    /// Returns once the store has taken change `number` and those before it, or at once if the
    /// calling task is cancelled.
    func waitUntilWritten(through number: UInt64) async {
        guard state.withLock({ $0.written < number }) else { return }  // the usual case: nothing to wait for
        await state.wait(cancelled: (), activity: activity) { $0.written >= number ? .proceed(()) : .park(number) }
    }

    /// Returns once every change asked so far is written, even from a cancelled task: what the
    /// next engine on the store reads is then the last state of this one, never an older one
    /// that this one's late write would overwrite after the next engine's own.
    func flush() async {
        let number = lastAsked
        let wait: @Sendable () async -> Void = { [self] in await waitUntilWritten(through: number) }
        // A task of its own, which the caller's cancellation does not reach.
        await (activity.map { $0.spawn(wait) } ?? Task(operation: wait)).value
    }

    private func ask(_ change: Change) {
        let starts = state.withLock { state -> Bool in
            state.asked += 1
            state.waiting = (change, state.asked)
            defer { state.draining = true }
            return !state.draining
        }
        guard starts else { return }
        // Counted as work under way until the queue is empty, so that a test or a replay that
        // waits for quiet reads the store as it will stay.
        activity?.begin()
        queue.async { [self] in
            drain()
            activity?.end()
        }
    }

    private func drain() {
        while let (change, number) = state.withLock({ state -> (Change, UInt64)? in
            guard let waiting = state.waiting else {
                state.draining = false
                return nil
            }
            state.waiting = nil
            return waiting
        }) {
            write(change)
            let woken = state.withLock { state -> [ParkedCallers<Void, UInt64>.Waiter] in
                state.written = number
                return state.waiters.take { $0 <= number }
            }
            for waiter in woken {
                activity?.begin()
                waiter.resume(returning: ())
            }
        }
    }

    /// A failure is logged; the chat goes on (D20).
    private func write(_ change: Change) {
        switch change {
        case .save(let dialog):
            do { try store.saveDialog(StoredDialogCodec.encode(dialog)) } catch {
                logger.log(
                    .error, "dialog store: the dialog could not be saved, it will not survive a restart: \(error)")
            }
        case .remove:
            do { try store.removeDialog() } catch {
                logger.log(.error, "dialog store: the stored dialog could not be removed: \(error)")
            }
        }
    }
}
