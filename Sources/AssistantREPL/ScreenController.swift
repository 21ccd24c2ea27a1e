import ShoppingAssistant

/// The host app's screen flow, exactly as behavior.md § E prescribes: the generation changes
/// before the entry request (E3), the button is shown only after `.ready` for the current
/// screen (E4, P7), and a stale task never shows anything.
actor ScreenController {
    private let engine: AssistantEngine
    private let output: REPLOutput
    private let entrySelector: String
    private let assistantSelector: String

    private let activity: ActivityMonitor?
    private var generation = 0
    private var screenTask: Task<Void, Never>?
    private var screenRunning = false
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []
    private(set) var page: PageContext?
    /// The entry button's title while it is shown.
    private(set) var entryButton: String?

    init(
        engine: AssistantEngine, output: REPLOutput, entrySelector: String, assistantSelector: String,
        activity: ActivityMonitor? = nil
    ) {
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
        releaseSettleWaiters()
        let my = generation
        hideEntryButton()
        page = pageContext
        await engine.trackView(pageContext: pageContext)
        let engine = self.engine
        let entrySelector = self.entrySelector
        let assistantSelector = self.assistantSelector
        screenRunning = true
        let body: @Sendable () async -> Void = {
            await self.runScreen(
                my: my, pageContext: pageContext, engine: engine, entrySelector: entrySelector,
                assistantSelector: assistantSelector)
            await self.screenFinished(my)
        }
        screenTask = activity.map { $0.spawn(body) } ?? Task(operation: body)
    }

    private func runScreen(
        my: Int, pageContext: PageContext, engine: AssistantEngine, entrySelector: String, assistantSelector: String
    ) async {
        do {
            let entry = AssistantEntry.parse(
                await engine.getContentBySelector(selector: entrySelector, pageContext: pageContext))
            guard !Task.isCancelled, my == self.generation else { return }
            guard let entry, entry.enabled else {
                self.output.line(.dim, "(no assistant entry on this screen)")
                return
            }
            let result = await engine.prepareAssistant(assistantSelector: assistantSelector, pageContext: pageContext)
            guard !Task.isCancelled, my == self.generation else { return }
            if result == .ready {
                self.showEntryButton(entry.title)
            } else {
                self.output.line(.dim, "(assistant not offered: \(Self.describe(result)))")
            }
        }
    }

    /// Wakes `settle()` callers, counting them runnable before this task ends (replay quiescence).
    private func screenFinished(_ my: Int) {
        guard my == generation else { return }
        releaseSettleWaiters()
    }

    /// `onScreenHiddenOrIdentityChanged`.
    func hideOrIdentityChanged() {
        generation += 1
        screenTask?.cancel()
        releaseSettleWaiters()
        hideEntryButton()
    }

    /// `onEntryTap`.
    func tapEntry(presenter: any AssistantPresenter) async -> AssistantOpenResult? {
        guard entryButton != nil else { return nil }
        let result = await engine.openAssistant(presenter: presenter)
        if result == .notReady || result == .invalidPresenter { hideEntryButton() }
        return result
    }

    /// Waits for the current screen's entry and preparation to finish (piped mode).
    func settle() async {
        guard screenRunning else { return }
        await withCheckedContinuation { continuation in
            settleWaiters.append(continuation)
            activity?.end()
        }
    }

    private func showEntryButton(_ title: String) {
        entryButton = title
        output.singleLine(.accent, prefix: "[ ", title, suffix: " ]  ← entry button (:open)")
    }

    private func hideEntryButton() {
        entryButton = nil
    }

    private func releaseSettleWaiters() {
        screenRunning = false
        let waiters = settleWaiters
        settleWaiters = []
        for waiter in waiters {
            activity?.begin()
            waiter.resume()
        }
    }

    static func describe(_ result: AssistantPrepareResult) -> String {
        OutcomeWording.prepare(result)
    }
}
