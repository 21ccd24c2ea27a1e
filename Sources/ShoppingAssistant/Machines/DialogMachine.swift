import Foundation

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

/// Why a send or a retry was refused. The text is never lost: the caller still has it.
public enum AssistantSendRefusal: Error, Sendable, Hashable {
    /// A message is already in flight in this dialog (D2).
    case busy
    /// No ready preparation to start a dialog from (P5, D14).
    case notReady
    /// The text is empty or only whitespace.
    case emptyText
    /// No failed message with that ID can be retried.
    case notRetryable
    /// The canonical uid is not known, so there is no `resourceId` (S3).
    case noIdentity
    /// There is no suggest with that number on screen.
    case noSuchSuggest
}

/// What a dialog is bound to for its whole life (D14, S2, S3).
struct DialogContext: Sendable, Hashable {
    let threadId: String
    let prepared: PreparedAssistant
    let uid: String
    let tenant: String
    let identityEpoch: UInt64
    /// The dialog's page exactly as it was sent to Gravity (SDK attributes, upper-case type).
    let page: PageContext

    var runtimeContext: ShoppingRuntimeContext {
        ShoppingRuntimeContext(
            tenantId: tenant, uid: uid, selector: prepared.selector, campaignId: prepared.campaignId, page: page)
    }
}

/// What a new dialog is bound to when its first message is sent (D14, S2, S3).
struct DialogStart: Sendable, Hashable {
    let prepared: PreparedAssistant
    let uid: String
    let tenant: String
    let identityEpoch: UInt64
    /// `prepared.pageContext` as sent to Gravity.
    let page: PageContext
}

/// The dialog rules (D1–D17) as a value type. The engine executes its actions.
struct DialogMachine: Sendable {
    struct UserEntry: Sendable, Hashable {
        enum Status: Sendable, Hashable {
            case sending
            case sent
            case failed(AssistantError, retryable: Bool)
        }

        let messageId: String
        let text: String
        /// The request exactly as first sent; a retry sends these bytes again (D6).
        let body: Data
        var status: Status
        var attempts: Int
    }

    struct ReplyEntry: Sendable, Hashable {
        /// Names the reply for as long as the dialog lives, whatever is inserted before it:
        /// product refs carry it, so a ref never turns stale or moves to another product (PR8).
        let key: UInt64
        let content: ReplyContent
        var rating: AssistantRating?
        /// Reply-level impressions are requested when the reply is first shown (AN7).
        var shown = false
    }

    enum Entry: Sendable, Hashable {
        case user(UserEntry)
        case reply(ReplyEntry)
    }

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

    enum Action: Sendable, Hashable {
        case sendMessage(DialogTag, body: Data)
        case startReplyTimeout(DialogTag, Duration)
        case stopReplyTimeout(DialogTag)
        /// Stop waiting for the transport (the request may still complete on the server).
        case abandonRequest(DialogTag)
        /// Stop waiting for the history check.
        case abandonHistory(DialogTag)
        case fetchHistory(DialogTag, threadId: String, resourceId: String, tenant: String)
        case sendFeedback(dialog: UInt64, ShoppingFeedbackRequest)
        case track(Lifecycle)
        /// The chat model changed: publish a new snapshot.
        case publish
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
    private(set) var entries: [Entry] = []
    /// A fresh number for every change of an entry, parallel to `entries`: lets the engine
    /// reuse what it derived from an entry until that entry changes.
    private(set) var revisions: [UInt64] = []
    private var lastRevision: UInt64 = 0
    private var lastReplyKey: UInt64 = 0

    private mutating func stamp() -> UInt64 {
        lastRevision += 1
        return lastRevision
    }

    var publicState: AssistantDialogState {
        switch state {
        case .empty: return .empty
        case .active: return .active
        case .sending: return .sending
        }
    }

    // MARK: - Sending

    /// Sends a new message. `start` is what a new dialog would be bound to (the latest ready
    /// preparation and the canonical uid); it is ignored when a dialog is already active (D14).
    mutating func send(
        text: String, messageId: String, newThreadId: String,
        start: DialogStart?
    ) -> Result<[Action], AssistantSendRefusal> {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return .failure(.emptyText) }
        if case .sending = state { return .failure(.busy) }  // D2
        if context == nil {
            guard let start else { return .failure(.notReady) }
            context = DialogContext(
                threadId: newThreadId, prepared: start.prepared, uid: start.uid, tenant: start.tenant,
                identityEpoch: start.identityEpoch, page: start.page)
        }
        guard let context else { return .failure(.notReady) }
        let body = ShoppingClient.messageBody(
            ShoppingMessageRequest(
                threadId: context.threadId, messageId: messageId, resourceId: context.uid, text: text,
                runtimeContext: context.runtimeContext))
        entries.append(.user(UserEntry(messageId: messageId, text: text, body: body, status: .sending, attempts: 0)))
        revisions.append(stamp())
        return .success(dispatch(messageId: messageId))
    }

