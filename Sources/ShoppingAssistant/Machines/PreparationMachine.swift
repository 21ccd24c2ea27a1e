/// Identifies one `prepareAssistant` call; every async result carries it (P2).
struct PreparationID: Hashable, Sendable, Comparable, CustomStringConvertible {
    let value: UInt64
    static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
    var description: String { "prep#\(value)" }
}

/// A confirmed start screen: what `.ready` promised (P5, O9, D14, D16).
struct PreparedAssistant: Sendable, Hashable {
    let id: PreparationID
    let selector: String
    let pageContext: PageContext
    let configuration: AssistantConfiguration
    let campaignId: String?
}

/// The preparation rules (G1, C2–C8, P1–P4, S4) as a value type. It decides; the engine
/// executes its actions and feeds results back tagged with the preparation they belong to,
/// so a stale result is dropped here and nowhere else (P2).
struct PreparationMachine: Sendable {
    struct Attempt: Sendable, Hashable {
        let id: PreparationID
        let selector: String
        let pageContext: PageContext
        /// Set once the configuration is read and only the canonical uid is missing (S4).
        var awaitingIdentity: PreparedAssistant?
    }

    enum State: Sendable, Hashable {
        case idle
        case preparing(Attempt)
        case ready(PreparedAssistant)
        case unavailable(AssistantUnavailableReason)
        case failed(AssistantError)
    }

    /// What the engine must do next.
    enum Action: Sendable, Hashable {
        /// Request `/choose` for this preparation.
        case fetchConfiguration(PreparationID, selector: String, pageContext: PageContext)
        /// Start the preparation's overall deadline (P3).
        case startTimeout(PreparationID, Duration)
        /// Stop the deadline and any request still running for this preparation.
        case stopWork(PreparationID)
        /// Return `result` to the caller of this preparation.
        case finish(PreparationID, AssistantPrepareResult)
        /// Request these content load tracking URLs of the configuration's answer (B7).
        case trackContentLoad([String])
    }

    private(set) var state: State = .idle
    /// The start screen of the latest preparation that ended ready. It outlives a newer call
    /// that fails or is unavailable (P6): new dialogs and "new chat" start from it (D14, D16).
    /// Only an identity change forgets it. Opening, though, needs the latest call itself to be
    /// ready (O2): that is `ready`.
    private(set) var lastReady: PreparedAssistant?

    /// The latest call's start screen, if that call ended ready (O2).
    var ready: PreparedAssistant? {
        if case .ready(let prepared) = state { return prepared }
        return nil
    }

    var publicState: AssistantPreparationState {
        switch state {
        case .idle: return .idle
        case .preparing: return .preparing
        case .ready: return .ready
        case .unavailable: return .unavailable
        case .failed: return .failed
        }
    }

    /// A new call. It supersedes the one in flight and invalidates the start screen at once (P2).
    mutating func prepareCalled(
        _ id: PreparationID, selector: String, pageContext: PageContext, timeout: Duration, hostRegistered: Bool
    ) -> [Action] {
        var actions: [Action] = []
        if case .preparing(let previous) = state {
            actions += [.stopWork(previous.id), .finish(previous.id, .superseded)]  // P2
        }
        guard hostRegistered else {
            // G1: no request without a builder and a handler.
            let error = AssistantError(
                code: .invalidConfiguration,
                message: "register a product block builder and an action handler before prepareAssistant")
            state = .failed(error)
            return actions + [.finish(id, .failure(error))]
        }
        guard !selector.isEmpty else {
            let error = AssistantError(code: .invalidConfiguration, message: "empty assistant selector")  // C5
            state = .failed(error)
            return actions + [.finish(id, .failure(error))]
        }
        state = .preparing(Attempt(id: id, selector: selector, pageContext: pageContext))
        return actions + [
            .startTimeout(id, timeout), .fetchConfiguration(id, selector: selector, pageContext: pageContext),
        ]
    }

    /// The `/choose` answer for preparation `id`. `uidKnown` says whether the canonical uid
    /// is known now (S4), after the engine absorbed this response's `user`.
    mutating func configurationAnswered(
        _ id: PreparationID, _ result: Result<ContentResponse, WireFailure>, uidKnown: Bool
    ) -> [Action] {
        // P2: an older call's late answer is dropped (the caller logs it).
        guard case .preparing(var attempt) = state, attempt.id == id, attempt.awaitingIdentity == nil else { return [] }
        switch result {
        case .failure(.cancelled):
            return callerCancelled(id)  // P4: never a network error
        case .failure(.failed(let error, _)):
            state = .failed(error)
            return [.stopWork(id), .finish(id, .failure(error))]
        case .success(let response):
            // The answer is this preparation's: its contents were loaded, whatever they say (B7).
            let urls = response.loadTrackingURLs
            let load: [Action] = urls.isEmpty ? [] : [.trackContentLoad(urls)]
            switch ConfigurationOutcome(response) {
            case .invalid(let reason):
                let error = AssistantError(code: .invalidConfiguration, message: reason)
                state = .failed(error)
                return load + [.stopWork(id), .finish(id, .failure(error))]
            case .unavailable(let reason):
                state = .unavailable(reason)  // C2, C5
                return load + [.stopWork(id), .finish(id, .unavailable(reason))]
            case .ready(let configuration, let campaignId):
                let prepared = PreparedAssistant(
                    id: id, selector: attempt.selector, pageContext: attempt.pageContext,
                    configuration: configuration, campaignId: campaignId)
                if uidKnown {  // S4: no `.ready` before the canonical uid is known
                    state = .ready(prepared)
                    lastReady = prepared
                    return load + [.stopWork(id), .finish(id, .ready)]
                }
                attempt.awaitingIdentity = prepared
                state = .preparing(attempt)
                return load
            }
        }
    }

    /// The canonical uid became known (S4).
    mutating func identityResolved() -> [Action] {
        guard case .preparing(let attempt) = state, let prepared = attempt.awaitingIdentity else { return [] }
        state = .ready(prepared)
        lastReady = prepared
        return [.stopWork(attempt.id), .finish(attempt.id, .ready)]
    }

    /// The deadline of preparation `id` passed (P3).
    mutating func deadlinePassed(_ id: PreparationID) -> [Action] {
        guard case .preparing(let attempt) = state, attempt.id == id else { return [] }
        let waiting = attempt.awaitingIdentity != nil ? "waiting for the canonical user.uid" : "waiting for /choose"
        let error = AssistantError(code: .timeout, message: "preparation timed out \(waiting)")  // P3
        state = .failed(error)
        return [.stopWork(id), .finish(id, .failure(error))]
    }

    /// The caller of preparation `id` was cancelled (P4). An older call's cancellation is
    /// ignored: it already returned `.superseded`.
    mutating func callerCancelled(_ id: PreparationID) -> [Action] {
        guard case .preparing(let attempt) = state, attempt.id == id else { return [] }
        state = .idle
        return [.stopWork(id), .finish(id, .cancelled)]  // P4
    }

    /// Identity changed (B3): a start screen confirmed for the old user is not one for the new
    /// user, and a preparation in flight was made for the old user. The host prepares again.
    mutating func identityChanged() -> [Action] {
        defer {
            state = .idle
            lastReady = nil
        }
        if case .preparing(let attempt) = state {
            return [.stopWork(attempt.id), .finish(attempt.id, .superseded)]
        }
        return []
    }
}
