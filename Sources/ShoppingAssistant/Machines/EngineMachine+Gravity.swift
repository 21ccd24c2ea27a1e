// MARK: - Base SDK subset (B3–B7, O7)

extension EngineMachine {
    /// `trackView`: `POST /visit` (B5). The assistant never calls it itself (E4).
    mutating func trackViewCalled(_ call: CallID, page: PageContext) -> [EngineAction] {
        hostRequests[call] = .trackView
        return [.sendGravity(.host(call), .visit(envelope(page)), identityEpoch: identity.epoch)]
    }

    /// `triggerEvent`: `POST /event` (B5).
    mutating func triggerEventCalled(_ call: CallID, events: [CustomEvent], page: PageContext) -> [EngineAction] {
        hostRequests[call] = .triggerEvent
        let wire = events.map { GravityCustomEvent(type: $0.type, name: $0.name, customProps: $0.customProps) }
        return [.sendGravity(.host(call), .event(wire, envelope(page)), identityEpoch: identity.epoch)]
    }

    /// `getContentBySelector`: `POST /choose` (B5). Never blocked by a presentation lock (B6).
    mutating func contentCalled(_ call: CallID, selector: String, page: PageContext) -> [EngineAction] {
        hostRequests[call] = .content(selector: selector)
        return [
            .sendGravity(
                .host(call), .choose(selector: selector, settings: settings.contentSettings, envelope: envelope(page)),
                identityEpoch: identity.epoch)
        ]
    }

    /// `setOptions`: the `options` (and `data[].options`) of the following requests.
    mutating func optionsSet(_ options: GravityOptions, contentSettings: GravityContentSettings?) -> [EngineAction] {
        settings.options = options
        if let contentSettings { settings.contentSettings = contentSettings }
        return []
    }

    /// A host call's `/visit` or `/event` answered: keep the `user` (B3), show the in-app
    /// campaigns unless a presentation lock is held, when they are dropped, not queued (B6, O7).
    mutating func campaignsAnswered(
        _ call: CallID, _ result: Result<GravityClient.Answer<[InAppCampaign]>, WireFailure>, identityEpoch: UInt64
    ) -> [EngineAction] {
        guard let request = hostRequests.removeValue(forKey: call) else {
            preconditionFailure("an answer for \(call), which sent no Gravity request")
        }
        let endpoint = request == .trackView ? "POST /visit (trackView)" : "POST /event (triggerEvent)"
        switch result {
        case .failure(.cancelled):
            return [.complete(call, .done)]
        case .failure(.failed(let error, _)):
            // B5: only the log says so.
            return [.log(.error, "gravity \(endpoint) failed: \(error)"), .complete(call, .done)]
        case .success(let answer):
            var actions = identityAnswered(answer.user, epoch: identityEpoch)
            var shown = 0
            for campaign in answer.value {
                if presentation.locks.isLocked {  // B6, O7: dropped, not queued
                    actions.append(
                        .log(
                            .info,
                            "in-app campaign \(campaign.campaignId) suppressed: presentation locked by \(presentation.locks)"
                        ))
                } else {
                    actions.append(.callHost(.showInAppCampaign(campaign, for: call)))
                    shown += 1
                }
            }
            guard shown > 0 else { return actions + [.complete(call, .done)] }
            campaignShows[call] = shown  // the call returns once they are shown
            return actions
        }
    }

    /// An in-app campaign of `call` was shown.
    mutating func campaignShown(for call: CallID) -> [EngineAction] {
        guard let left = campaignShows[call] else { return [] }
        guard left <= 1 else {
            campaignShows[call] = left - 1
            return []
        }
        campaignShows[call] = nil
        return [.complete(call, .done)]
    }

    /// A host call's `/choose` answered: only the selector's entries (B5); content load
    /// tracking for its contents (B7); `nil` and a logged error on failure.
    mutating func contentAnswered(
        _ call: CallID, _ result: Result<GravityClient.Answer<ContentResponse>, WireFailure>, identityEpoch: UInt64
    ) -> [EngineAction] {
        guard case .content(let selector) = hostRequests.removeValue(forKey: call) else {
            preconditionFailure("a /choose answer for \(call), which asked for no content")
        }
        switch result {
        case .failure(.cancelled):
            return [.complete(call, .content(nil))]
        case .failure(.failed(let error, _)):
            return [
                .log(.error, "gravity POST /choose (getContentBySelector \(selector)) failed: \(error)"),
                .complete(call, .content(nil)),
            ]
        case .success(let answer):
            var actions = identityAnswered(answer.user, epoch: identityEpoch)
            if identityEpoch == identity.epoch { actions += trackURLs(answer.value.loadTrackingURLs) }  // B7
            return actions + [.complete(call, .content(answer.value))]
        }
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
            pendingIdentityChanges.append((change, call))
            return [.log(.info, "closing the chat: identity change")] + close(nil, .done)
        }
        return applyIdentityChange(change) + [.complete(call, .done)]
    }

    /// Identity changes that waited for the chat to close, now that it has.
    mutating func applyIdentityChangesWaitingForTheClose() -> [EngineAction] {
        let waiting = pendingIdentityChanges
        pendingIdentityChanges = []
        return waiting.flatMap { applyIdentityChange($0.change) + [.complete($0.call, .done)] }
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
        return actions
    }
}
