// MARK: - Base SDK subset (B3–B7, O7)

extension EngineMachine {
    /// `trackView`: `POST /visit` (B5). The assistant never calls it itself (E4).
    mutating func trackViewCalled(_ call: CallID, page: PageContext) -> [EngineAction] {
        hostRequests[call] = (.trackView, abandoned: false)
        return sendGravity(.host(call), .visit(envelope(page)))
    }

    /// `triggerEvent`: `POST /event` (B5).
    mutating func triggerEventCalled(_ call: CallID, events: [CustomEvent], page: PageContext) -> [EngineAction] {
        hostRequests[call] = (.triggerEvent, abandoned: false)
        let wire = events.map { GravityCustomEvent(type: $0.type, name: $0.name, customProps: $0.customProps) }
        return sendGravity(.host(call), .event(wire, envelope(page)))
    }

    /// `getContentBySelector`: `POST /choose` (B5). Never blocked by a presentation lock (B6).
    mutating func contentCalled(_ call: CallID, selector: String, page: PageContext) -> [EngineAction] {
        hostRequests[call] = (.content(selector: selector), abandoned: false)
        return sendGravity(
            .host(call), .choose(selector: selector, settings: settings.contentSettings, envelope: envelope(page)))
    }

    /// `setOptions`: the `options` (and `data[].options`) of the following requests.
    mutating func optionsSet(_ options: GravityOptions, contentSettings: GravityContentSettings?) -> [EngineAction] {
        settings.options = options
        if let contentSettings { settings.contentSettings = contentSettings }
        return []
    }

    /// A host call's `/visit` or `/event` answered: keep the `user` (B3, B9), show the in-app
    /// campaigns unless a presentation lock is held, when they are dropped, not queued (B6, O7).
    /// The call returns once its campaigns are shown (or at once, from inside a host callback,
    /// H1, or after its caller was cancelled).
    mutating func campaignsAnswered(
        _ call: CallID, _ result: Result<GravityClient.Answer<[InAppCampaign]>, WireFailure>, identityEpoch: UInt64
    ) -> [EngineAction] {
        guard let (request, abandoned) = hostRequests.removeValue(forKey: call) else {
            preconditionFailure("an answer for \(call), which sent no Gravity request")
        }
        let endpoint = request == .trackView ? "POST /visit (trackView)" : "POST /event (triggerEvent)"
        let completion: [EngineAction] = abandoned ? [] : [.complete(call, .done)]
        switch result {
        case .failure(.cancelled):
            return completion
        case .failure(.failed(let error, _)):
            // B5: only the log says so.
            return [.log(.error, "gravity \(endpoint) failed: \(error)")] + completion
        case .success(let answer):
            var actions = identityAnswered(answer.user, epoch: identityEpoch)
            var shown: [InAppCampaign] = []
            for campaign in answer.value {
                if presentation.locks.isLocked {  // B6, O7: dropped, not queued
                    actions.append(
                        .log(
                            .info,
                            "in-app campaign \(campaign.campaignId) suppressed: presentation locked by \(presentation.locks)"
                        ))
                } else {
                    shown.append(campaign)
                }
            }
            campaigns.arrived(shown, for: call)
            return actions + hold(completion, until: .campaignsShown(call)) + showNextCampaign()
        }
    }

    /// A host call's `/choose` answered: only the selector's entries (B5); content load
    /// tracking for its contents (B7); `nil` and a logged error on failure. An answer whose
    /// caller was cancelled only brings its `user` (B9).
    mutating func contentAnswered(
        _ call: CallID, _ result: Result<GravityClient.Answer<ContentResponse>, WireFailure>, identityEpoch: UInt64
    ) -> [EngineAction] {
        guard let (request, abandoned) = hostRequests.removeValue(forKey: call),
            case .content(let selector) = request
        else {
            preconditionFailure("a /choose answer for \(call), which asked for no content")
        }
        switch result {
        case .failure(.cancelled):
            return abandoned ? [] : [.complete(call, .content(nil))]
        case .failure(.failed(let error, _)):
            let note = EngineAction.log(
                .error, "gravity POST /choose (getContentBySelector \(selector)) failed: \(error)")
            return abandoned ? [note] : [note, .complete(call, .content(nil))]
        case .success(let answer):
            var actions = identityAnswered(answer.user, epoch: identityEpoch)
            guard !abandoned else { return actions }
            if identityEpoch == identity.epoch { actions += trackURLs(answer.value.loadTrackingURLs) }  // B7
            return actions + [.complete(call, .content(answer.value))]
        }
    }

    // MARK: - The session gate (B8)

    /// Sends a Gravity request now, or holds it at the session gate until the first answer of
    /// the session (B8).
    mutating func sendGravity(_ id: RequestID, _ call: GravityCall) -> [EngineAction] {
        let request = SessionGate.Waiting(id: id, call: call, identityEpoch: identity.epoch)
        guard sessionGate.requested(request, needsSession: identity.needsSession) else {
            return [.log(.debug, "\(id) waits for the session's first Gravity answer")]  // B8
        }
        return send(request)
    }

