import Foundation

/// One user message and the reply to it, if one landed: the unit the dialog stores.
///
/// A reply belongs to its message, so a retried message's reply lands in the message's own
/// turn and no turn ever moves: a turn's index names its reply for the dialog's whole life,
/// and product refs carry it (PR8).
struct DialogTurn: Sendable, Hashable {
    var user: UserMessage
    var reply: ReplyMessage?
}

/// A message the user sent, with where it stands (D2, D4, D5, D6).
struct UserMessage: Sendable, Hashable {
    enum Status: Sendable, Hashable {
        case sending
        case sent
        case failed(AssistantError, retryable: Bool)
    }

    let messageId: String
    let text: String
    var status: Status
    var attempts: Int
    /// Out of line: held inline, the optional request would keep every turn of a long
    /// dialog as large as a request long after it was dropped.
    private var storedRequest: OutOfLine<ShoppingMessageRequest>?

    init(messageId: String, text: String, status: Status, attempts: Int, request: ShoppingMessageRequest?) {
        self.messageId = messageId
        self.text = text
        self.status = status
        self.attempts = attempts
        storedRequest = request.map(OutOfLine.init)
    }

    /// The request as first sent, kept while a retry may need it: a retry sends this same
    /// value, which encodes to the same bytes (D6). Dropped once the outcome is final.
    var request: ShoppingMessageRequest? {
        get { storedRequest?.value }
        set { storedRequest = newValue.map(OutOfLine.init) }
    }
}

/// A value kept on the heap behind one reference, for a rarely present large field.
struct OutOfLine<Value: Hashable & Sendable>: Hashable, Sendable {
    private final class Box: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private let box: Box

    init(_ value: Value) { box = Box(value) }

    var value: Value { box.value }

