import ShoppingAssistant

/// Runs the visibility timers of some cards on the session's clock: `ImpressionTimer` decides
/// (1 s continuously in view, while the screen that holds them is viewable and the window in
/// the foreground); this actor feeds it what the screen shows, sleeps until a timer is due and
/// hands the keys that earned their impression to `report`, with the labels they were shown
/// with (names, for the line that says what counted). The chat's carousel
/// (`ImpressionTicker`, PR5) and the recommendation widget (`REPLWidget`, B12) each run one.
///
/// One ticker task serves every timer, reporting due keys in the order their timers started,
/// all keys due at one moment in one call: separate tasks for cards that became visible
/// together would report them in whatever order the scheduler woke them, and a transcript
/// would not replay byte for byte.
actor VisibilityTicker<Key: Hashable & Sendable> {
    /// A started visibility timer: the key may count once `due` passes on `elapsed`.
    private struct Pending: Sendable {
        let key: Key
        let generation: UInt64
        let due: Duration
    }

    private let clock: any Clock<Duration>
    private let activity: ActivityMonitor?
    /// Time on the session's clock since the ticker was made.
    private let elapsed: @Sendable () -> Duration
    /// Called with the keys due at one moment and their labels, in the order their timers
    /// started.
    private let report: @Sendable ([(key: Key, label: String)]) async -> Void
    private var timers = ImpressionTimer<Key>()
    /// Labels of the keys in view or timing; forgotten once they are neither, so a long
    /// session keeps only what is on screen.
    private var labels: [Key: String] = [:]
    /// Started timers, in due order.
    private var pending: [Pending] = []
    private var ticker: Task<Void, Never>?
    private var generation: UInt64 = 0

    /// - Parameter clock: virtual time in piped demo sessions and replays; real time that
    ///   stands still between commands (`StepClock`) in other sessions that wait for each
    ///   command, so they fire exactly where a replay does; the real clock in a terminal.
    init(
        clock: any Clock<Duration>, activity: ActivityMonitor?,
        report: @escaping @Sendable ([(key: Key, label: String)]) async -> Void
    ) {
        self.clock = clock
        self.activity = activity
        self.report = report
        elapsed = stopwatch(on: clock)
    }

    /// The keys in view are now `shown` (display order, each with its label); `viewable`, when
    /// given, says whether the screen that holds them can be seen at all (the chat's cards
    /// while the chat is open; the widget while it is closed).
    func visibleChanged(_ shown: [(key: Key, label: String)], viewable: Bool? = nil) {
        let timing = Set(pending.map(\.key))
        labels = labels.filter { timing.contains($0.key) }
        for (key, label) in shown { labels[key] = label }
        if let viewable { viewableChanged(viewable) }
        apply(timers.visibleChanged(shown.map(\.key)))
    }

    /// The screen that holds the keys became viewable, or stopped being so.
    func viewableChanged(_ viewable: Bool) {
        guard timers.isChatOpen != viewable else { return }
        apply(viewable ? timers.chatOpened() : timers.chatClosed())
    }

    /// The window went to the background (not visibility, PR5) or came back.
    func windowMoved(toForeground foreground: Bool) {
        apply(foreground ? timers.enteredForeground() : timers.enteredBackground())
    }

    private func apply(_ actions: [ImpressionTimer<Key>.Action]) {
        for action in actions {
            switch action {
            case .startTimer(let key, let generation, let after):
                pending.append(Pending(key: key, generation: generation, due: elapsed() + after))
            case .cancelTimer(let key):
                pending.removeAll { $0.key == key }
            case .reportImpression:
                break  // only `timerFired` reports, and the ticker handles that
            }
        }
        if pending.isEmpty {
            stop()
        } else if ticker == nil {
            generation += 1
            let generation = generation
            let body: @Sendable () async -> Void = { [weak self] in await self?.tick(generation) }
            ticker = activity.map { $0.spawn(body) } ?? Task(operation: body)
        }
    }

    /// Sleeps until the earliest timer is due, feeds every due timer to the machine in order,
    /// reports what counted, and goes on until none is left.
    private func tick(_ generation: UInt64) async {
        defer { if self.generation == generation { ticker = nil } }
        while self.generation == generation, let next = pending.first {
            let wait = next.due - elapsed()
            if wait > .zero {
                do { try await clock.sleep(for: wait) } catch { return }
            }
            guard self.generation == generation, !Task.isCancelled else { return }
            let now = elapsed()
            let ready = Array(pending.prefix { $0.due <= now })
            pending.removeFirst(ready.count)
            var counted: [(key: Key, label: String)] = []
            for timer in ready {
                for case .reportImpression(let key) in timers.timerFired(timer.key, generation: timer.generation) {
                    counted.append((key, labels[key] ?? "?"))
                    if !timers.visible.contains(key) { labels[key] = nil }
                }
            }
            if !counted.isEmpty { await report(counted) }
        }
    }

    private func stop() {
        ticker?.cancel()
        ticker = nil
        generation += 1
    }
}
