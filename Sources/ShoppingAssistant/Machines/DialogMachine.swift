/// Tags one attempt to send one message in one dialog. Results carry it back, and a result
/// whose tag is not the one in flight is dropped: this is how late replies never reach a
/// newer dialog (D13, D17).
struct DialogTag: Hashable, Sendable, CustomStringConvertible {
    let dialog: UInt64
    let messageId: String
    let attempt: Int
    var description: String { "dialog#\(dialog)/\(messageId)#\(attempt)" }
}

/// Why a dialog ended (wire.md `chat_dialog_end` reasons).
enum DialogEndReason: String, Sendable, Hashable {
    case newChat = "new_chat"
    case identityChange = "identity_change"
    case assistantChange = "assistant_change"
}

/// What a new dialog is bound to when its first message is sent (D14, S2, S3).
struct DialogStart: Sendable, Hashable {
    let prepared: PreparedAssistant
    let uid: String
    let tenant: String
    /// `prepared.pageContext` as sent to Gravity (SDK attributes, upper-case type).
    let page: PageContext
}

/// What a dialog is bound to for its whole life: its start and its thread (D14, D15).
struct DialogContext: Sendable, Hashable {
    let threadId: String
    let start: DialogStart

    var runtimeContext: ShoppingRuntimeContext {
        ShoppingRuntimeContext(
            tenantId: start.tenant, uid: start.uid, selector: start.prepared.selector,
            campaignId: start.prepared.campaignId, page: start.page)
    }
}

/// The messages that changed since a presenter was last given a snapshot (see
/// `AssistantChatSnapshot.changedMessageIndices`).
struct ChatChanges: Sendable, Hashable {
    /// Every message is to be taken as new.
    var all = true
    /// Positions of new or changed messages, when not `all`.
    var positions: Set<Int> = []

    mutating func changed(_ position: Int) {
        if !all { positions.insert(position) }
    }

    /// What a delivered snapshot says, and a clean slate for the next one.
    mutating func take() -> [Int]? {
        defer { self = ChatChanges(all: false, positions: []) }
        return all ? nil : positions.sorted()
    }
}

/// The dialog rules (D1–D17) as a value type: what may be sent, what a result does to the
/// dialog, and what the chat shows. Pure: requests are values, answers come back decoded.
///
/// Storage is by turn (a message and its reply), in a `ChunkedVector` that snapshots share:
/// lookups by message ID, reply ID and turn are dictionary or index reads, and no change walks
/// or copies the whole dialog (issue 12's flat cost per message).
struct DialogMachine: Sendable {
    enum State: Sendable, Hashable {
        case empty
        case active
        /// `reconciling` holds the uncertain error while history is read (D5).
        case sending(DialogTag, reconciling: AssistantError?)
    }

    /// Lifecycle events the dialog produces (wire.md § Assistant lifecycle events).
    enum Lifecycle: Sendable, Hashable {
        case messageSend(threadId: String, messageId: String, attempt: Int)
        case messageReply(threadId: String, messageId: String, assistantMessageId: String?, products: Int)
        case messageError(threadId: String, messageId: String, code: AssistantError.Code)
        case feedback(threadId: String, assistantMessageId: String, rating: AssistantRating)
        case dialogEnd(threadId: String, reason: DialogEndReason)
    }

    /// What the root machine must do for the dialog.
    enum Action: Sendable, Hashable {
        case sendMessage(DialogTag, ShoppingMessageRequest)
        /// Start the reply deadline, or the bound on the history read (D3, D5).
        case startReplyTimer(DialogTag, Duration)
        case cancelReplyTimer(DialogTag)
        /// Stop waiting for the transport (the request may still complete on the server).
        case abandonRequest(DialogTag)
        /// Stop waiting for the history check.
        case abandonHistory(DialogTag)
        case fetchHistory(DialogTag, threadId: String, resourceId: String, tenant: String)
        case sendFeedback(turn: Int, ShoppingFeedbackRequest)
        case track(Lifecycle)
        /// The chat model changed: publish a new snapshot.
        case publish
        /// Nothing is in flight any more: callers waiting for the reply may go on.
        case settled
        /// Notes for the log: malformed items dropped from a reply, a send that failed (the chat
        /// shows it, so they are not errors).
        case diagnostics([String])
    }