    static func == (lhs: OutOfLine, rhs: OutOfLine) -> Bool { lhs.box === rhs.box || lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// A reply as the dialog keeps it: decoded when it landed, or read back from the dialog store
/// and decoded when first read (D18, `RestoredReplies`).
struct ReplyMessage: Sendable, Hashable {
    enum Source: Sendable {
        case landed(ReplyContent)
        /// Reply `index` of a restored dialog's table.
        case restored(RestoredReplies, index: Int)
    }

    let source: Source
    var rating: AssistantRating?
    /// Whether each of `content.buttons` of a landed reply is offered: routed (AC3) and one the
    /// handler can handle (AC4). Asked of the handler when the reply lands and when the handler
    /// changes; a restored reply's are the dialog's `RestoredOffers`.
    var buttonsEnabled: [Bool]

    init(content: ReplyContent, rating: AssistantRating? = nil, buttonsEnabled: [Bool]) {
        source = .landed(content)
        self.rating = rating
        self.buttonsEnabled = buttonsEnabled
    }

    init(restored replies: RestoredReplies, index: Int, rating: AssistantRating?) {
        source = .restored(replies, index: index)
        self.rating = rating
        buttonsEnabled = []
    }

    var content: ReplyContent {
        switch source {
        case .landed(let content): return content
        case .restored(let replies, let index): return replies.content(index)
        }
    }

    /// Where a reply read back from the dialog store (D18) lies in its table; `nil` for a reply
    /// that landed in this run. An index alone, so that a walk over a long dialog asks it of
    /// every reply without copying one.
    var restoredIndex: Int? {
        if case .restored(_, let index) = source { return index }
        return nil
    }

    /// The table a reply read back from the dialog store (D18) is read from; `nil` for a reply
    /// that landed in this run.
    var restoredReplies: RestoredReplies? {
        if case .restored(let replies, _) = source { return replies }
        return nil
    }

    /// The reply's suggests (C7); a restored reply's are read without decoding it.
    var suggests: [String] {
        switch source {
        case .landed(let content): return content.suggests
        case .restored(let replies, let index): return replies.suggests(index)
        }
    }

    /// The reply's ID, known without decoding a restored reply.
    var assistantMessageId: String? {
        switch source {
        case .landed(let content): return content.assistantMessageId
        case .restored(let replies, let index): return replies.replies[index].assistantMessageId
        }
    }

    /// The reply's bytes as received and which member names its ID, for the dialog store (D18);
    /// `nil` in an engine without one.
    var received: (bytes: Data, idKey: ReplyDecoder.IdentifierKey)? {
        switch source {
        case .landed(let content): return content.received.map { ($0.bytes, $0.idKey) }
        case .restored(let replies, let index): return (replies.bytes(index), replies.replies[index].idKey)
        }
    }

    /// The checksum a reply read back from the dialog store was saved with, which saving it again
    /// keeps (`StoredDialogCodec`); `nil` for a reply that landed in this run.
    var storedChecksum: UInt64? {
        if case .restored(let replies, let index) = source { return replies.replies[index].checksum }
        return nil
    }

    /// Whether button `index` of the reply is offered (AC3, AC4): a landed reply says so itself
    /// (`buttonsEnabled`), a restored one's buttons are looked up in `restoredOffers`.
    func isOffered(_ index: Int, restoredOffers: RestoredOffers?) -> Bool {
        switch source {
        case .landed: return buttonsEnabled.indices.contains(index) && buttonsEnabled[index]
        case .restored(let replies, let reply):
            return restoredOffers?.isOffered(index, ofReply: reply, in: replies) ?? false
        }
    }

    /// Runs `body` over each button's object, in order; a restored reply's are read from the
    /// dialog file without decoding it.
    func forEachButtonObject(_ body: (UnsafeRawBufferPointer) -> Void) {
        switch source {
        case .landed(let content):
            for button in content.buttons { button.withObject(body) }
        case .restored(let replies, let index):
            for object in replies.buttons(index) { replies.withButtonObject(object, body) }
        }
    }

    static func == (lhs: ReplyMessage, rhs: ReplyMessage) -> Bool {
        guard lhs.rating == rhs.rating, lhs.buttonsEnabled == rhs.buttonsEnabled else { return false }
        if case .restored(let left, let leftIndex) = lhs.source, case .restored(let right, let rightIndex) = rhs.source,
            left === right, leftIndex == rightIndex
        {
            return true
        }
        return lhs.content == rhs.content
    }

    /// From what is known without decoding; equal replies have equal ratings and offers.
    func hash(into hasher: inout Hasher) {
        hasher.combine(rating)
        hasher.combine(buttonsEnabled)
    }
}

/// One line of the chat, in screen order: a turn's user message, or its reply.
enum ChatItem: Sendable, Hashable {
    case user(turn: Int)
    case reply(turn: Int)

    var turn: Int {
        switch self {
        case .user(let turn), .reply(let turn): return turn
        }
    }
}

/// What every message of a snapshot is issued under: refs carry it (PR6, PR8).
struct ChatScope: Sendable, Hashable {
    /// The opening whose refs the products carry; 0 while the chat is not open.
    let opening: UInt64
    let dialog: UInt64
    let identity: UInt64
}

extension DialogTurn {
    /// The user message as a presenter sees it.
    func userMessage() -> AssistantChatMessage {
        let status: AssistantChatMessage.Status
        var canRetry = false
        switch user.status {
        case .sending: status = .sending
        case .sent: status = .sent
        case .failed(let error, let retryable):
            status = .failed(error)
            canRetry = retryable
        }
        return AssistantChatMessage(
            id: user.messageId, role: .user, text: user.text, status: status, canRetry: canRetry)
    }

    /// The reply as a presenter sees it, its products under refs of `scope` and `turn` (PR6), a
    /// restored reply's buttons offered as `restoredOffers` says.
    func replyMessage(turn: Int, scope: ChatScope, restoredOffers: RestoredOffers?) -> AssistantChatMessage? {
        guard let reply else { return nil }
        let content = reply.content
        let block = content.products.map { products in
            AssistantProductBlock(
                title: content.productsTitle,
                products: products.enumerated().map { item, product in
                    product.product(
                        ref: AssistantProductRef(
                            opening: scope.opening, dialog: scope.dialog, identity: scope.identity,
                            reply: UInt64(turn), item: item))
                })
        }
        var buttons: [AssistantReplyButton] = []
        for (index, button) in content.buttons.enumerated() {
            guard let action = button.action else { continue }  // AC3: not offered at all
            let enabled = reply.isOffered(index, restoredOffers: restoredOffers)
            buttons.append(AssistantReplyButton(title: button.title, action: action, isEnabled: enabled))  // AC4
        }
        return AssistantChatMessage(
            id: reply.assistantMessageId ?? "reply-\(turn)", role: .assistant, text: content.text,
            productBlock: block, buttons: buttons,
            canRate: reply.assistantMessageId != nil && reply.rating == nil, rating: reply.rating)
    }
}
