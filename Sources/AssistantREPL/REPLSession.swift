import DemoStore
import Foundation
import ShoppingAssistant

/// Settings of one REPL session.
public struct REPLSettings: Sendable {
    public var width: Int
    public var entrySelector: String
    public var assistantSelector: String
    /// Interactive sessions print replies as they arrive and run impression timers; piped
    /// sessions wait for each command to finish, so their output is deterministic.
    public var interactive: Bool

    public init(width: Int, entrySelector: String, assistantSelector: String, interactive: Bool) {
        self.width = width
        self.entrySelector = entrySelector
        self.assistantSelector = assistantSelector
        self.interactive = interactive
    }
}

/// The REPL core: plays the host app (screens, entry button, navigation) and the chat screen
/// (presenter and product block builder) around one engine. It reads lines through a
/// `LineReader`, so it runs the same on a terminal, in a pipe and under a script.
public actor REPLSession {
    private let engine: AssistantEngine
    private let demoStore: DemoStore?
    private let output: REPLOutput
    private let settings: REPLSettings
    private let clock: any Clock<Duration>
    private let time: VirtualTime?
    private let replaying: Bool
    private let activity: ActivityMonitor?
    private let screens: ScreenController
    private let carousel: CarouselState
    private var presenter: ChatPresenter!
    private var foreground = true
    /// Decides which cards are timing towards an impression (PR5, PR6).
    private var impressions = ImpressionTimer<AssistantProductRef>()
    /// Started timers, in due order.
    private var pendingImpressions: [PendingImpression] = []
    /// Names of the cards seen, for the impression log line.
    private var cardNames: [AssistantProductRef: String] = [:]
    private var impressionTicker: Task<Void, Never>?
    private var tickerGeneration: UInt64 = 0
    /// Time on the session's clock since it started.
    private let elapsed: @Sendable () -> Duration

    public init(
        engine: AssistantEngine, demoStore: DemoStore?, output: REPLOutput, settings: REPLSettings,
        time: VirtualTime? = nil, replaying: Bool = false
    ) async {
        self.time = time
        self.replaying = replaying
        let activity = time?.activity
        self.activity = activity
        let clock: any Clock<Duration> = time?.clock ?? ContinuousClock()
        self.engine = engine
        self.demoStore = demoStore
        self.output = output
        self.settings = settings
        self.clock = clock
        elapsed = stopwatch(on: clock)
        screens = ScreenController(
            engine: engine, output: output, entrySelector: settings.entrySelector,
            assistantSelector: settings.assistantSelector, activity: activity)
        let carousel = CarouselState(width: settings.width, style: output.style)
        self.carousel = carousel
        output.fitLines { carousel.width }
        let handler = HostActionHandler(output: output) { _ in }
        presenter = ChatPresenter(
            output: output, width: { carousel.width },
            render: { block in
                let rendering = await engine.renderProductBlock(block, layout: carousel.layout) as? CarouselRendering
                guard let rendering else { return (["(products could not be shown)"], []) }
                let visible = block.products.filter { rendering.visibleRefs.contains($0.ref) }
                return (rendering.lines, visible)
            },
            onVisibleCardsChanged: { [weak self] cards in await self?.visibleCardsChanged(cards) })
        engine.logger.setListener { level, message in
            output.singleLine(.dim, prefix: "[\(level)] ", message)
        }
        await engine.setAssistantProductBlockBuilder(carousel.builder)
        await engine.setAssistantActionHandler(handler)
        await engine.setPresentationLockListener { locks in output.line(.dim, "(presentation lock: \(locks))") }
        await engine.setInAppCampaignHandler { campaign in
            output.line(.dim, "(in-app campaign shown: \(TerminalSanitizer.sanitize(campaign.campaignId)))")
        }
    }

    /// Runs until `:quit` or the end of input.
    public func run(reader: any LineReader, recorder: TranscriptRecorder? = nil) async {
        output.line(.bold, "Shopping assistant REPL — \(demoStore != nil ? "built-in demo store" : "live services")")
        output.line(.dim, "Type :help for commands. Start with :product KIT-1001 or :home.")
        while true {
            let event = await reader.nextEvent(prompt: await prompt())
            switch event {
            case .endOfInput:
                output.line(.dim, "bye")
                await engine.flushTracking()
                return
            case .interrupt:
                continue  // a pending reply keeps going (O8)
            case .line(let raw):
                let line = raw.trimmingCharacters(in: .whitespaces)
                if line.isEmpty { continue }
                recorder?.beginInput(line)
                if !settings.interactive { output.echo("> " + TerminalSanitizer.sanitize(line)) }
                if await handleOnTime(line) == false {
                    await engine.flushTracking()
                    return
                }
            }
        }
    }

    /// The terminal was resized: the chat follows it unless a width was set (PR3).
    public func terminalResized(_ resize: TerminalResize) async {
        if carousel.terminalResized(resize) { await presenter.redrawAfterResize() }
    }

    /// Handles a line; on virtual time, time moves while the command waits on the clock.
    private func handleOnTime(_ line: String) async -> Bool {
        guard let time else { return await handle(line) }
        let keepGoing = Locked(true)
        let finished = await time.run {
            let result = await self.handle(line)
            keepGoing.withLock { $0 = result }
        }
        if !finished { output.line(.error, "(the command waits for something that never happens)") }
        return keepGoing.withLock { $0 }
    }

    /// The prompt shows the screen, the entry button and whether the chat is open.
    func prompt() async -> String {
        let page = await screens.page
        let location = page.map { Self.describe($0) } ?? "no screen"
        if await engine.isAssistantOpen { return "chat[\(location)]> " }
        if let title = await screens.entryButton { return "\(location) [\(TerminalSanitizer.sanitize(title))]> " }
        return "\(location)> "
    }

    /// Handles one line; returns false to quit.
    public func handle(_ line: String) async -> Bool {
        if line.hasSuffix(" &"), line.count > 2 {
            // Runs without waiting, as a user who types on while the app still works would.
            let command = String(line.dropLast(2)).trimmingCharacters(in: .whitespaces)
            let body: @Sendable () async -> Void = { _ = await self.handle(command) }
            if let activity { activity.spawn(body) } else { Task(operation: body) }
            return true
        }
        guard line.hasPrefix(":") else {
            await sendText(line)
            return true
        }
        let parts = line.dropFirst().split(separator: " ", maxSplits: 1).map(String.init)
        let word = parts.first ?? ""
        let argument = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        guard let command = REPLCommand.find(word) else {
            output.line(.error, "unknown command :\(TerminalSanitizer.sanitize(word)) — :help lists them")
            return true
        }
        switch command.name {
        case "help": help(argument)
        case "quit": return false
        case "home": await show(PageContext(type: .homepage, location: "app://home"))
        case "product":
            guard !argument.isEmpty else { return usage(command) }
            await show(PageContext(type: .product, data: [argument], location: "app://product/\(argument)"))
        case "category":
            guard !argument.isEmpty else { return usage(command) }
            await show(
                PageContext(
                    type: .category, data: argument.split(separator: "/").map(String.init),
                    location: "app://category/\(argument)"))
        case "search":
            guard !argument.isEmpty else { return usage(command) }
            await show(PageContext(type: .search, data: [argument], location: "app://search"))
        case "cart":
            await show(
                PageContext(type: .cart, data: argument.split(separator: " ").map(String.init), location: "app://cart"))
        case "other": await show(PageContext(type: .other, location: argument.isEmpty ? "app://other" : argument))
        case "open": await open()
        case "prepare": await prepare(argument)
        case "width":
            guard let width = Int(argument), width >= 20, width <= 1000 else { return usage(command) }
            carousel.setWidth(width)
            output.line(.dim, "(width \(width))")
            await presenter.redrawLatestCarousel()
        case "close": await engine.closeAssistant()
        case "s": await suggest(argument)
        case "retry": await retry()
        case "new":
            await engine.startNewChat()
            output.line(.dim, "(new chat)")
        case "tap": await tap(argument)
        case "b": await button(argument)
        case "left", "right":
            guard let block = presenter.latestProductReply?.productBlock else {
                output.line(.warning, "no carousel to scroll")
                return true
            }
            carousel.scroll(block, by: command.name == "left" ? -1 : 1)
            await presenter.redrawLatestCarousel()
        case "like", "dislike": await rate(command.name == "like" ? .like : .dislike)
        case "user":
            let ids = argument.split(separator: " ").map(String.init)
            guard let id = ids.first else { return usage(command) }
            await screens.hideOrIdentityChanged()
            await engine.setUser(userId: id, sessionId: ids.count > 1 ? ids[1] : nil)
            output.line(
                .dim, "(identity changed to \(TerminalSanitizer.sanitize(id)); revisit a screen to prepare again)")
        case "logout":
            await screens.hideOrIdentityChanged()
            await engine.resetIdentity()
            output.line(.dim, "(identity reset)")
        case "lock": await engine.lockPresentation()
        case "unlock": await engine.unlockPresentation()
        case "background": setForeground(false)
        case "foreground":
            setForeground(true)
            visibleCardsChanged(presenter.visibleCards)  // visibility starts again from zero (PR5)
        case "state": await inspect()
        case "log": await showLog()
        case "fault": fault(argument)
        case "wait":
            guard let duration = TranscriptFormat.parseDuration(argument) else { return usage(command) }
            try? await clock.sleep(for: duration)
            output.line(.dim, "(\(TranscriptFormat.format(duration)) later)")
        case "clear-faults":
            demoStore?.clearFaults()
            output.line(.dim, "(faults cleared)")
        default: return usage(command)
        }
        return true
    }

    // MARK: - Commands

    private func help(_ argument: String) {
        if let command = REPLCommand.find(argument.replacingOccurrences(of: ":", with: "")), !argument.isEmpty {
            output.line(":\(command.name) \(command.arguments) — \(command.summary)")
        } else {
            for line in REPLCommand.helpText.split(separator: "\n") { output.line(String(line)) }
        }
    }

    private func usage(_ command: REPLCommand) -> Bool {
        output.line(.warning, "usage: :\(command.name) \(command.arguments)")
        return true
    }

    private func show(_ page: PageContext) async {
        apply(impressions.visibleChanged([]))  // the chat's cards are not on this screen
        output.line(.dim, "(screen: \(Self.describe(page)))")
        await screens.show(page)
        if !settings.interactive { await screens.settle() }
    }

    private func open() async {
        guard let result = await screens.tapEntry(presenter: presenter) else {
            output.line(.warning, "no entry button on this screen (yet)")
            return
        }
        if result != .opened { output.line(.warning, "openAssistant: \(result)") }
    }

    private func sendText(_ text: String) async {
        guard await engine.isAssistantOpen else {
            output.line(.warning, "the chat is closed: :open it first (your text was not sent)")
            return
        }
        switch await engine.sendMessage(text) {
        case .success: await settleReply()
        case .failure(let refusal): output.line(.warning, "not sent: \(Self.describe(refusal))")
        }
    }

    private func suggest(_ argument: String) async {
        guard let index = Int(argument), index >= 1 else {
            output.line(.warning, "usage: :s N")
            return
        }
        // The engine reports a suggest that is not there as empty text; say what happened.
        guard await engine.chatSnapshot.suggests.indices.contains(index - 1) else {
            output.line(.warning, "no suggest \(index) on screen (suggests are hidden while a message is on its way)")
            return
        }
        switch await engine.sendSuggest(at: index - 1) {
        case .success: await settleReply()
        case .failure(let refusal): output.line(.warning, "not sent: \(Self.describe(refusal))")
        }
    }

    private func retry() async {
        let failed = await engine.chatSnapshot.messages.last { $0.canRetry }
        guard let failed else {
            output.line(.warning, "nothing to retry")
            return
        }
        switch await engine.retryMessage(id: failed.id) {
        case .success: await settleReply()
        case .failure(let refusal): output.line(.warning, "not sent: \(Self.describe(refusal))")
        }
    }

    private func settleReply() async {
        if !settings.interactive { await engine.waitForReply() }
    }

    private func tap(_ argument: String) async {
        let words = argument.split(separator: " ")
        guard let block = presenter.lastShownBlock, let first = words.first, let index = Int(first),
            block.products.indices.contains(index - 1), words.count == 1 || (words.count == 2 && words[1] == "twice")
        else {
            output.line(.warning, "usage: :tap N [twice] (a card number of the carousel on screen)")
            return
        }
        let product = block.products[index - 1]
        let engine = self.engine
        let output = self.output
        let presses = words.count == 2 ? 2 : 1
        let press: @Sendable (Int) async -> Void = { number in
            let result = await engine.performAssistantProductAction(product: product.ref, action: .tap)
            if result != .accepted {
                output.line(.warning, "tap\(presses > 1 ? " #\(number)" : ""): \(result.rawValue)")
            }
        }
        guard presses == 2 else { return await press(1) }
        // A double tap: the second press reaches the engine while the first one's transition
        // (the chat closing) is under way (PR9), deterministically, not as a race.
        presenter.duringNextDismiss { await press(2) }
        await press(1)
        if let second = presenter.takeDuringNextDismiss() { await second() }  // no transition started
    }

    private func prepare(_ argument: String) async {
        guard let page = await screens.page else {
            output.line(.warning, "go to a screen first")
            return
        }
        let selector = argument.isEmpty ? settings.assistantSelector : argument
        let result = await engine.prepareAssistant(assistantSelector: selector, pageContext: page)
        output.line(
            .dim, "(prepareAssistant \(TerminalSanitizer.sanitize(selector)): \(ScreenController.describe(result)))")
    }

    private func button(_ argument: String) async {
        guard let reply = presenter.snapshot?.messages.last(where: { !$0.buttons.isEmpty }), let index = Int(argument),
            reply.buttons.indices.contains(index - 1)
        else {
            output.line(.warning, "usage: :b N (a button of the latest reply)")
            return
        }
        let result = await engine.performReplyButton(assistantMessageId: reply.id, index: index - 1)
        if result != .accepted { output.line(.warning, "button: \(result.rawValue)") }
    }

    private func rate(_ rating: AssistantRating) async {
        guard let reply = await engine.chatSnapshot.messages.last(where: { $0.role == .assistant }) else {
            output.line(.warning, "no reply to rate")
            return
        }
        if await engine.rateReply(assistantMessageId: reply.id, rating: rating) {
            output.line(.success, "rated: \(rating.rawValue)")
        } else {
            output.line(.warning, "rating unavailable for this reply (no ID, or already rated)")
        }
    }

    private func setForeground(_ value: Bool) {
        foreground = value
        presenter.setAvailability(value ? .available : .notVisible)
        apply(value ? impressions.enteredForeground() : impressions.enteredBackground())
        output.line(.dim, value ? "(window in the foreground)" : "(window in the background)")
    }

    private func inspect() async {
        output.line("preparation: \(await engine.preparationState.rawValue)")
        output.line("dialog:      \(await engine.dialogState.rawValue)")
        output.line("chat:        \(await engine.isAssistantOpen ? "open" : "closed")")
        output.line("locks:       \(await engine.presentationLocks)")
        output.line("user.uid:    \(TerminalSanitizer.sanitize(await engine.canonicalUserID ?? "(unknown)"))")
        output.line("threadId:    \(await engine.currentThreadID ?? "(no dialog)")")
        output.line("window:      \(foreground ? "foreground" : "background")")
    }

    private func showLog() async {
        await engine.flushTracking()
        let log = await engine.trackingLog
        if log.isEmpty { output.line(.dim, "(nothing tracked yet)") }
        for record in log { output.untrusted(record.description, prefix: "  ") }
    }

    private func fault(_ argument: String) {
        guard demoStore != nil || replaying else {
            output.line(.warning, "faults are a demo store feature")
            return
        }
        let words = argument.split(separator: " ").map(String.init)
        guard let name = words.first else {
            for (name, summary) in DemoStore.faultHelp { output.line("  \(name) — \(summary)") }
            return
        }
        guard let fault = DemoFault(rawValue: name) else {
            output.line(.error, "unknown fault \(TerminalSanitizer.sanitize(name)) — :fault lists them")
            return
        }
        let mode = words.count > 1 ? DemoFaultMode(rawValue: words[1]) : .once
        guard let mode else {
            output.line(.error, "fault mode is once or sticky")
            return
        }
        demoStore?.inject(fault, mode: mode)  // on replay the transcript's exchanges carry the fault
        output.line(.dim, "(fault \(fault.rawValue) armed, \(mode.rawValue))")
    }

    // MARK: - Impressions (PR5)

    /// A started visibility timer: the card may count once `due` passes on `elapsed`.
    private struct PendingImpression: Sendable {
        let ref: AssistantProductRef
        let generation: UInt64
        let due: Duration
    }

    /// The cards in the viewport changed. `ImpressionTimer` decides (1 s continuously in the
    /// viewport, chat open, window in the foreground); this session only runs its timers.
    /// Piped sessions on live services run no timers, so their output stays deterministic.
    private func visibleCardsChanged(_ cards: [AssistantProduct]) {
        guard settings.interactive || time != nil else { return }
        for card in cards { cardNames[card.ref] = card.name }
        if impressions.isChatOpen != presenter.isPresented {
            apply(presenter.isPresented ? impressions.chatOpened() : impressions.chatClosed())
        }
        apply(impressions.visibleChanged(cards.map(\.ref)))
    }

    /// Executes the machine's timer actions. One ticker task serves every timer, reporting
    /// due cards in the order their timers started: separate tasks for cards that became
    /// visible together would report them in whatever order the scheduler woke them, and a
    /// transcript would not replay byte for byte.
    private func apply(_ actions: [ImpressionTimer<AssistantProductRef>.Action]) {
        for action in actions {
            switch action {
            case .startTimer(let ref, let generation, let after):
                pendingImpressions.append(PendingImpression(ref: ref, generation: generation, due: elapsed() + after))
            case .cancelTimer(let ref):
                pendingImpressions.removeAll { $0.ref == ref }
            case .reportImpression:
                break  // only `timerFired` reports, and the ticker handles that
            }
        }
        if pendingImpressions.isEmpty {
            stopImpressionTicker()
        } else if impressionTicker == nil {
            tickerGeneration += 1
            let generation = tickerGeneration
            let body: @Sendable () async -> Void = { [weak self] in await self?.runImpressionTicker(generation) }
            impressionTicker = activity.map { $0.spawn(body) } ?? Task(operation: body)
        }
    }

    /// Sleeps until the earliest timer is due, feeds every due timer to the machine in order,
    /// and goes on until none is left.
    private func runImpressionTicker(_ generation: UInt64) async {
        defer { if tickerGeneration == generation { impressionTicker = nil } }
        while tickerGeneration == generation, let next = pendingImpressions.first {
            let wait = next.due - elapsed()
            if wait > .zero {
                do { try await clock.sleep(for: wait) } catch { return }
            }
            guard tickerGeneration == generation, !Task.isCancelled else { return }
            let now = elapsed()
            let ready = Array(pendingImpressions.prefix { $0.due <= now })
            pendingImpressions.removeFirst(ready.count)
            for timer in ready {
                for case .reportImpression(let ref) in impressions.timerFired(timer.ref, generation: timer.generation) {
                    let result = await engine.performAssistantProductAction(product: ref, action: .visibleImpression)
                    if result == .accepted {
                        output.singleLine(.dim, prefix: "(impression: ", cardNames[ref] ?? "?", suffix: ")")
                    }
                }
            }
        }
    }

    private func stopImpressionTicker() {
        impressionTicker?.cancel()
        impressionTicker = nil
        tickerGeneration += 1
    }

    // MARK: - Descriptions

    static func describe(_ page: PageContext) -> String {
        let data = page.data.joined(separator: ",")
        return TerminalSanitizer.sanitize(page.type.rawValue + (data.isEmpty ? "" : " " + data))
    }

    static func describe(_ refusal: AssistantSendRefusal) -> String {
        switch refusal {
        case .busy: return "a message is already on its way"
        case .notReady: return "the assistant is not prepared"
        case .emptyText: return "empty message"
        case .notRetryable: return "nothing to retry"
        case .noIdentity: return "the user id is not known yet"
        case .noSuchSuggest: return "there is no such suggest on screen"
        }
    }
}