    static let replyTimeout: Duration = .seconds(120)  // D3
    /// How long the history check after an uncertain outcome may take (D5). Without a bound a
    /// stalled read would leave the dialog "sending" and refuse every new message.
    static let historyTimeout: Duration = .seconds(30)

    private(set) var state: State = .empty
    /// Increases with every new dialog; refs and tags carry it.
    private(set) var epoch: UInt64 = 1
    private(set) var context: DialogContext?
    private(set) var turns = ChunkedVector<DialogTurn>()
    /// The chat's lines in screen order: each turn's message, then its reply.
    private(set) var items = ChunkedVector<ChatItem>()
    /// Increases whenever anything a snapshot shows changes.
    private(set) var revision: UInt64 = 0
    /// What changed since the presenter was last given a snapshot.
    var changes = ChatChanges()
    /// The turn of the last reply on screen: its suggests are the chat's (C7).
    private(set) var lastReplyTurn: Int?

    /// Which buttons of the restored replies are offered, when the dialog was restored (D18, AC4).
    private(set) var restoredOffers: RestoredOffers?

    private var turnByMessageId: [String: Int] = [:]
    private var turnByAssistantMessageId: [String: Int] = [:]
    /// The screen position of each turn's user message.
    private var userPosition: [Int] = []
    /// Turns whose reply has not been shown yet (AN7).
    private var unshown: [Int] = []
    /// Whether replies keep the bytes they were decoded from, for a dialog store (D18); without
    /// one they are dropped as a reply lands, so a long dialog holds each reply once.
    var keepsReceived = false

    var publicState: AssistantDialogState {
        switch state {
        case .empty: return .empty
        case .active: return .active
        case .sending: return .sending
        }
    }

    var isSending: Bool {
        if case .sending = state { return true }
        return false
    }

    // MARK: - Sending

    /// Whether `text` is white space only, as `allSatisfy(\.isWhitespace)` says. A text whose
    /// first scalar is not white space is not (a character is white space when its first
    /// scalar is): that, the usual case, is decided without Unicode's tables or grapheme
    /// breaking; only a text that starts with white space is read character by character.
    static func isBlank(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first else { return true }
        guard isWhiteSpace(first) else { return false }
        return text.allSatisfy(\.isWhitespace)
    }

    /// Unicode's White_Space property, which has had these 25 code points since Unicode 6.3.
    static func isWhiteSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// A new message. `start` is what a new dialog would be bound to (the latest ready
    /// preparation and the canonical uid); it is ignored when a dialog exists (D14).
    mutating func sendRequested(text: String, messageId: String, newThreadId: String, start: DialogStart?)
        -> Result<[Action], AssistantSendRefusal>
    {
        guard !Self.isBlank(text) else { return .failure(.emptyText) }
        if isSending { return .failure(.busy) }  // D2
        if context == nil {
            guard let start else { return .failure(.notReady) }
            context = DialogContext(threadId: newThreadId, start: start)  // D14, D15
        }
        guard let context else { preconditionFailure("a dialog has a context once it has a message") }
        let request = Self.request(in: context, messageId: messageId, text: text)
        let turn = turns.count
        turns.append(
            DialogTurn(
                user: UserMessage(messageId: messageId, text: text, status: .sending, attempts: 0, request: request)))
        turnByMessageId[messageId] = turn
        userPosition.append(items.count)
        changes.changed(items.count)
        items.append(.user(turn: turn))
        return .success(dispatch(turn: turn))
    }

    /// The request of message `messageId` in the dialog of `context`: the same value, and so
    /// the same bytes, whenever it is made (D6), also after a restore (D19).
    private static func request(in context: DialogContext, messageId: String, text: String) -> ShoppingMessageRequest {
        ShoppingMessageRequest(
            threadId: context.threadId, messageId: messageId, resourceId: context.start.uid, text: text,
            runtimeContext: context.runtimeContext)
    }

    /// A failed message again: same ID, same request (D6).
    mutating func retryRequested(messageId: String) -> Result<[Action], AssistantSendRefusal> {
        if isSending { return .failure(.busy) }
        // D6: only a retryable failure (not D8), with the request kept as first sent.
        guard let turn = turnByMessageId[messageId], case .failed(_, retryable: true) = turns[turn].user.status,
            turns[turn].user.request != nil
        else { return .failure(.notRetryable) }
        return .success(dispatch(turn: turn))
    }

