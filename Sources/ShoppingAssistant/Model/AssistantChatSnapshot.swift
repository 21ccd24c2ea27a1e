/// A rating of an assistant reply (D11).
public enum AssistantRating: String, Sendable, Hashable, CaseIterable {
    case like, dislike
}

/// A reply button, already routed to the action it will perform (AC3, AC4).
public struct AssistantReplyButton: Sendable, Hashable {
    /// The button's label (`value` on the wire).
    public let title: String
    public let action: AssistantAction
    /// False when the handler said it cannot handle the action; shown disabled (AC4).
    public let isEnabled: Bool

    public init(title: String, action: AssistantAction, isEnabled: Bool) {
        self.title = title
        self.action = action
        self.isEnabled = isEnabled
    }
}

/// One message of the chat as a presenter renders it.
public struct AssistantChatMessage: Sendable, Hashable, Identifiable {
    public enum Role: String, Sendable, Hashable {
        case user, assistant
    }

    /// Where a user message stands (D2, D4, D5).
    public enum Status: Sendable, Hashable {
        case sending
        case sent
        /// The send failed; the text is kept and `canRetry` says whether retry is offered.
        case failed(AssistantError)
    }

    /// The message ID for user messages; the assistant message ID for replies.
    public let id: String
    public let role: Role
    public let text: String
    public let status: Status
    /// True for a failed user message that can be sent again with the same ID (D6).
    public let canRetry: Bool
    /// Products of a reply, with refs of the current opening (PR2, PR6).
    public let productBlock: AssistantProductBlock?
    public let buttons: [AssistantReplyButton]
    /// True when the reply has an ID to rate and has not been rated yet (D11).
    public let canRate: Bool
    public let rating: AssistantRating?

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

/// Everything a presenter needs to draw the chat screen (§ 0: the engine owns the model).
public struct AssistantChatSnapshot: Sendable, Hashable {
    /// Title and subtitle of the start screen of the latest ready preparation (O9, D16).
    public let title: String
    public let subtitle: String?
    public let messages: [AssistantChatMessage]
    /// Start-screen suggests before the first message, the last reply's suggests after (C7).
    public let suggests: [String]
    /// A message is in flight: show an indicator and disable sending (D2).
    public let isSending: Bool
    /// Whether a new message may be sent now.
    public let canSend: Bool

    public init(
        title: String, subtitle: String?, messages: [AssistantChatMessage], suggests: [String], isSending: Bool,
        canSend: Bool
    ) {
        self.title = title
        self.subtitle = subtitle
        self.messages = messages
        self.suggests = suggests
        self.isSending = isSending
        self.canSend = canSend
    }
}
