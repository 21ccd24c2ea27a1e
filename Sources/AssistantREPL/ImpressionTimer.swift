/// Decides when a card has earned its visible impression (PR5, PR6), as a pure state
/// machine: the REPL feeds it what it sees and executes the actions it returns.
///
/// A card counts once it has been in the carousel viewport for `dwell` (1 s) without a break,
/// while the chat is open and the app is in the foreground. Any interruption — the card
/// scrolling out, the chat closing, the app going to the background — cancels its timer, and
/// the next period of visibility starts again from zero. Each key is reported at most once,
/// so redraws never create a second impression.
///
/// Generic over the key so tests can use plain values; the REPL uses `AssistantProductRef`,
/// which is new for every opening of the chat, so "once per key" is "once per product
/// appearance per opening" (PR6).
///
/// Time is not measured here: `.startTimer` asks the shell to sleep on its injected clock and
/// to call `timerFired(_:generation:)` afterwards. The generation lets the machine ignore a
/// timer that fires after it was cancelled or replaced, so cancellation may be lazy.
package struct ImpressionTimer<Key: Hashable & Sendable>: Sendable {
    /// What the shell must do.
    package enum Action: Sendable, Hashable {
        /// Sleep for `after`, then call `timerFired(key, generation: generation)`.
        case startTimer(Key, generation: UInt64, after: Duration)
        /// Stop the sleep started for `key`; a late `timerFired` is ignored anyway.
        case cancelTimer(Key)
        /// Report `.visibleImpression` for `key` to the engine.
        case reportImpression(Key)
    }

    /// How long a card must stay visible.
    package let dwell: Duration
    /// Whether the chat screen is open.
    package private(set) var isChatOpen = false
    /// Whether the app (the terminal window) is in the foreground.
    package private(set) var isForeground = true
    /// The keys in the carousel viewport, in display order.
    package private(set) var visible: [Key] = []
    /// Keys already reported; they never start a timer again.
    package private(set) var reported: Set<Key> = []

    /// Running timers in start order, so actions come out in a deterministic order.
    private var running: [(key: Key, generation: UInt64)] = []
    private var nextGeneration: UInt64 = 0

    /// A machine for a closed chat in a foreground app, with nothing visible.
    package init(dwell: Duration = .seconds(1)) {
        self.dwell = dwell
    }

    /// Keys whose timer is running, in start order.
    package var timing: [Key] { running.map(\.key) }

    // MARK: - Events

    /// The cards in the viewport are now `keys` (display order; duplicates ignored).
    package mutating func visibleChanged(_ keys: [Key]) -> [Action] {
        var seen = Set<Key>()
        visible = keys.filter { seen.insert($0).inserted }
        return reconcile()
    }

    /// The chat screen opened.
    package mutating func chatOpened() -> [Action] {
        isChatOpen = true
        return reconcile()
    }

    /// The chat screen closed: nothing in it is visible any more.
    package mutating func chatClosed() -> [Action] {
        isChatOpen = false
        return reconcile()
    }

    /// The app came to the foreground.
    package mutating func enteredForeground() -> [Action] {
        isForeground = true
        return reconcile()
    }

    /// The app went to the background: not visibility (PR5).
    package mutating func enteredBackground() -> [Action] {
        isForeground = false
        return reconcile()
    }

    /// The sleep started by `.startTimer(key, generation:, after:)` ended. Reports the key
    /// when that timer is still the current one; a stale or unknown timer does nothing.
    package mutating func timerFired(_ key: Key, generation: UInt64) -> [Action] {
        guard let index = running.firstIndex(where: { $0.key == key && $0.generation == generation }) else {
            return []
        }
        running.remove(at: index)
        reported.insert(key)
        return [.reportImpression(key)]
    }

    // MARK: - Reconciling

    /// Makes the running timers match "visible, not yet reported, and the chat is viewable":
    /// cancels the ones that no longer qualify, then starts the missing ones in display order.
    private mutating func reconcile() -> [Action] {
        let wanted: [Key] = isChatOpen && isForeground ? visible.filter { !reported.contains($0) } : []
        let wantedSet = Set(wanted)
        var actions: [Action] = []
        running.removeAll { timer in
            guard !wantedSet.contains(timer.key) else { return false }
            actions.append(.cancelTimer(timer.key))
            return true
        }
        let runningKeys = Set(running.map(\.key))
        for key in wanted where !runningKeys.contains(key) {
            nextGeneration += 1
            running.append((key, nextGeneration))
            actions.append(.startTimer(key, generation: nextGeneration, after: dwell))
        }
        return actions
    }
}