    private mutating func dispatch(turn: Int) -> [Action] {
        guard let context, let request = turns[turn].user.request else {
            preconditionFailure("a message is dispatched only with its dialog and request")
        }
        turns[turn].user.attempts += 1
        turns[turn].user.status = .sending
        touch(userOf: turn)
        let attempt = turns[turn].user.attempts
        let tag = DialogTag(dialog: epoch, messageId: request.messageId, attempt: attempt)
        state = .sending(tag, reconciling: nil)
        return [
            .sendMessage(tag, request), .startReplyTimer(tag, Self.replyTimeout),
            .track(.messageSend(threadId: context.threadId, messageId: request.messageId, attempt: attempt)),
            .publish,
        ]
    }

    // MARK: - Outcomes

    /// Whether `tag` is the attempt in flight; anything else is a stale result.
    func isCurrent(_ tag: DialogTag) -> Bool {
        if case .sending(let current, _) = state { return current == tag }
        return false
    }

    /// The `/v1/messages` answer of attempt `tag`. A stale tag yields no action.
    mutating func replyReceived(_ tag: DialogTag, _ result: Result<ReplyContent, WireFailure>, buttonsEnabled: [Bool])
        -> [Action]
    {
        // D13, D17: a result whose tag is not the attempt in flight is dropped.
        guard case .sending(let current, let reconciling) = state, current == tag, reconciling == nil else {
            return []
        }
        switch result {
        case .success(let reply):
            return [.cancelReplyTimer(tag)] + adopt(reply, for: tag, buttonsEnabled: buttonsEnabled)
        case .failure(.cancelled):
            return []  // only the engine cancels; it decided what follows
        case .failure(.failed(let error, let uncertain)):
            if uncertain { return [.cancelReplyTimer(tag)] + reconcile(tag, after: error) }  // D5
            return [.cancelReplyTimer(tag)] + fail(tag, error, retryable: error.code != .messageConflict)  // D4, D8
        }
    }

    /// The reply deadline of `tag` passed (D3), or the history check's bound (D5).
    mutating func replyTimerFired(_ tag: DialogTag) -> [Action] {
        guard case .sending(let current, let reconciling) = state, current == tag else { return [] }
        if var error = reconciling {
            // The history check itself stalled: give up on it, keep the text, offer retry (D5).
            error.message += "; the history could not be read in time"
            return [.abandonHistory(tag)] + fail(tag, error, retryable: true)
        }
        let error = AssistantError(code: .timeout, message: "no reply within \(Self.replyTimeout)")
        return [.abandonRequest(tag)] + reconcile(tag, after: error)
    }

    private mutating func reconcile(_ tag: DialogTag, after error: AssistantError) -> [Action] {
        guard let context else { preconditionFailure("a message in flight has a dialog") }
        state = .sending(tag, reconciling: error)
        return [
            .fetchHistory(tag, threadId: context.threadId, resourceId: context.start.uid, tenant: context.start.tenant),
            .startReplyTimer(tag, Self.historyTimeout),
        ]
    }

    /// The history read after an uncertain outcome (D5, D9, D10). `buttonsEnabled` says, for
    /// the reply to this message found in it (if any), which buttons the handler can handle.
    mutating func historyReceived(
        _ tag: DialogTag, _ result: Result<[HistoryMessage], WireFailure>, buttonsEnabled: (ReplyContent) -> [Bool]
    ) -> [Action] {
        guard case .sending(let current, let reconciling?) = state, current == tag else { return [] }  // D13, D17
        let stop: [Action] = [.cancelReplyTimer(tag)]
        switch result {
        case .success(let messages):
            // D5: only the assistant message that replies to this message ID.
            if let found = messages.first(where: { $0.role == "assistant" && $0.replyTo == tag.messageId }),
                let reply = found.reply
            {
                return stop + adopt(reply, for: tag, buttonsEnabled: buttonsEnabled(reply))
            }
            return stop + fail(tag, reconciling, retryable: true)
        case .failure(.cancelled):
            return stop + fail(tag, reconciling, retryable: true)
        case .failure(.failed(let historyError, _)):
            // D9, D10: keep every local message; the send's own error is what the user sees.
            var error = reconciling
            error.message += "; history could not be read: \(historyError.code.rawValue)"
            return stop + fail(tag, error, retryable: true)
        }
    }

