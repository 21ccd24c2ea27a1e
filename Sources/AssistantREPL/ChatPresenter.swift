import ShoppingAssistant

/// The chat screen the SDK would own on a phone, drawn as terminal lines (§ 0). It prints
/// what changed between snapshots: new messages, a message whose status changed, the sending
/// indicator. It keeps the latest snapshot so commands can refer to "suggest 2" or "card 3".
final class ChatPresenter: AssistantPresenter {
    /// Renders a product block to lines and reports which cards are in the viewport.
    typealias BlockRenderer = @Sendable (AssistantProductBlock) async -> (lines: [String], visible: [AssistantProduct])

    private struct State {
        var availability: AssistantPresenterAvailability = .available
        var snapshot: AssistantChatSnapshot?
        var printed: [String: String] = [:]
        var wasSending = false
        var isPresented = false
        var visibleCards: [AssistantProduct] = []
        /// The carousel the user last saw; it stays on screen after a close or a new chat,
        /// so a tap on it can be stale (PR8).
        var lastShownBlock: AssistantProductBlock?
        /// Runs inside the next dismissal, while the engine's close transition is under way.
        var duringDismiss: (@Sendable () async -> Void)?
        /// When each message on screen that failed was first shown failed, on `elapsed`: a
        /// rate limit's `Retry-After` counts from there (or from the end of the step that
        /// showed it: `stepEnded()`).
        var failedAt: [String: Duration] = [:]
        /// Messages first shown failed since the last `stepEnded()`.
        var failedThisStep: Set<String> = []
        /// Every product with a SKU and a number price a reply of this session showed, the
        /// latest by SKU: a shop command prices a product the chat showed before a new chat or
        /// a close. At most `shownLimit` SKUs.
        var shown: [String: AssistantProduct] = [:]
    }

    /// The most SKUs `shownProduct` remembers; past it the memory starts again.
    static let shownLimit = 10_000

    private let state = Locked(State())
    private let output: REPLOutput
    private let render: BlockRenderer
    private let onVisibleCardsChanged: @Sendable ([AssistantProduct]) async -> Void
    /// The current terminal width, for wrapping chat text.
    private let width: @Sendable () -> Int
    /// Time on the session's clock, for how long ago a message failed.
    private let elapsed: @Sendable () -> Duration

    init(
        output: REPLOutput, width: @escaping @Sendable () -> Int, elapsed: @escaping @Sendable () -> Duration,
        render: @escaping BlockRenderer, onVisibleCardsChanged: @escaping @Sendable ([AssistantProduct]) async -> Void
    ) {
        self.output = output
        self.width = width
        self.elapsed = elapsed
        self.render = render
        self.onVisibleCardsChanged = onVisibleCardsChanged
    }

    var availability: AssistantPresenterAvailability { state.withLock { $0.availability } }
    var snapshot: AssistantChatSnapshot? { state.withLock { $0.snapshot } }
    var isPresented: Bool { state.withLock { $0.isPresented } }

    /// The window went to the background or came back (PR5: background is not visibility).
    func setAvailability(_ availability: AssistantPresenterAvailability) {
        state.withLock { $0.availability = availability }
    }

    /// The latest reply that has products, for `:left` and `:right`.
    var latestProductReply: AssistantChatMessage? {
        snapshot?.messages.last { $0.productBlock != nil }
    }

    /// The cards of the latest carousel inside its viewport.
    var visibleCards: [AssistantProduct] { state.withLock { $0.visibleCards } }

    /// The carousel last drawn, for `:tap`, even if the chat has moved on since.
    var lastShownBlock: AssistantProductBlock? { state.withLock { $0.lastShownBlock } }

    /// How much longer a rate limit asks to wait before message `id` is sent again: its
    /// `Retry-After`, counted from when the failure was shown; nil when it asked for nothing
    /// or the time has passed.
    func retryWait(for message: AssistantChatMessage) -> Duration? {
        guard case .failed(let error) = message.status, let wait = error.retryAfter,
            let failed = state.withLock({ $0.failedAt[message.id] })
        else { return nil }
        let left = wait - (elapsed() - failed)
        return left > .zero ? left : nil
    }

