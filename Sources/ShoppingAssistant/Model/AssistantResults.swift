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