    private mutating func adopt(_ reply: ReplyContent, for tag: DialogTag, buttonsEnabled: [Bool]) -> [Action] {
        guard let context, let turn = turnByMessageId[tag.messageId] else {
            preconditionFailure("the message in flight is in its dialog")
        }
        turns[turn].user.status = .sent
        turns[turn].user.request = nil  // the outcome is final: the retry body can go
        var reply = reply
        if !keepsReceived { reply.received = nil }
        turns[turn].reply = ReplyMessage(content: reply, buttonsEnabled: buttonsEnabled)
        if let id = reply.assistantMessageId { turnByAssistantMessageId[id] = turn }
        touch(userOf: turn)
        placeReply(of: turn)
        unshown.append(turn)
        if turn > (lastReplyTurn ?? -1) { lastReplyTurn = turn }
        state = .active
        var actions: [Action] = [
            .track(
                .messageReply(
                    threadId: context.threadId, messageId: tag.messageId, assistantMessageId: reply.assistantMessageId,
                    products: reply.products?.count ?? 0)),
            .publish, .settled,
        ]
        let notes = reply.diagnostics + Self.buttonNotes(reply, buttonsEnabled: buttonsEnabled)
        if !notes.isEmpty { actions.append(.diagnostics(notes)) }
        return actions
    }

    /// AC3, AC4: a button that is not offered, or offered disabled, is worth a note.
    private static func buttonNotes(_ reply: ReplyContent, buttonsEnabled: [Bool]) -> [String] {
        var notes: [String] = []
        // By route and name: no action (its payload decoded, its URL parsed) made for a note.
        for (index, button) in reply.buttons.enumerated() {
            guard button.route != .notOffered else {
                notes.append("reply button not offered: \(button.actionName) without a valid http(s) URL")
                continue
            }
            if !(buttonsEnabled.indices.contains(index) && buttonsEnabled[index]) {
                notes.append("reply button not offered: the action handler cannot handle \(button.actionName)")
            }
        }
        return notes
    }

    private mutating func fail(_ tag: DialogTag, _ error: AssistantError, retryable: Bool) -> [Action] {
        guard let context, let turn = turnByMessageId[tag.messageId] else {
            preconditionFailure("the message in flight is in its dialog")
        }
        turns[turn].user.status = .failed(error, retryable: retryable)
        if !retryable { turns[turn].user.request = nil }  // final: nothing will send it again
        touch(userOf: turn)
        state = .active
        return [
            .track(.messageError(threadId: context.threadId, messageId: tag.messageId, code: error.code)), .publish,
            .settled, .diagnostics(["message \(tag.messageId) not delivered: \(error)"]),
        ]
    }

    // MARK: - Dialog lifetime

    /// New chat, identity change or assistant change (D13, D16, D17): a fresh, empty dialog.
    /// A request in flight is not cancelled on the server; its late result is dropped by tag.
    mutating func ended(_ reason: DialogEndReason) -> [Action] {
        var actions: [Action] = []
        if case .sending(let tag, _) = state { actions += [.cancelReplyTimer(tag), .settled] }
        if let context { actions.append(.track(.dialogEnd(threadId: context.threadId, reason: reason))) }
        self = DialogMachine(epoch: epoch + 1, revision: revision + 1, keepsReceived: keepsReceived)  // D13
        return actions + [.publish]
    }

    // MARK: - Restoring (D18, D19)

    /// The error a message that was `sending` when the process ended is reconciled under (D19):
    /// the request may have reached the server, as after a connection lost (D5).
    static let endedWhileSending = AssistantError(
        code: .network, message: "the app ended while the message was being answered")