    /// A command's step is over, in a session whose time passes only in steps (piped,
    /// recorded, replayed): a failure shown during it counts its `Retry-After` from now, when
    /// the prompt comes back, not from the moment inside the step it was drawn. The rest of a
    /// step (its tracking, its answer's other work) takes however long the network takes, so
    /// a live recording would otherwise say "29 s" where its replay, on virtual time, says
    /// "30 s". Counting from later never lets a retry go early.
    ///
    /// Time passing outside any step (a transcript's `%wait`) is not a step: a failure shown
    /// during it keeps the moment it was drawn (`restartingCountdowns: false`).
    func stepEnded(restartingCountdowns: Bool = true) {
        let now = elapsed()
        state.withLock { state in
            if restartingCountdowns {
                for id in state.failedThisStep where state.failedAt[id] != nil { state.failedAt[id] = now }
            }
            state.failedThisStep = []
        }
    }

    func presentAssistant(_ chat: AssistantChatSnapshot) async {
        state.withLock { state in
            state.isPresented = true
            state.snapshot = nil
            state.printed = [:]
            state.wasSending = false
            let ids = Set(chat.messages.map(\.id))
            state.failedAt = state.failedAt.filter { ids.contains($0.key) }
        }
        await output.grouped {
            drawStartScreen(chat)
            await draw(chat)
        }
    }

    /// The start screen's title and subtitle: on opening, and again when a new chat (or an
    /// identity or assistant change) empties the dialog on screen, so the user sees which
    /// start screen the new chat has (D16).
    private func drawStartScreen(_ chat: AssistantChatSnapshot) {
        output.singleLine(.bold, prefix: "┌─ ", chat.title, width: width())
        if let subtitle = chat.subtitle, !subtitle.isEmpty {
            output.untrusted(subtitle, prefix: "│  ", frame: true, width: width())
        }
        output.line(.dim, "└─ type a message, :s N for a suggest, :close to leave")
    }

    func updateAssistant(_ chat: AssistantChatSnapshot) async {
        await output.grouped { await draw(chat) }
    }

    /// Runs `body` once inside the next dismissal, while the close transition is under way:
    /// the second press of a double tap lands there, so it is always "a tap while a transition
    /// is already under way" (PR9), whatever order the scheduler would pick.
    func duringNextDismiss(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { $0.duringDismiss = body }
    }

    /// Disarms and returns the `duringNextDismiss` body if no dismissal ran it.
    func takeDuringNextDismiss() -> (@Sendable () async -> Void)? {
        state.withLock { state in
            defer { state.duringDismiss = nil }
            return state.duringDismiss
        }
    }

    func dismissAssistant() async {
        if let during = takeDuringNextDismiss() { await during() }
        state.withLock { state in
            state.isPresented = false
            state.visibleCards = []
        }
        output.line(.dim, "── chat closed ──")
        await onVisibleCardsChanged([])
    }

    /// Redraws the latest carousel, after scrolling.
    func redrawLatestCarousel() async {
        guard let message = latestProductReply, let block = message.productBlock else { return }
        await output.grouped { await drawBlock(block) }
    }

    /// The terminal was resized: the open chat's carousel is drawn again for the new width
    /// (PR3), under a note saying why it appears once more.
    func redrawAfterResize() async {
        guard isPresented, latestProductReply?.productBlock != nil else { return }
        await output.grouped {
            output.line(.dim, "(width \(width()))")
            await redrawLatestCarousel()
        }
    }

    /// The product `sku` as the latest reply of this session that showed it with a number
    /// price did, in this opening or an earlier one, before a new chat or after.
    func shownProduct(sku: String) -> AssistantProduct? { state.withLock { $0.shown[sku] } }

    private static func remember(_ products: [AssistantProduct], in shown: inout [String: AssistantProduct]) {
        for product in products {
            guard let sku = product.sku, case .amount? = product.price else { continue }
            if shown[sku] == nil, shown.count >= shownLimit { shown.removeAll(keepingCapacity: true) }
            shown[sku] = product
        }
    }

