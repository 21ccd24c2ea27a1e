/// A rating of an assistant reply (D11).
public enum AssistantRating: String, Sendable, Hashable, CaseIterable {
    /// The reply helped (`like` on the wire).
    case like
    /// The reply did not help (`dislike` on the wire).
    case dislike
}

/// A reply button, already routed to the action it will perform (AC3, AC4).
public struct AssistantReplyButton: Sendable, Hashable {
    /// The button's label (`value` on the wire).
    public let title: String
    /// What pressing it does, after the chat closed (AC3, AC5).
    public let action: AssistantAction
    /// False when the handler said it cannot handle the action; shown disabled (AC4).
    public let isEnabled: Bool

    /// A button as the engine routes it; hosts build these only in their own tests.
    public init(title: String, action: AssistantAction, isEnabled: Bool) {
        self.title = title
        self.action = action
        self.isEnabled = isEnabled
    }
}

/// One message of the chat as a presenter renders it.
public struct AssistantChatMessage: Sendable, Hashable, Identifiable {
    /// Who wrote the message.
    public enum Role: String, Sendable, Hashable {
        /// The shopper.
        case user
        /// The assistant's reply.
        case assistant
    }

    /// Where a user message stands (D2, D4, D5).
    public enum Status: Sendable, Hashable {
        /// On its way; the reply is awaited (D2).
        case sending
        /// Delivered (its reply landed, or it is a reply).
        case sent
        /// The send failed; the text is kept and `canRetry` says whether retry is offered.
        case failed(AssistantError)
    }

    /// The message ID for user messages; the assistant message ID for replies.
    public let id: String
    /// Who wrote it: only replies carry products, buttons and a rating.
    public let role: Role
    /// The text as typed or as the assistant wrote it; server text, so sanitise before printing.
    public let text: String
    /// Where a user message stands; replies are `.sent`.
    public let status: Status
    /// True for a failed user message that can be sent again with the same ID (D6).
    public let canRetry: Bool
    /// Products of a reply, with refs of the current opening (PR2, PR6).
    public let productBlock: AssistantProductBlock?
    /// A reply's buttons that are offered (AC3), enabled when the handler can handle them (AC4).
    public let buttons: [AssistantReplyButton]
    /// True when the reply has an ID to rate and has not been rated yet (D11).
    public let canRate: Bool
    /// The rating given to this reply, if any (D11).
    public let rating: AssistantRating?

    /// A message as the engine builds it; hosts build these only in their own tests.
    public init(
        id: String, role: Role, text: String, status: Status = .sent, canRetry: Bool = false,
        productBlock: AssistantProductBlock? = nil, buttons: [AssistantReplyButton] = [], canRate: Bool = false,
        rating: AssistantRating? = nil
    ) {
        self.id = id
        self.role = role
        self.text = text
        self.status = status
        self.canRetry = canRetry
        self.productBlock = productBlock
        self.buttons = buttons
        self.canRate = canRate
        self.rating = rating
    }
}

/// The messages of a chat snapshot, in screen order.
///
/// A collection rather than an array: a snapshot shares the dialog's storage, and a message
/// is built when it is read. Publishing a snapshot, or keeping an old one, never copies the
/// dialog, so a long dialog costs the same per message as a short one.
public struct AssistantChatMessages: RandomAccessCollection, Sendable, Hashable {
    private enum Storage: Sendable {
        case array([AssistantChatMessage])
        case dialog(
            items: ChunkedVector<ChatItem>, turns: ChunkedVector<DialogTurn>, scope: ChatScope,
            restoredOffers: RestoredOffers?)
    }

    private let storage: Storage

    /// Messages given whole, for hosts' own tests and presenters.
    public init(_ messages: [AssistantChatMessage]) { storage = .array(messages) }

    init(
        items: ChunkedVector<ChatItem>, turns: ChunkedVector<DialogTurn>, scope: ChatScope,
        restoredOffers: RestoredOffers?
    ) {
        storage = .dialog(items: items, turns: turns, scope: scope, restoredOffers: restoredOffers)
    }

    /// The first message's position, 0.
    public var startIndex: Int { 0 }