    /// Sends a failed message again: same ID, same bytes (D6).
    mutating func retry(messageId: String) -> Result<[Action], AssistantSendRefusal> {
        if case .sending = state { return .failure(.busy) }
        guard let index = userIndex(messageId), case .user(let entry) = entries[index],
            case .failed(_, retryable: true) = entry.status
        else { return .failure(.notRetryable) }
        return .success(dispatch(messageId: messageId))
    }

    private mutating func dispatch(messageId: String) -> [Action] {
        guard let context, let index = userIndex(messageId), case .user(var entry) = entries[index] else { return [] }
        entry.attempts += 1
        entry.status = .sending
        entries[index] = .user(entry)
        revisions[index] = stamp()
        let tag = DialogTag(dialog: epoch, messageId: messageId, attempt: entry.attempts)
        state = .sending(tag, reconciling: nil)
        return [
            .sendMessage(tag, body: entry.body), .startReplyTimeout(tag, Self.replyTimeout),
            .track(.messageSend(threadId: context.threadId, messageId: messageId, attempt: entry.attempts)), .publish,
        ]
    }

    // MARK: - Outcomes

    mutating func replyReceived(_ tag: DialogTag, _ result: Result<ReplyContent, WireFailure>) -> [Action] {
        guard case .sending(let current, let reconciling) = state, current == tag, reconciling == nil else { return [] }
        switch result {
        case .success(let reply):
            return [.stopReplyTimeout(tag)] + adopt(reply, for: tag)
        case .failure(.cancelled):
            return []  // only the engine cancels; it decided what follows
        case .failure(.failed(let error, let uncertain)):
            if uncertain { return [.stopReplyTimeout(tag)] + reconcile(tag, after: error) }  // D5
            return [.stopReplyTimeout(tag)] + fail(tag, error, retryable: error.code != .messageConflict)  // D4, D8
        }
    }

    /// The 120 s reply deadline passed (D3): the request may have reached the server (D5).
    mutating func replyTimedOut(_ tag: DialogTag) -> [Action] {
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
        guard let context else { return [] }
        state = .sending(tag, reconciling: error)
        return [
            .fetchHistory(tag, threadId: context.threadId, resourceId: context.uid, tenant: context.tenant),
            .startReplyTimeout(tag, Self.historyTimeout),
        ]
    }

    /// History read after an uncertain outcome (D5, D9, D10).
    mutating func historyReceived(_ tag: DialogTag, _ result: Result<[HistoryMessage], WireFailure>) -> [Action] {
        guard case .sending(let current, let reconciling?) = state, current == tag else { return [] }
        return [.stopReplyTimeout(tag)] + reconciled(tag, reconciling, result)
    }

    private mutating func reconciled(
        _ tag: DialogTag, _ reconciling: AssistantError, _ result: Result<[HistoryMessage], WireFailure>
    ) -> [Action] {
        switch result {
        case .success(let messages):
            if let found = messages.first(where: { $0.role == "assistant" && $0.replyTo == tag.messageId }),
                let reply = found.reply
            {
                return adopt(reply, for: tag)
            }
            return fail(tag, reconciling, retryable: true)
        case .failure(.cancelled):
            return fail(tag, reconciling, retryable: true)
        case .failure(.failed(let historyError, _)):
            // D9, D10: keep every local message; the send's own error is what the user sees.
            var error = reconciling
            error.message += "; history could not be read: \(historyError.code.rawValue)"
            return fail(tag, error, retryable: true)
        }
    }