    /// The request goes now, with its own deadline (B13).
    private mutating func send(_ request: SessionGate.Waiting) -> [EngineAction] {
        gravityInFlight.insert(request.id)
        return [
            .sendGravity(request.id, request.call, identityEpoch: request.identityEpoch),
            .startTimer(.gravity(request.id), after: settings.gravityTimeout),  // B13
        ]
    }

    /// Stops waiting for a Gravity request: one still at the gate is never sent; the first
    /// request of a session, let go, releases the gate as a failed one does (B8).
    mutating func cancelGravity(_ id: RequestID) -> [EngineAction] {
        if sessionGate.withdrawn(id) { return [] }
        return [.cancelRequest(id), .cancelTimer(.gravity(id))] + sessionGateAnswered(id)
    }

    /// A Gravity request answered (its `user` already adopted): what waited at the gate goes,
    /// carrying the session it brought (B8).
    mutating func sessionGateAnswered(_ id: RequestID) -> [EngineAction] {
        sessionGate.answered(id, needsSession: identity.needsSession).flatMap { request in
            // A request decided for an older identity keeps the user it was decided for (AN3).
            let call = request.identityEpoch == identity.epoch ? request.call.sent(as: identity.wire) : request.call
            return send(SessionGate.Waiting(id: request.id, call: call, identityEpoch: request.identityEpoch))
        }
    }

    /// A Gravity call's deadline passed (B13): it ends as a timeout — an uncertain outcome,
    /// the server may have had it — and the transport stops waiting. The first request of a
    /// session releases the gate, as a failed one does (B8).
    mutating func gravityDeadlinePassed(_ id: RequestID) -> [EngineAction] {
        guard gravityInFlight.remove(id) != nil else { return [] }
        let error = AssistantError(code: .timeout, message: "no answer within \(settings.gravityTimeout)")
        let failure = WireFailure.failed(error, uncertain: true)
        let result: GravityResult
        switch id {
        case .host(let call)
        where hostRequests[call].map({ $0.request != .trackView && $0.request != .triggerEvent }) ?? false:
            result = .content(.failure(failure))
        case .host:
            result = .campaigns(.failure(failure))
        default:
            result = .content(.failure(failure))
        }
        return [.cancelRequest(id)] + dispatchGravityAnswer(id, result, identityEpoch: identity.epoch)
    }

    // MARK: - Identity (B3, D13, D17, AN3)

    /// `setUser`: manual mode (B3). Another id is an identity change; the chat closes first,
    /// while the old user is still current, so its close is theirs (AN3).
    mutating func setUserCalled(_ call: CallID, userId: String, sessionId: String?) -> [EngineAction] {
        guard identity.isChange(toUser: userId) else {  // B3
            _ = identity.userSet(userId: userId, sessionId: sessionId)  // the same user, another session
            return [.complete(call, .done)]
        }
        return changeIdentity(.setUser(userId: userId, sessionId: sessionId), call: call)
    }

    /// `resetIdentity`: a new anonymous, SDK-managed visitor: an identity change.
    mutating func resetIdentityCalled(_ call: CallID) -> [EngineAction] {
        changeIdentity(.reset, call: call)
    }

    private mutating func changeIdentity(_ change: IdentityChange, call: CallID) -> [EngineAction] {
        guard presentation.isClosed else {  // AN3: the chat closes as the old user first
            pendingIdentityChanges.append(change)
            return [.log(.info, "closing the chat: identity change")] + close(nil, .done)
                + hold([.complete(call, .done)], until: .closed)
        }
        return applyIdentityChange(change) + [.complete(call, .done)]
    }

    /// Identity changes that waited for the chat to close, now that it has; their callers return.
    mutating func applyIdentityChangesWaitingForTheClose() -> [EngineAction] {
        let waiting = pendingIdentityChanges
        pendingIdentityChanges = []
        return waiting.flatMap { applyIdentityChange($0) }
    }

    /// The identity switches; the old dialog ends as the old user (AN3, D13, D17); a start
    /// screen prepared for the old user is not one for the new user (the host prepares again).
    private mutating func applyIdentityChange(_ change: IdentityChange) -> [EngineAction] {
        let previous = identity.wire
        var actions: [EngineAction] = []
        switch change {
        case .setUser(let userId, let sessionId):
            guard identity.userSet(userId: userId, sessionId: sessionId) else { return [] }
        case .reset:
            identity.resetRequested()
            actions.append(.persistUID(nil))
        }
        actions.append(.log(.info, "identity changed"))
        actions += endDialog(.identityChange, user: previous)  // D13, D17, AN3
        actions += run(preparation.identityChanged())  // B3: the old user's start screen is not the new one's
        for request in sessionGate.identityChanged() {  // B8: the gate starts again for the new identity
            actions += sendGravity(request.id, request.call.sent(as: identity.wire))
        }
        return actions
    }
}