    private func draw(_ chat: AssistantChatSnapshot) async {
        let (toPrint, showSending, showSuggests, startedOver) = state.withLock {
            state -> ([(message: AssistantChatMessage, firstSight: Bool)], Bool, Bool, Bool) in
            let startedOver = chat.messages.isEmpty && !(state.snapshot?.messages.isEmpty ?? true)
            if startedOver { state.failedAt = [:] }
            state.snapshot = chat
            var fresh: [(message: AssistantChatMessage, firstSight: Bool)] = []
            // Only the messages the engine says changed: a message costs the same in a long
            // dialog as in a short one. `nil` (a first snapshot, a new dialog) means all.
            let positions = chat.changedMessageIndices ?? Array(chat.messages.indices)
            for position in positions where chat.messages.indices.contains(position) {
                let message = chat.messages[position]
                let signature = Self.signature(message)
                let previous = state.printed[message.id]
                if previous != signature {
                    state.printed[message.id] = signature
                    Self.remember(message.productBlock?.products ?? [], in: &state.shown)
                    fresh.append((message, previous == nil))
                    if case .failed = message.status {
                        if state.failedAt[message.id] == nil {
                            state.failedAt[message.id] = elapsed()
                            state.failedThisStep.insert(message.id)
                        }
                    } else {
                        state.failedAt[message.id] = nil
                    }
                }
            }
            let showSending = chat.isSending && !state.wasSending
            state.wasSending = chat.isSending
            return (fresh, showSending, !chat.isSending && (chat.messages.isEmpty || !fresh.isEmpty), startedOver)
        }
        if startedOver { drawStartScreen(chat) }
        for item in toPrint { await drawMessage(item.message, firstSight: item.firstSight) }
        if showSending { output.line(.dim, "… the assistant is answering") }
        if showSuggests, !chat.suggests.isEmpty { drawSuggests(chat.suggests) }
    }

    /// The suggests on one line when they fit, else one under the other, each wrapped under
    /// its number.
    private func drawSuggests(_ suggests: [String]) {
        let items = suggests.enumerated().map { "[s\($0.offset + 1)] " + TerminalSanitizer.sanitize($0.element) }
        let line = "suggests: " + items.joined(separator: "  ")
        let width = width()
        guard DisplayWidth.of(line) > width else { return output.line(.accent, line) }
        output.line(.accent, "suggests:")
        for (index, suggest) in suggests.enumerated() {
            output.untrusted(suggest, prefix: "  [s\(index + 1)] ", role: .accent, width: width)
        }
    }

    /// Draws a new message, or one whose status changed. `firstSight` is true when this
    /// opening of the chat has not drawn the message yet: a reopened chat redraws the dialog
    /// in memory, the user's own sent messages included.
    private func drawMessage(_ message: AssistantChatMessage, firstSight: Bool) async {
        switch message.role {
        case .user:
            switch message.status {
            case .sending: output.untrusted(message.text, prefix: "you › ", width: width())
            case .sent: if firstSight { output.untrusted(message.text, prefix: "you › ", width: width()) }
            case .failed(let error):
                // A failure that would only repeat itself offers no retry (a refused key or
                // network, a taken ID), and a rate limit says when to try.
                var retry = ""
                if message.canRetry, OutcomeWording.offersRetry(error) {
                    retry = error.retryAfter.map { $0 > .zero } == true ? ", then :retry" : " — :retry to send it again"
                }
                output.line(.error, "✗ not delivered: \(OutcomeWording.failure(error))\(retry)")
                output.untrusted(message.text, prefix: "  your text: ", width: width())
            }
        case .assistant:
            output.untrusted(message.text, prefix: "assistant › ", width: width())
            if let block = message.productBlock { await drawBlock(block) }
            for (index, button) in message.buttons.enumerated() {
                if button.isEnabled {
                    output.singleLine(.accent, prefix: "[b\(index + 1)] ", button.title, width: width())
                } else {
                    output.singleLine(
                        .dim, prefix: "[--] ", button.title, suffix: " (not available)", width: width())
                }
            }
            if message.canRate { output.line(.dim, "rate this reply: :like or :dislike") }
        }
    }

    private func drawBlock(_ block: AssistantProductBlock) async {
        let rendered = await render(block)
        for line in rendered.lines { output.line(line) }
        state.withLock { state in
            state.visibleCards = rendered.visible
            state.lastShownBlock = block
        }
        await onVisibleCardsChanged(rendered.visible)
    }

    private static func signature(_ message: AssistantChatMessage) -> String {
        switch message.status {
        case .sending: return "sending"
        case .sent: return message.role == .assistant ? "reply" : "sent"
        case .failed(let error): return "failed|\(error.code.rawValue)|\(message.canRetry)"
        }
    }
}