    private mutating func adopt(_ reply: ReplyContent, for tag: DialogTag) -> [Action] {
        guard let context, let index = userIndex(tag.messageId), case .user(var entry) = entries[index] else {
            return []
        }
        entry.status = .sent
        entries[index] = .user(entry)
        revisions[index] = stamp()
        lastReplyKey += 1
        entries.insert(.reply(ReplyEntry(key: lastReplyKey, content: reply)), at: index + 1)
        revisions.insert(stamp(), at: index + 1)
        state = .active
        var actions: [Action] = [
            .track(
                .messageReply(
                    threadId: context.threadId, messageId: tag.messageId, assistantMessageId: reply.assistantMessageId,
                    products: reply.products?.count ?? 0)),
            .publish,
        ]
        if !reply.diagnostics.isEmpty { actions.append(.diagnostics(reply.diagnostics)) }
        return actions
    }

    private mutating func fail(_ tag: DialogTag, _ error: AssistantError, retryable: Bool) -> [Action] {
        guard let context, let index = userIndex(tag.messageId), case .user(var entry) = entries[index] else {
            return []
        }
        entry.status = .failed(error, retryable: retryable)
        entries[index] = .user(entry)
        revisions[index] = stamp()
        state = .active
        return [
            .track(.messageError(threadId: context.threadId, messageId: tag.messageId, code: error.code)), .publish,
            .diagnostics(["message \(tag.messageId) not delivered: \(error)"]),
        ]
    }

    // MARK: - Dialog lifetime

    /// New chat, identity change or assistant change (D13, D16, D17): a fresh, empty dialog.
    /// A request in flight is not cancelled on the server; its late result is dropped by tag.
    mutating func end(_ reason: DialogEndReason) -> [Action] {
        var actions: [Action] = []
        if case .sending(let tag, _) = state { actions.append(.stopReplyTimeout(tag)) }
        if let context { actions.append(.track(.dialogEnd(threadId: context.threadId, reason: reason))) }
        epoch += 1
        context = nil
        entries = []
        revisions = []
        state = .empty
        return actions + [.publish]
    }

    // MARK: - Ratings

    /// Rates a reply by its assistant message ID (D11): once, and only with an ID.
    mutating func rate(assistantMessageId: String, _ rating: AssistantRating) -> [Action]? {
        guard let context,
            let index = entries.firstIndex(where: {
                if case .reply(let reply) = $0 { return reply.content.assistantMessageId == assistantMessageId }
                return false
            }), case .reply(var reply) = entries[index], reply.rating == nil
        else { return nil }
        reply.rating = rating
        entries[index] = .reply(reply)
        revisions[index] = stamp()
        let request = ShoppingFeedbackRequest(
            threadId: context.threadId, messageId: assistantMessageId, resourceId: context.uid, rating: rating.rawValue,
            runtimeContext: context.runtimeContext)
        return [
            .sendFeedback(dialog: epoch, request),
            .track(.feedback(threadId: context.threadId, assistantMessageId: assistantMessageId, rating: rating)),
            .publish,
        ]
    }

    /// A rating could not be delivered: offer it again.
    mutating func feedbackFailed(dialog: UInt64, assistantMessageId: String) -> [Action] {
        guard dialog == epoch,
            let index = entries.firstIndex(where: {
                if case .reply(let reply) = $0 { return reply.content.assistantMessageId == assistantMessageId }
                return false
            }), case .reply(var reply) = entries[index]
        else { return [] }
        reply.rating = nil
        entries[index] = .reply(reply)
        revisions[index] = stamp()
        return [.publish]
    }

    // MARK: - Presentation support

    /// Marks every reply as shown and returns their impression URLs, once per reply (AN7).
    mutating func markRepliesShown() -> [String] {
        var urls: [String] = []
        for index in entries.indices {
            guard case .reply(var reply) = entries[index], !reply.shown else { continue }
            reply.shown = true
            urls += reply.content.impressionURLs
            entries[index] = .reply(reply)
        }
        return urls
    }

    /// The product a ref names in this dialog: item `item` of the reply with key `reply`.
    func product(reply: UInt64, item: Int) -> ReplyProduct? {
        for case .reply(let entry) in entries where entry.key == reply {
            guard let products = entry.content.products, products.indices.contains(item) else { return nil }
            return products[item]
        }
        return nil
    }

    /// The reply with a given assistant message ID.
    func reply(assistantMessageId: String) -> ReplyContent? {
        for case .reply(let entry) in entries where entry.content.assistantMessageId == assistantMessageId {
            return entry.content
        }
        return nil
    }

    private func userIndex(_ messageId: String) -> Int? {
        entries.firstIndex {
            if case .user(let entry) = $0 { return entry.messageId == messageId }
            return false
        }
    }
}
