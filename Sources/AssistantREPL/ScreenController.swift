import ShoppingAssistant

/// The host app's screen flow, exactly as behavior.md § E prescribes: the generation changes
/// before the entry request (E3), `trackView` is started and not awaited, so a slow `/visit`
/// or an in-app campaign being shown never delays the entry button (E5), the button is shown
/// only after `.ready` for the current screen (E4, P7), and every `await` of the flow is
/// followed by the generation check, so a stale task never shows anything.
actor ScreenController {
    private let engine: AssistantEngine
    private let output: REPLOutput
    private let entrySelector: String
    private let assistantSelector: String

    private let activity: ActivityMonitor?
    private var generation = 0
    private var screenTask: Task<Void, Never>?
    private(set) var page: PageContext?
    /// The entry button's title while it is shown.
    private(set) var entryButton: String?

    /// What `settle()` waits for: the current screen's flow, and the page views under way.
    private struct Settling: WaitingState {
        var flowRunning = false
        var pageViews = 0
        var waiters = ParkedCallers<Void, Void>()
        var isSettled: Bool { !flowRunning && pageViews == 0 }
    }

    private let settling = Locked(Settling())
    /// Runs once a screen's page view is on its way, before the flow goes on: a test's seam for
    /// what happens when another screen is shown meanwhile.
    private let pageViewReported: (@Sendable () async -> Void)?

    init(
        engine: AssistantEngine, output: REPLOutput, entrySelector: String, assistantSelector: String,
        activity: ActivityMonitor? = nil, pageViewReported: (@Sendable () async -> Void)? = nil
    ) {
        self.pageViewReported = pageViewReported
        self.engine = engine
        self.activity = activity
        self.output = output
        self.entrySelector = entrySelector
        self.assistantSelector = assistantSelector
    }

    /// `onScreenShown(pageContext)`.
    func show(_ pageContext: PageContext) async {
        generation += 1
        screenTask?.cancel()
        let my = generation
        hideEntryButton()
        page = pageContext
        let engine = self.engine
        // E5: the page view is reported, not waited for: the flow goes on once it is on its way.
        settling.withLock { $0.pageViews += 1 }
        await engine.beginTrackView(pageContext: pageContext) { [weak self] in self?.pageViewFinished() }
        await pageViewReported?()
        guard my == generation else { return }  // E3, E5: a newer screen is showing
        let entrySelector = self.entrySelector
        let assistantSelector = self.assistantSelector
        settling.withLock { $0.flowRunning = true }
        screenTask = spawn { [weak self] in
            await self?.runScreen(
                my: my, pageContext: pageContext, engine: engine, entrySelector: entrySelector,
                assistantSelector: assistantSelector)
            await self?.screenFinished(my)
        }
    }

    private func runScreen(
        my: Int, pageContext: PageContext, engine: AssistantEngine, entrySelector: String, assistantSelector: String
    ) async {
        let entry = AssistantEntry.parse(
            await engine.getContentBySelector(selector: entrySelector, pageContext: pageContext))
        guard !Task.isCancelled, my == generation else { return }  // E3
        guard let entry, entry.enabled else {
            output.line(.dim, "(no assistant entry on this screen)")
            return
        }
        let result = await engine.prepareAssistant(assistantSelector: assistantSelector, pageContext: pageContext)
        guard !Task.isCancelled, my == generation else { return }  // E3
        if result == .ready {
            showEntryButton(entry.title)
        } else {
            output.line(.dim, "(assistant not offered: \(Self.describe(result)))")
        }
    }

    /// The flow of screen `my` ended; `settle()` callers go on unless a newer screen runs.
    private func screenFinished(_ my: Int) {
        guard my == generation else { return }
        finishFlow()
    }

    private nonisolated func pageViewFinished() {
        let waiters = settling.withLock { state -> [ParkedCallers<Void, Void>.Waiter] in
            state.pageViews -= 1
            return state.isSettled ? state.waiters.takeAll() : []
        }
        resume(waiters)
    }

    private func finishFlow() {
        let waiters = settling.withLock { state -> [ParkedCallers<Void, Void>.Waiter] in
            state.flowRunning = false
            return state.isSettled ? state.waiters.takeAll() : []
        }
        resume(waiters)
    }

    /// Wakes `settle()` callers, counting them runnable first (replay quiescence).
    private nonisolated func resume(_ waiters: [ParkedCallers<Void, Void>.Waiter]) {
        for waiter in waiters {
            activity?.begin()
            waiter.resume(returning: ())
        }
    }

    @discardableResult
    private nonisolated func spawn(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        activity.map { $0.spawn(body) } ?? Task(operation: body)
    }

    /// `onScreenHiddenOrIdentityChanged`.
    func hideOrIdentityChanged() {
        generation += 1
        screenTask?.cancel()
        finishFlow()
        hideEntryButton()
    }

    /// `onEntryTap`.
    func tapEntry(presenter: any AssistantPresenter) async -> AssistantOpenResult? {
        guard entryButton != nil else { return nil }
        let result = await engine.openAssistant(presenter: presenter)
        if result == .notReady || result == .invalidPresenter { hideEntryButton() }
        return result
    }

    /// Waits for the current screen's entry and preparation, and the page views under way, to
    /// finish (piped mode, so that its output is deterministic); returns at once if the
    /// waiting task is cancelled.
    func settle() async {
        await settling.wait(cancelled: (), activity: activity) { $0.isSettled ? .proceed(()) : .park(()) }
    }

    private func showEntryButton(_ title: String) {
        entryButton = title
        output.singleLine(.accent, prefix: "[ ", title, suffix: " ]  ← entry button (:open)")
    }

    private func hideEntryButton() {
        entryButton = nil
    }

    static func describe(_ result: AssistantPrepareResult) -> String {
        OutcomeWording.prepare(result)
    }
}
