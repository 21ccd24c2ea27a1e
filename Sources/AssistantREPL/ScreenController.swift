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

    /// A widget the app draws on each of its screens, fetched beside the entry button: the two
    /// content calls are made together and leave as one `/choose` (B16).
    struct Widget: Sendable {
        let selector: String
        /// Draws the fetched content (`nil`: the fetch failed) on the screen it was fetched for,
        /// once that screen's flow has finished, so that its lines always come after the flow's.
        let present: @Sendable (ContentResponse?) async -> Void
    }

    /// What a parked caller waits for.
    private enum Awaited: Sendable {
        /// The screen's flow, its widget and the page views under way (`settle()`).
        case settled
        /// The screen's flow alone (a widget's drawing).
        case flowFinished
    }

    /// What `settle()` waits for: the current screen's flow and widget, and the page views
    /// under way.
    private struct Settling: WaitingState {
        var flowRunning = false
        var pageViews = 0
        var widgets = 0
        var waiters = ParkedCallers<Void, Awaited>()
        var isSettled: Bool { !flowRunning && pageViews == 0 && widgets == 0 }

        /// The waiters whose wait is over now.
        mutating func takeReady() -> [ParkedCallers<Void, Awaited>.Waiter] {
            let (settled, flowFinished) = (isSettled, !flowRunning)
            return waiters.take { awaited in
                switch awaited {
                case .settled: settled
                case .flowFinished: flowFinished
                }
            }
        }
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

    /// `onScreenShown(pageContext)`; `widget`, when the app draws one on its screens, is
    /// fetched at the very moment the entry button's content is.
    func show(_ pageContext: PageContext, widget: Widget? = nil) async {
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
        guard let widget else { return }
        settling.withLock { $0.widgets += 1 }
        spawn { [weak self] in
            let content = await engine.getContentBySelector(selector: widget.selector, pageContext: pageContext)
            await self?.presentAfterTheFlow(widget, content, my: my)
        }
    }

    /// Draws a screen's widget once its flow has finished, unless another screen is showing
    /// by then.
    private func presentAfterTheFlow(_ widget: Widget, _ content: ContentResponse?, my: Int) async {
        await settling.wait(cancelled: (), activity: activity) { $0.flowRunning ? .park(.flowFinished) : .proceed(()) }
        if my == generation { await widget.present(content) }
        resume(
            settling.withLock { state in
                state.widgets -= 1
                return state.takeReady()
            })
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
        resume(
            settling.withLock { state in
                state.pageViews -= 1
                return state.takeReady()
            })
    }

    private func finishFlow() {
        resume(
            settling.withLock { state in
                state.flowRunning = false
                return state.takeReady()
            })
    }

    /// Wakes `settle()` callers and widgets waiting to be drawn, counting them runnable first
    /// (replay quiescence).
    private nonisolated func resume(_ waiters: [ParkedCallers<Void, Awaited>.Waiter]) {
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

    /// Waits for the current screen's entry and preparation, its widget, and the page views
    /// under way, to finish (piped mode, so that its output is deterministic); returns at once if the
    /// waiting task is cancelled.
    func settle() async {
        await settling.wait(cancelled: (), activity: activity) { $0.isSettled ? .proceed(()) : .park(.settled) }
    }

    private func showEntryButton(_ title: String) {
        entryButton = title
        let hint = "← entry button (:open)"
        let whole = DisplayWidth.of("[ " + TerminalSanitizer.sanitize(title) + " ]  " + hint)
        guard let width = output.width, whole > width else {
            return output.singleLine(.accent, prefix: "[ ", title, suffix: " ]  " + hint)
        }
        // Narrow: the button keeps its brackets and the hint goes below, rather than cut off.
        output.singleLine(.accent, prefix: "[ ", title, suffix: " ]")
        output.line(.dim, "  " + hint)
    }

    private func hideEntryButton() {
        entryButton = nil
    }

    static func describe(_ result: AssistantPrepareResult) -> String {
        OutcomeWording.prepare(result)
    }
}
