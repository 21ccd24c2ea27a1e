/// Why an assistant is not offered although nothing failed (C2, C5).
public enum AssistantUnavailableReason: String, Sendable, Hashable {
    /// The configuration says `enabled: false`.
    case disabled
    /// The selector matched no campaign (a typo or an inactive campaign).
    case notFound
}

/// The outcome of `prepareAssistant` (P1).
public enum AssistantPrepareResult: Sendable, Hashable {
    /// The start screen is confirmed; the host may show its entry button (P5).
    case ready
    case unavailable(AssistantUnavailableReason)
    case failure(AssistantError)
    /// The calling task was cancelled; never reported as a network error (P4).
    case cancelled
    /// A later `prepareAssistant` call replaced this one (P2).
    case superseded
}

/// The outcome of `openAssistant` (O1).
public enum AssistantOpenResult: Sendable, Hashable {
    case opened
    case alreadyOpen
    case notReady
    case invalidPresenter
}

/// What the presenter saw happen to a product card (PR4).
public enum AssistantProductAction: String, Sendable, Hashable {
    case visibleImpression
    case tap
}

/// The engine's answer to a product action (PR4).
public enum AssistantInteractionResult: String, Sendable, Hashable {
    case accepted
    case duplicate
    case staleReference
    case notActionable
}

/// The preparation state of P1, exposed for inspection.
public enum AssistantPreparationState: String, Sendable, Hashable {
    case idle, preparing, ready, unavailable, failed
}

/// The dialog state of D1, exposed for inspection.
public enum AssistantDialogState: String, Sendable, Hashable {
    case empty, active, sending
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

/// The outcome of `rateReply` (D11): sent, or why not.
public enum AssistantRatingResult: Sendable, Hashable {
    /// The rating was recorded and is being sent.
    case sent
    /// This reply was rated already: one rating per reply.
    case alreadyRated
    /// No reply with that ID is in the current dialog, or it has no ID to rate by.
    case unknownReply
}
