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

/// A reply as the dialog keeps it.
struct ReplyMessage: Sendable, Hashable {
    let content: ReplyContent
    var rating: AssistantRating?
    /// Whether each of `content.buttons` is offered: routed (AC3) and one the handler can
    /// handle (AC4). Asked of the handler when the reply lands and when the handler changes.
    var buttonsEnabled: [Bool]
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

    /// The reply as a presenter sees it, its products under refs of `scope` and `turn` (PR6).
    func replyMessage(turn: Int, scope: ChatScope) -> AssistantChatMessage? {
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
            let enabled = reply.buttonsEnabled.indices.contains(index) && reply.buttonsEnabled[index]
            buttons.append(AssistantReplyButton(title: button.title, action: action, isEnabled: enabled))  // AC4
        }
        return AssistantChatMessage(
            id: content.assistantMessageId ?? "reply-\(turn)", role: .assistant, text: content.text,
            productBlock: block, buttons: buttons,
            canRate: content.assistantMessageId != nil && reply.rating == nil, rating: reply.rating)
    }
}