    /// One past the last message.
    public var endIndex: Int {
        switch storage {
        case .array(let messages): return messages.count
        case .dialog(let items, _, _, _): return items.count
        }
    }

    /// The message at `position`, built from the dialog when it is read.
    public subscript(position: Int) -> AssistantChatMessage {
        switch storage {
        case .array(let messages):
            return messages[position]
        case .dialog(let items, let turns, let scope, let restoredOffers):
            switch items[position] {
            case .user(let turn): return turns[turn].userMessage()
            case .reply(let turn):
                guard let message = turns[turn].replyMessage(turn: turn, scope: scope, restoredOffers: restoredOffers)
                else {
                    preconditionFailure("the chat lists a reply of turn \(turn), which has none")
                }
                return message
            }
        }
    }

    /// Message by message, however each side stores its messages.
    public static func == (lhs: AssistantChatMessages, rhs: AssistantChatMessages) -> Bool {
        lhs.elementsEqual(rhs)
    }

    /// From the messages' IDs, so hashing never builds a whole long dialog's messages.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        if let last { hasher.combine(last.id) }
    }
}

extension AssistantChatMessages: ExpressibleByArrayLiteral {
    /// Messages written out, for tests.
    public init(arrayLiteral elements: AssistantChatMessage...) { self.init(elements) }
}

/// Everything a presenter needs to draw the chat screen (§ 0: the engine owns the model).
public struct AssistantChatSnapshot: Sendable, Hashable {
    /// Title and subtitle of the start screen of the latest ready preparation (O9, D16).
    public let title: String
    /// The start screen's second line, if the configuration has one.
    public let subtitle: String?
    /// The dialog's messages, in screen order.
    public let messages: AssistantChatMessages
    /// Start-screen suggests before the first message, the last reply's suggests after (C7).
    public let suggests: [String]
    /// A message is in flight: show an indicator and disable sending (D2).
    public let isSending: Bool
    /// Whether a new message may be sent now.
    public let canSend: Bool
    /// Positions in `messages` of the messages that are new or changed since the snapshot
    /// this presenter was given before, in order; `nil` when every message must be taken as
    /// new (the first snapshot of an opening, a new dialog, messages that moved). A presenter
    /// that draws only these never walks a long dialog. Not part of equality.
    public let changedMessageIndices: [Int]?

    /// A snapshot given whole, for hosts' own tests and presenters.
    public init(
        title: String, subtitle: String?, messages: [AssistantChatMessage], suggests: [String], isSending: Bool,
        canSend: Bool
    ) {
        self.init(
            title: title, subtitle: subtitle, messages: AssistantChatMessages(messages), suggests: suggests,
            isSending: isSending, canSend: canSend, changedMessageIndices: nil)
    }

    init(
        title: String, subtitle: String?, messages: AssistantChatMessages, suggests: [String], isSending: Bool,
        canSend: Bool, changedMessageIndices: [Int]?
    ) {
        self.title = title
        self.subtitle = subtitle
        self.messages = messages
        self.suggests = suggests
        self.isSending = isSending
        self.canSend = canSend
        self.changedMessageIndices = changedMessageIndices
    }

    /// The same snapshot, telling a presenter which messages changed since its previous one.
    func telling(changed indices: [Int]?) -> AssistantChatSnapshot {
        AssistantChatSnapshot(
            title: title, subtitle: subtitle, messages: messages, suggests: suggests, isSending: isSending,
            canSend: canSend, changedMessageIndices: indices)
    }

    /// Content equality: the change list is delivery bookkeeping, not content.
    public static func == (lhs: AssistantChatSnapshot, rhs: AssistantChatSnapshot) -> Bool {
        lhs.title == rhs.title && lhs.subtitle == rhs.subtitle && lhs.suggests == rhs.suggests
            && lhs.isSending == rhs.isSending && lhs.canSend == rhs.canSend && lhs.messages == rhs.messages
    }

    /// From the content that `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(title)
        hasher.combine(subtitle)
        hasher.combine(suggests)
        hasher.combine(isSending)
        hasher.combine(canSend)
        hasher.combine(messages)
    }
}