    /// The dialog of an earlier run takes the place of the empty one (D18): its turns as they
    /// were, taken over whole, the retry request of each message that may still be sent rebuilt
    /// from its context (D6), the buttons of its replies offered as `canHandle` says now (AC4).
    /// Its replies count as shown (they were, before the restart: AN7). A message that was
    /// `sending` is reconciled as an uncertain outcome: history is read first (D19, D5). No
    /// `.publish`: the opening that restores it presents it.
    ///
    /// `nil`, and nothing restored, when the dialog holds a message ID twice: no lookup by ID
    /// could be trusted.
    mutating func restore(_ stored: StoredDialog, canHandle: (AssistantAction) -> Bool) -> [Action]? {
        guard context == nil, turns.isEmpty else { return [] }
        let count = stored.turns.count
        var byMessageId: [String: Int] = [:]
        var byAssistantMessageId: [String: Int] = [:]
        var positions: [Int] = []
        var lines: [ChatItem] = []
        var lastReply: Int?
        var inFlight: Int?
        var retryable: [Int] = []
        var landed: [Int] = []
        byMessageId.reserveCapacity(count)
        byAssistantMessageId.reserveCapacity(count)
        positions.reserveCapacity(count)
        lines.reserveCapacity(2 * count)
        // One pass that writes nothing into the turns: the lookups and the screen order. Each
        // field is read where it lies in the vector: a turn bound to a name is a copy of it, a
        // retain and a release of every field.
        var twice = false
        var table: RestoredReplies?
        var restored: [RestoredReplies.Reply] = []  // the table's, read once: each read is a retain
        for index in 0..<count {
            if byMessageId.updateValue(index, forKey: stored.turns[index].user.messageId) != nil { twice = true }
            switch stored.turns[index].user.status {
            case .sending: inFlight = index
            case .failed(_, retryable: true): retryable.append(index)
            case .sent, .failed: break
            }
            positions.append(lines.count)
            lines.append(.user(turn: index))
            if case .none = stored.turns[index].reply { continue }
            if let reply = stored.turns[index].reply?.restoredIndex {
                // The restored replies of a stored dialog are all of one table, the file's.
                if table == nil {
                    table = stored.turns[index].reply?.restoredReplies
                    restored = table?.replies ?? []
                }
                if reply < restored.count, let id = restored[reply].assistantMessageId {
                    byAssistantMessageId[id] = index
                }
            } else {
                if let id = stored.turns[index].reply?.assistantMessageId { byAssistantMessageId[id] = index }
                landed.append(index)
            }
            lastReply = index
            lines.append(.reply(turn: index))
        }
        guard !twice else { return nil }
        let context = stored.context
        self.context = context
        turns = stored.turns
        for index in retryable + (inFlight.map { [$0] } ?? []) {
            let user = turns[index].user
            turns[index].user.request = Self.request(in: context, messageId: user.messageId, text: user.text)
        }
        // AC4: a reply that landed in memory (a dialog handed over unsaved) is asked itself.
        for index in landed {
            guard let reply = turns[index].reply, case .landed(let content) = reply.source else { continue }
            turns[index].reply?.buttonsEnabled = EngineMachine.buttonsEnabled(content, canHandle: canHandle)
        }
        restoredOffers = table.map { RestoredOffers($0, canHandle: canHandle) }
        turnByMessageId = byMessageId
        turnByAssistantMessageId = byAssistantMessageId
        userPosition = positions
        items = ChunkedVector(count: lines.count) { lines[$0] }
        lastReplyTurn = lastReply
        revision += 1
        changes = ChatChanges()
        state = .active
        guard let inFlight else { return [] }
        // D19: uncertain, like a connection lost after sending (D5): history first, nothing resent (D4).
        let tag = DialogTag(
            dialog: epoch, messageId: turns[inFlight].user.messageId, attempt: turns[inFlight].user.attempts)
        state = .sending(tag, reconciling: nil)
        return reconcile(tag, after: Self.endedWhileSending)
    }

    /// A new epoch: older tags are stale (D13).
    private init(epoch: UInt64, revision: UInt64, keepsReceived: Bool) {
        self.epoch = epoch
        self.revision = revision
        self.keepsReceived = keepsReceived
    }

    init() {}

    // MARK: - Ratings

    /// Rates a reply by its assistant message ID (D11): once, and only with an ID.
    /// Whether a rating goes out, or why not.
    enum RatingOutcome: Sendable, Hashable {
        case rated([Action])
        case refused(AssistantRatingResult)
    }

    mutating func rateRequested(assistantMessageId: String, _ rating: AssistantRating) -> RatingOutcome {
        guard let context, let turn = turnByAssistantMessageId[assistantMessageId], var reply = turns[turn].reply
        else { return .refused(.unknownReply) }
        guard reply.rating == nil else { return .refused(.alreadyRated) }  // D11: one rating per reply
        reply.rating = rating
        turns[turn].reply = reply
        touch(replyOf: turn)
        let request = ShoppingFeedbackRequest(
            threadId: context.threadId, messageId: assistantMessageId, resourceId: context.start.uid,
            rating: rating.rawValue,
            runtimeContext: context.runtimeContext)
        return .rated([
            .sendFeedback(turn: turn, request),
            .track(.feedback(threadId: context.threadId, assistantMessageId: assistantMessageId, rating: rating)),
            .publish,
        ])
    }

