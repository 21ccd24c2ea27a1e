import ShoppingAssistant

/// Runs the visibility timers of the chat's product cards (PR5, PR6) on the session's clock.
/// `ImpressionTimer` decides (1 s continuously in the viewport, chat open, window in the
/// foreground); this actor only feeds it what the screen shows and executes its actions:
/// it sleeps until a timer is due and reports the impression to the engine.
///
/// One ticker task serves every timer, reporting due cards in the order their timers
/// started: separate tasks for cards that became visible together would report them in
/// whatever order the scheduler woke them, and a transcript would not replay byte for byte.
actor ImpressionTicker {
    /// A started visibility timer: the card may count once `due` passes on `elapsed`.
    private struct PendingImpression: Sendable {
        let ref: AssistantProductRef
        let generation: UInt64
        let due: Duration
    }

    private let engine: AssistantEngine
    private let output: REPLOutput
    private let clock: any Clock<Duration>
    private let activity: ActivityMonitor?
    /// Time on the session's clock since the ticker was made.
    private let elapsed: @Sendable () -> Duration
    private var impressions = ImpressionTimer<AssistantProductRef>()
    /// Started timers, in due order.
    private var pending: [PendingImpression] = []
    /// Names of the cards visible or timing, for the impression line; forgotten once they are
    /// neither, so a long session keeps only what is on screen.
    private var cardNames: [AssistantProductRef: String] = [:]
    private var ticker: Task<Void, Never>?
    private var generation: UInt64 = 0

    /// - Parameter clock: virtual time in piped demo sessions and replays; real time that
    ///   stands still between commands (`StepClock`) in other sessions that wait for each
    ///   command, so they fire impressions exactly where a replay does; the real clock in a
    ///   terminal.
    init(engine: AssistantEngine, output: REPLOutput, clock: any Clock<Duration>, activity: ActivityMonitor?) {
        self.engine = engine
        self.output = output
        self.clock = clock
        self.activity = activity
        elapsed = stopwatch(on: clock)
    }

    /// The cards in the carousel viewport are now `cards`; `chatPresented` says whether the
    /// chat screen is showing them at all.
    func visibleCardsChanged(_ cards: [AssistantProduct], chatPresented: Bool) {
        let timing = Set(pending.map(\.ref))
        cardNames = cardNames.filter { timing.contains($0.key) }
        for card in cards { cardNames[card.ref] = card.name }
        if impressions.isChatOpen != chatPresented {
            apply(chatPresented ? impressions.chatOpened() : impressions.chatClosed())
        }
        apply(impressions.visibleChanged(cards.map(\.ref)))
    }

    /// The host showed another screen: the chat's cards are not on it.
    func screenChanged() {
        apply(impressions.visibleChanged([]))
    }

    /// The window went to the background (not visibility, PR5) or came back.
    func windowMoved(toForeground foreground: Bool) {
        apply(foreground ? impressions.enteredForeground() : impressions.enteredBackground())
    }

    private func apply(_ actions: [ImpressionTimer<AssistantProductRef>.Action]) {
        for action in actions {
            switch action {
            case .startTimer(let ref, let generation, let after):
                pending.append(PendingImpression(ref: ref, generation: generation, due: elapsed() + after))
            case .cancelTimer(let ref):
                pending.removeAll { $0.ref == ref }
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
    /// and goes on until none is left.
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
            var counted: [String] = []
            for timer in ready {
                for case .reportImpression(let ref) in impressions.timerFired(timer.ref, generation: timer.generation) {
                    let result = await engine.performAssistantProductAction(product: ref, action: .visibleImpression)
                    if result == .accepted { counted.append(cardNames[ref] ?? "?") }
                    if !impressions.visible.contains(ref) { cardNames[ref] = nil }
                }
            }
            reportCounted(counted)
        }
    }

    /// One line for the cards whose impressions counted at one moment (those that came into
    /// view together), each name kept short: the carousel above shows them whole.
    private func reportCounted(_ names: [String]) {
        guard !names.isEmpty else { return }
        let short = names.map { TextLayout.truncate(TerminalSanitizer.sanitize($0), to: Self.nameColumns) }
        output.untrusted(
            short.joined(separator: " · ") + ")", prefix: "(impressions: ", role: .dim, width: output.width)
    }

    /// The most columns a card's name takes in the impression line.
    static let nameColumns = 32

    private func stop() {
        ticker?.cancel()
        ticker = nil
        generation += 1
    }
}
