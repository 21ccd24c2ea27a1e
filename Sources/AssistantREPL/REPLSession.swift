import DemoStore
import Foundation
import ShoppingAssistant

/// The REPL core around one engine: what each command acts on — the engine, the chat screen
/// (presenter and carousel) and the host app (`REPLHost`) — and `handle(_:)`, which runs one
/// line through the command table (`REPLCommandTable`). The parts are built and connected to
/// the engine by `REPLWiring`; lines are read by `REPLReadLoop` and each runs to the end of its
/// step, on the session's time, through `REPLStepper`. `REPLEnvironment` builds it.
///
/// A command is a row of the command table calling a method of this actor; commands of a group
/// of their own live in an extension in a file of their own.
package actor REPLSession {
    /// The reader of `run(reader:)`: a refused message goes back on its line.
    private var reader: (any LineReader)?
    /// The text `keep` last put back on the line, until the next line is handled.
    private var offeredLine: String?
    /// Warnings the read loop prints under its banner.
    private var notesAtStart: [String] = []
    /// Whether the delivery queue is kept in the state directory, for the next start.
    private(set) var queueOnDisk = false

    /// The delivery queue lives in the state directory: what is left at the end is kept.
    func keepQueueOnDisk() {
        queueOnDisk = true
    }
    /// The engine and the host side wired to it: replaced whole by `:restart`.
    private struct Parts: Sendable {
        let engine: AssistantEngine
        let carousel: CarouselState
        let presenter: ChatPresenter
        let host: REPLHost
        let shop: REPLShop

        init(engine: AssistantEngine, wiring: REPLWiring) {
            self.engine = engine
            carousel = wiring.carousel
            presenter = wiring.presenter
            host = wiring.host
            shop = wiring.shop
        }
    }

    private let parts: Locked<Parts>
    /// The engine the commands call now (a new one after `:restart`). Internal, for the
    /// command extensions in other files.
    nonisolated var engine: AssistantEngine { parts.withLock { $0.engine } }
    private let demoStore: DemoStore?
    nonisolated let output: REPLOutput
    let settings: REPLSettings
    private let clock: any Clock<Duration>
    private let time: VirtualTime?
    private let replaying: Bool
    /// Real time that passes only while a command runs, for the impression timers of a
    /// session that waits for each command on real time.
    private let stepClock: StepClock?
    private let activity: ActivityMonitor?
    private nonisolated var carousel: CarouselState { parts.withLock { $0.carousel } }
    private nonisolated var presenter: ChatPresenter { parts.withLock { $0.presenter } }
    private let commands = REPLCommandTable.standard
    /// The app around the chat.
    nonisolated var host: REPLHost { parts.withLock { $0.host } }
    /// The shop the app is: cart, purchase, account, push permission, events, widget.
    nonisolated var shop: REPLShop { parts.withLock { $0.shop } }
    /// Makes its IDs for the shop.
    private let uuid: @Sendable () -> UUID
    /// `:offline` and `:online`.
    nonisolated let network: NetworkSwitch
    /// The wall clock the engine stamps events with, for the ages `:queue` shows.
    let wallClock: @Sendable () -> Date
    /// A new engine on the same stores, transport and clock (`:restart`); nil where the
    /// session was given an engine alone.
    private let makeEngine: (@Sendable () -> AssistantEngine)?

    init(
        engine: AssistantEngine, demoStore: DemoStore?, output: REPLOutput, settings: REPLSettings,
        clock: any Clock<Duration>, time: VirtualTime?, stepClock: StepClock? = nil, replaying: Bool,
        uuid: @escaping @Sendable () -> UUID = { UUID() }, network: NetworkSwitch = NetworkSwitch(),
        wallClock: @escaping @Sendable () -> Date = { Date() }, restart: (@Sendable () -> AssistantEngine)? = nil
    ) async {
        self.demoStore = demoStore
        self.output = output
        self.settings = settings
        self.clock = clock
        self.time = time
        self.replaying = replaying
        self.stepClock = stepClock
        activity = time?.activity
        self.uuid = uuid
        self.network = network
        self.wallClock = wallClock
        makeEngine = restart
        let wiring = await REPLWiring(
            engine: engine, output: output, settings: settings, clock: stepClock ?? clock, activity: time?.activity,
            demoCatalogue: demoStore != nil || replaying, uuid: uuid)
        parts = Locked(Parts(engine: engine, wiring: wiring))
    }

    /// Runs one step at a time on this session's time: for a driver of its own (a replay).
    nonisolated package var stepper: REPLStepper {
        REPLStepper(
            session: self, time: time, stepClock: stepClock,
            waitsForEachCommand: !settings.interactive)
    }

    /// A person at a terminal, on the clock's own time: Ctrl-C ends what a line waits for, and
    /// `:log` does not make them wait long.
    private var atTerminalOnRealTime: Bool { settings.interactive && time == nil }

    /// A warning to print under the banner: something about the session's state the user
    /// should know before typing.
    func noteAtStart(_ warning: String) {
        notesAtStart.append(warning)
    }

    /// Reads lines from `reader` and runs each to the end of its step, until `:quit` or the end
    /// of input; `observer` hears of each step.
    package func run(reader: any LineReader, observer: (any REPLStepObserver)? = nil) async {
        self.reader = reader
        let loop = REPLReadLoop(
            session: self, stepper: stepper, output: output, settings: settings,
            onDemoStore: demoStore != nil, interruptible: atTerminalOnRealTime, notes: notesAtStart)
        await loop.run(reader: reader, observer: observer)
    }

    /// The terminal was resized: the chat follows it unless a width was set (PR3).
    package func terminalResized(_ resize: TerminalResize) async {
        if carousel.terminalResized(resize) { await presenter.redrawAfterResize() }
    }

    /// The prompt shows the screen, the entry button and whether the chat is open.
    func prompt() async -> String {
        let page = await host.page
        let location = page.map { REPLHost.describe($0) } ?? "no screen"
        if await engine.isAssistantOpen { return "chat[\(location)]> " }
        if let title = await host.entryButton { return "\(location) [\(TerminalSanitizer.sanitize(title))]> " }
        return "\(location)> "
    }

    /// Handles one line: a `:command`, or chat text; returns false to quit.
    ///
    /// ` &` at the end runs a command without waiting, as a user who types on while the app
    /// still works would; a chat message only in a session that waits for replies (a pipe, a
    /// transcript) — in a terminal a message never waits, and its `&` is part of the text.
    /// `::text` sends `:text`; the words people type to leave other tools (`exit`, `\q`, …) are
    /// answered with the way out instead of being sent, and `::exit` sends the word itself.
    package func handle(_ line: String) async -> Bool {
        // The text put back on the line, then a command typed after it as the warning advised
        // (`hello` + `:open`): the command runs, and the text comes back on the next line.
        let offered = offeredLine
        offeredLine = nil
        if let offered, line.count > offered.count, line.hasPrefix(offered) {
            let typed = String(line.dropFirst(offered.count))
            // Only a command by its full name (`:open`, `:queue clear`), never a prefix or an
            // alias: `ok:D` must not rate a reply as `:dislike`. Never a quit, which would take
            // the text along.
            let word = typed.dropFirst().prefix { $0 != " " }.lowercased()
            if typed.hasPrefix(":"), commands.commands.contains(where: { $0.name == word && !$0.needsFullName }) {
                let keepGoing = await handle(typed)
                if keepGoing, reader?.offerNextLine(offered) == true { offeredLine = offered }
                return keepGoing
            }
        }
        if line.hasSuffix(" &"), line.count > 2, line.hasPrefix(":") || !settings.interactive {
            let command = String(line.dropLast(2)).trimmingCharacters(in: .whitespaces)
            let body: @Sendable () async -> Void = { _ = await self.handle(command) }
            if let activity { activity.spawn(body) } else { Task(operation: body) }
            return true
        }
        if line.hasPrefix("::") {
            // `::exit` sends the word the REPL would otherwise answer; any other `::text`, `:text`.
            let rest = String(line.dropFirst(2))
            await sendText(Self.leavingWords.contains(rest.lowercased()) ? rest : ":" + rest, typed: line)
            return true
        }
        guard line.hasPrefix(":") else {
            if Self.leavingWords.contains(line.lowercased()) {
                let word = TerminalSanitizer.sanitize(line)
                output.line(
                    .warning,
                    "'\(word)' was not sent: :quit leaves, :close closes the chat; to send the word, type ::\(word)")
                return true
            }
            await sendText(line)
            return true
        }
        return await commands.dispatch(line, in: self)
    }

    /// What people type to leave psql, sqlite3, redis-cli or a shell: never a message by
    /// accident.
    static let leavingWords: Set<String> = ["exit", "quit", "\\q", ".quit", ".exit", "\\quit"]

    /// Whether the chat is on screen.
    var isChatOpen: Bool {
        get async { await engine.isAssistantOpen }
    }

    /// Tab completion of command names and their arguments, from the command table.
    package static var completer: LineCompleter { completion.completer }

    /// The completion table behind `completer`, for adding the demo catalogue's words.
    package static var completion: CommandCompletion { REPLCommandTable.standard.completion }

    /// The arguments still to type for the command being typed, for the line reader's hint.
    package static func hint(for line: String) -> String { REPLCommandTable.standard.hint(for: line) }

    // MARK: - Help

    nonisolated func help(_ argument: String) {
        guard !argument.isEmpty else {
            for line in commands.helpLines(messagesWait: !settings.interactive) { output.line(line) }
            return
        }
        for line in commands.help(for: argument) { output.line(line) }
    }

    // MARK: - The chat screen

    /// Sends `text`, which the user typed as `typed` (`::text` sends `:text`).
    private func sendText(_ text: String, typed: String? = nil) async {
        let typed = typed ?? text
        guard await engine.isAssistantOpen else {
            output.line(.warning, "the chat is closed: :open it first (your text was not sent\(keep(typed)))")
            return
        }
        switch await engine.sendMessage(text) {
        case .success: await settleReply()
        case .failure(let refusal):
            output.line(.warning, "not sent: \(OutcomeWording.refusal(refusal))\(keep(typed))")
        }
    }

    /// A message the engine or the chat refused is not lost: in a line editor the line as it
    /// was typed is back on the next prompt, to send again (or edit) once it can go. A line
    /// with control characters (typed quoted, Ctrl-V) is not: the editor would run them as
    /// keys. Says so, or nothing.
    private func keep(_ typed: String) -> String {
        guard !typed.isEmpty, !typed.unicodeScalars.contains(where: DisplayWidth.isControl),
            reader?.offerNextLine(typed) == true
        else { return "" }
        offeredLine = typed
        return "; it is back on the line"
    }

    func sendSuggest(number: Int) async {
        // The engine reports a suggest that is not there as empty text; say what happened.
        let chat = await engine.chatSnapshot
        guard chat.suggests.indices.contains(number - 1) else {
            let why: String
            switch (chat.isSending, chat.suggests.count) {
            case (true, _): why = "suggests are hidden while a message is on its way"
            case (false, 0): why = "there are none"
            case (false, 1): why = "there is one: :s 1"
            case (false, let count): why = "there are \(count): :s 1 to :s \(count)"
            }
            output.line(.warning, "no suggest \(number) on screen (\(why))")
            return
        }
        switch await engine.sendSuggest(at: number - 1) {
        case .success: await settleReply()
        case .failure(let refusal): output.line(.warning, "not sent: \(OutcomeWording.refusal(refusal))")
        }
    }

    /// A line's step is over (`REPLStepper`, in sessions whose time passes in steps only), or
    /// time passed between lines (`restartingCountdowns: false`).
    func stepEnded(restartingCountdowns: Bool = true) {
        presenter.stepEnded(restartingCountdowns: restartingCountdowns)
    }

    func retry() async {
        let failed = await engine.chatSnapshot.messages.last { $0.canRetry }
        guard let failed else {
            output.line(.warning, "nothing to retry")
            return
        }
        if case .failed(let error) = failed.status {
            // A refused key or network would refuse the same request again: none is offered.
            guard OutcomeWording.offersRetry(error) else {
                output.line(
                    .warning,
                    "not sent again: \(OutcomeWording.failure(error)) would fail the same way; "
                        + "once that is fixed, send the text as a new message")
                return
            }
            // Retry-After is honoured: a retry before it would only be refused again.
            if let wait = presenter.retryWait(for: failed) {
                output.line(.warning, OutcomeWording.failure(error, retryIn: wait))
                return
            }
        }
        switch await engine.retryMessage(id: failed.id) {
        case .success: await settleReply()
        case .failure(let refusal): output.line(.warning, "not sent: \(OutcomeWording.refusal(refusal))")
        }
    }

    private func settleReply() async {
        if !settings.interactive { await engine.waitForReply() }
    }

    func closeChat() async {
        guard await engine.isAssistantOpen else {
            output.line(.warning, "the chat is not open")
            return
        }
        await engine.closeAssistant()
    }

    func startNewChat() async {
        await engine.startNewChat()
        output.line(.dim, "(new chat)")
    }

    /// Taps card `number` of the carousel on screen, once or as a double tap; false when there
    /// is no such card.
    func tap(card number: Int, twice: Bool) async -> Bool {
        guard let block = presenter.lastShownBlock, block.products.indices.contains(number - 1) else { return false }
        let product = block.products[number - 1]
        let engine = self.engine
        let output = self.output
        let press: @Sendable (Int) async -> Void = { press in
            let result = await engine.performAssistantProductAction(product: product.ref, action: .tap)
            if result != .accepted {
                output.line(.warning, OutcomeWording.ignored(result, what: "tap" + (twice ? " #\(press)" : "")))
            }
        }
        guard twice else {
            await press(1)
            return true
        }
        // A double tap: the second press reaches the engine while the first one's transition
        // (the chat closing) is under way (PR9), deterministically, not as a race.
        presenter.duringNextDismiss { await press(2) }
        await press(1)
        if let second = presenter.takeDuringNextDismiss() { await second() }  // no transition started
        return true
    }

    /// Presses reply button `number` of the latest reply with buttons; false when there is none.
    func pressButton(number: Int) async -> Bool {
        guard let reply = presenter.snapshot?.messages.last(where: { !$0.buttons.isEmpty }),
            reply.buttons.indices.contains(number - 1)
        else { return false }
        let result = await engine.performReplyButton(assistantMessageId: reply.id, index: number - 1)
        if result != .accepted { output.line(.warning, OutcomeWording.ignored(result, what: "button")) }
        return true
    }

    func scroll(by pages: Int) async {
        guard let block = presenter.latestProductReply?.productBlock else {
            output.line(.warning, "no carousel to scroll")
            return
        }
        guard carousel.scroll(block, by: pages) else {
            output.line(.dim, pages < 0 ? "(at the first card already)" : "(at the last card already)")
            return
        }
        await presenter.redrawLatestCarousel()
    }

    func setWidth(_ width: Int) async {
        carousel.setWidth(width)
        output.line(.dim, "(width \(width), fixed until :width auto)")
        await presenter.redrawLatestCarousel()
    }

    /// `:width auto`: back to the terminal's width, and its resizes from now on.
    func followTerminalWidth() async {
        let width = carousel.followTerminal()
        output.line(.dim, "(width \(width), following the terminal)")
        await presenter.redrawLatestCarousel()
    }

    func rate(_ rating: AssistantRating) async {
        guard let reply = await engine.chatSnapshot.messages.last(where: { $0.role == .assistant }) else {
            output.line(.warning, "no reply to rate")
            return
        }
        switch await engine.rateReply(assistantMessageId: reply.id, rating: rating) {
        case .sent: output.line(.success, "rated: \(rating.rawValue)")
        case .alreadyRated: output.line(.warning, "this reply is rated already (one rating per reply)")
        case .unknownReply: output.line(.warning, "this reply cannot be rated (it has no ID)")
        }
    }

    // MARK: - Inspection, time and the demo store

    func showState() async {
        output.line("preparation: \(await engine.preparationState.rawValue)")
        output.line("dialog:      \(await engine.dialogState.rawValue)")
        output.line("chat:        \(await engine.isAssistantOpen ? "open" : "closed")")
        output.line("locks:       \(await engine.presentationLocks)")
        output.line("user.uid:    \(TerminalSanitizer.sanitize(await engine.canonicalUserId ?? "(unknown)"))")
        output.line("threadId:    \(await engine.currentThreadId ?? "(no dialog)")")
        output.line("window:      \(await host.isForeground ? "foreground" : "background")")
    }

    /// `:log`: what was tracked, once every first attempt under way has ended. At a terminal on
    /// real time it waits for them `logPatience` at most — offline, the retries of a first
    /// attempt take seconds (DL1) — and says how many records are not in the log yet; anywhere
    /// else (a pipe, a recording, virtual time) it waits for them all, so that what it prints
    /// does not depend on the machine's speed and a recording replays.
    func showLog() async {
        let engine = engine
        let settled: Bool
        if atTerminalOnRealTime {
            settled = await Self.ends(within: Self.logPatience, on: clock) { await engine.flushTracking() }
        } else {
            await engine.flushTracking()
            settled = true
        }
        let log = await engine.trackingLog
        if log.isEmpty { output.line(.dim, "(nothing tracked yet)") }
        for record in log { output.untrusted(Self.logLine(record), prefix: "  ") }
        guard !settled else { return }
        // Being written, waiting for their turn or the session (B8), or on the wire.
        let untried = await engine.deliveryQueue.filter { [.persisting, .waiting, .sending].contains($0.status) }
        guard !untried.isEmpty else { return }
        output.line(
            .dim,
            "(\(untried.count) more not in the log yet: not sent, or still being tried; :log again later, :queue "
                + "to see \(untried.count == 1 ? "it" : "them"))")
    }

    /// How long `:log` at a terminal waits for the first attempts under way.
    static let logPatience: Duration = .milliseconds(300)

    /// Whether `work` ends within `limit` on `clock`; it goes on either way.
    static func ends(
        within limit: Duration, on clock: any Clock<Duration>, _ work: @escaping @Sendable () async -> Void
    ) async -> Bool {
        let timer = Locked<Task<Void, Never>?>(nil)
        let ended = await withCheckedContinuation { continuation in
            let slot = Locked<CheckedContinuation<Bool, Never>?>(continuation)
            let finish: @Sendable (Bool) -> Void = { ended in
                slot.withLock { waiting in
                    defer { waiting = nil }
                    return waiting
                }?.resume(returning: ended)
            }
            timer.withLock {
                $0 = Task {
                    // Cancelled when the work ends first: no sleeper is left on the clock.
                    guard (try? await clock.sleep(for: limit)) != nil else { return }
                    finish(false)
                }
            }
            Task {
                await work()
                finish(true)
            }
        }
        if ended { timer.withLock { $0 }?.cancel() }
        return ended
    }

    /// One `:log` line: the record as the engine describes it, then when an event was raised
    /// (`eventTime`, DL6) and `(queued)` for an attempt the delivery queue made (DL2).
    static func logLine(_ record: TrackingRecord) -> String {
        var line = record.description
        if let eventTime = record.eventTime { line += " eventTime=\(eventTime)" }
        if record.deferred { line += " (queued)" }
        return line
    }

    // MARK: - Restart

    /// `:restart`: shuts the engine down and starts a new one on the same stores (identity,
    /// delivery queue, dialog), transport and clock, as a process restart would; the screens
    /// and the cart start afresh, as in a new process, and the chat comes back on the next
    /// opening (D18).
    func restart() async {
        guard let makeEngine else {
            output.line(.warning, "this session cannot restart its engine")
            return
        }
        let old = engine
        await old.shutdown()
        let engine = makeEngine()
        let wiring = await REPLWiring(
            engine: engine, output: output, settings: settings, clock: stepClock ?? clock, activity: activity,
            demoCatalogue: demoStore != nil || replaying, uuid: uuid)
        parts.withLock { $0 = Parts(engine: engine, wiring: wiring) }
        output.line(
            .dim,
            "(engine restarted on the same stores: identity, delivery queue and conversation kept; "
                + "screens and cart start afresh, the chat comes back on the next :open)")
        // The network is the device's, not the process's: a restart does not bring it back.
        if network.isOffline { output.line(.dim, "(still offline: every request fails to connect until :online)") }
    }

    /// `1 entry`, `3 entries`, `no entry`.
    static func entries(_ count: Int) -> String {
        switch count {
        case 0: return "no entry"
        case 1: return "1 entry"
        default: return "\(count) entries"
        }
    }

    /// `:together CMD; CMD…`: the commands at one moment, in the order given, as an app that
    /// does several things at once — each starts once the one before waits for something (the
    /// engine, the network, time), so the content calls they make are made together (B16). On
    /// virtual time that order is exact; on real time the commands only start in it.
    func together(_ argument: String) async -> REPLCommand.Outcome {
        let lines = argument.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.count >= 2,
            lines.allSatisfy({ line in
                line.hasPrefix(":") && !line.hasSuffix(" &")
                    && !["together", "quit", "exit", "q"].contains(line.dropFirst().split(separator: " ").first ?? "")
            })
        else { return .usage(note: "two commands or more, separated by ;") }
        for line in lines {
            let body: @Sendable () async -> Void = { _ = await self.handle(line) }
            guard let activity else {
                Task(operation: body)
                continue
            }
            activity.spawn(body)
            await activity.waitUntil(busyAtMost: 1)  // this command's own unit: the one started waits
        }
        return .done
    }

    /// Lets `duration` pass; Ctrl-C (a cancelled task) ends it early, and then it says nothing.
    func wait(_ duration: Duration) async {
        do { try await clock.sleep(for: duration) } catch { return }
        output.line(.dim, "(\(DurationText.format(duration)) later)")
    }

    nonisolated func armFault(_ argument: String) {
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

    nonisolated func clearFaults() {
        guard demoStore != nil || replaying else {
            output.line(.warning, "faults are a demo store feature")
            return
        }
        demoStore?.clearFaults()
        output.line(.dim, "(faults cleared)")
    }
}