    /// A rating could not be delivered: offer it again. A stale dialog yields no action.
    mutating func feedbackFailed(dialog: UInt64, turn: Int) -> [Action] {
        guard dialog == epoch, turns.indices.contains(turn), turns[turn].reply != nil else { return [] }
        turns[turn].reply?.rating = nil
        touch(replyOf: turn)
        return [.publish]
    }

    // MARK: - Presentation support

    /// Marks the replies not shown yet as shown and returns their impression URLs, once per
    /// reply (AN7). Only replies that landed since the last call are looked at.
    ///
    /// A turn enters `unshown` once, when its reply lands (a turn's reply never changes after
    /// that), so the list alone says what was shown: marking nothing in the turns keeps an
    /// opening from copying the dialog storage a presenter's snapshot shares.
    mutating func repliesShown() -> [TrackingURL] {
        guard !unshown.isEmpty else { return [] }
        var urls: [TrackingURL] = []
        for turn in unshown {
            guard let reply = turns[turn].reply else { continue }
            urls += reply.content.impressionTrackingURLs
        }
        unshown = []
        return urls
    }

    /// The action handler changed: which buttons are offered is asked again (AC4). Walks the
    /// replies once; the handler changes rarely. A restored dialog's distinct buttons are asked
    /// about once each, and only if an answer changed are its replies shown anew.
    mutating func handlerChanged(canHandle: (AssistantAction) -> Bool) {
        let before = restoredOffers
        restoredOffers = restoredOffers.map { RestoredOffers($0.replies, canHandle: canHandle) }
        let restoredChanged = restoredOffers != before
        for turn in turns.indices {
            guard let reply = turns[turn].reply else { continue }
            switch reply.source {
            case .landed(let content):
                guard !content.buttons.isEmpty else { continue }
                let enabled = EngineMachine.buttonsEnabled(content, canHandle: canHandle)
                guard enabled != reply.buttonsEnabled else { continue }
                turns[turn].reply?.buttonsEnabled = enabled
                touch(replyOf: turn)
            case .restored:
                if restoredChanged { touch(replyOf: turn) }
            }
        }
    }

    /// The product a ref names: item `item` of turn `turn`'s reply.
    func product(turn: UInt64, item: Int) -> ReplyProduct? {
        withProduct(turn: turn, item: item) { $0 }
    }

    /// The visible-impression tracking URLs of the product a ref names (AN5), read in place:
    /// `nil` when there is no such product, an empty list when it has none. An impression
    /// copies no product: impressions come many a second.
    func visibleImpressionURLs(turn: UInt64, item: Int) -> ReplyStorage.TrackingURLs? {
        withProduct(turn: turn, item: item) { $0.visibleImpressionTrackingURLs }
    }

    /// `body` over item `item` of turn `turn`'s reply where the dialog holds it; `nil` when
    /// there is no such product.
    @inline(__always)
    private func withProduct<Result>(turn: UInt64, item: Int, _ body: (ReplyProduct) -> Result) -> Result? {
        guard turn < UInt64(turns.count), let products = turns[Int(turn)].reply?.content.products,
            products.indices.contains(item)
        else { return nil }
        return body(products[item])
    }

    /// The reply with a given assistant message ID.
    func reply(assistantMessageId: String) -> (turn: Int, reply: ReplyMessage)? {
        guard let turn = turnByAssistantMessageId[assistantMessageId], let reply = turns[turn].reply else {
            return nil
        }
        return (turn, reply)
    }

    /// The suggests after the last reply (C7).
    var replySuggests: [String] { lastReplyTurn.flatMap { turns[$0].reply?.suggests } ?? [] }

    // MARK: - Screen order

    /// Puts turn `turn`'s reply right after its message. At the end of the chat (the usual
    /// case) that is an append; a retried older message's reply is inserted, which moves the
    /// later lines, so a presenter is told to take every message as new.
    private mutating func placeReply(of turn: Int) {
        let position = userPosition[turn] + 1
        if position == items.count {
            changes.changed(position)
            items.append(.reply(turn: turn))
            return
        }
        items.insert(.reply(turn: turn), at: position)
        for later in (turn + 1)..<userPosition.count { userPosition[later] += 1 }
        changes.all = true
    }

    private mutating func touch(userOf turn: Int) {
        revision += 1
        changes.changed(userPosition[turn])
    }

    private mutating func touch(replyOf turn: Int) {
        revision += 1
        changes.changed(userPosition[turn] + 1)
    }
}
