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
    /// The campaign turned the assistant off or does not exist (C2, C5): hide the entry, no error
    /// to show.
    case unavailable(AssistantUnavailableReason)
    /// Preparation failed (G1, C4–C6, P3, network); an open dialog stays as it was (P6).
    case failure(AssistantError)
    /// The calling task was cancelled; never reported as a network error (P4).
    case cancelled
    /// A later `prepareAssistant` call replaced this one (P2).
    case superseded
}

/// The outcome of `openAssistant` (O1).
public enum AssistantOpenResult: Sendable, Hashable {
    /// The chat is on screen; the engine now holds its presentation lock (O5).
    case opened
    /// The chat is already shown; the caller keeps its presenter and nothing new appears (O4).
    case alreadyOpen
    /// The latest preparation is not `.ready`; prepare first (O2).
    case notReady
    /// The presenter is closed, not visible or busy (O3); no lock was taken, the app's stays (O6).
    case invalidPresenter
}

/// What the presenter saw happen to a product card (PR4).
public enum AssistantProductAction: String, Sendable, Hashable {
    /// At least half the card was visible for a second without a break (PR5); once per appearance
    /// per opening counts (PR6).
    case visibleImpression
    /// One physical press or accessibility action on a card that can open (PR7).
    case tap
}

/// The engine's answer to a product action (PR4).
public enum AssistantInteractionResult: String, Sendable, Hashable {
    /// The action counts: its tracking is queued, and a tap closes the chat and then hands
    /// `.openProduct` to the handler (PR10, AN5).
    case accepted
    /// Already counted: a redraw's second impression (PR6) or a tap while a transition runs (PR9).
    case duplicate
    /// The ref is from before a close, a new chat or an identity change: no tracking, no
    /// navigation (PR8).
    case staleReference
    /// A tap on a product that cannot open, or while interaction is disabled (PR7).
    case notActionable
}

/// The preparation state of P1, exposed for inspection.
public enum AssistantPreparationState: String, Sendable, Hashable {
    /// `idle` before the first `prepareAssistant`, `preparing` while one runs, then the state of
    /// the latest one's result (P1, P2).
    case idle, preparing, ready, unavailable, failed
}

/// The dialog state of D1, exposed for inspection.
public enum AssistantDialogState: String, Sendable, Hashable {
    /// `empty` before a dialog's first message (and after a new chat), `sending` while one is in
    /// flight (no second send, D2), else `active` (D1).
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
