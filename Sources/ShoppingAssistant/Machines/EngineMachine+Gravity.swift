// MARK: - Base SDK subset (B3–B7, O7)

extension EngineMachine {
    /// `trackView`: `POST /visit` (B5). The assistant never calls it itself (E4).
    mutating func trackViewCalled(_ call: CallID, page: PageContext) -> [EngineAction] {
        hostRequests[call] = (.trackView, abandoned: false)
        return sendGravity(.host(call), .visit(envelope(page)))
    }

    /// `triggerEvent`: `POST /event` (B5) with the seed's typed events (B10). An event that the
    /// seed's rules say cannot be sent as it is — a required id empty, a quantity that is no
    /// positive number of units, an amount that is negative or no number, an empty purchase —
    /// is refused with an error line and never sent half-made; the call's other events still
    /// go. With none left, nothing is sent.
    mutating func triggerEventCalled(_ call: CallID, events: [any TriggerEvent], page: PageContext) -> [EngineAction] {
        var actions: [EngineAction] = []
        var wire: [GravityEvent] = []
        for event in events {
            guard let known = event as? any GravityTriggerEvent else {
                actions.append(
                    Self.foreign("triggerEvent", "\(Swift.type(of: event)) (\(event.type))", "a CustomEvent"))
                continue
            }
            if let refusal = known.refusal {  // B10: never half-made
                actions.append(.log(.error, "triggerEvent: \(known.type) refused, not sent: \(refusal)"))
                continue
            }
            var event = known.wire
            if !known.customProps.isEmpty { event.fields["customProps"] = .properties(known.customProps) }  // B10
            event.fields["eventTime"] = .text(EventTime.format(known.eventTime ?? wallNow))  // DL6
            wire.append(event)
        }
        guard !wire.isEmpty else {
            return actions + [.log(.debug, "triggerEvent: no event to send"), .complete(call, .done)]
        }
        hostRequests[call] = (.triggerEvent, abandoned: false)
        // DL5: it returns once its events are kept, or once its answer comes, if that is first.
        return actions + [.completeWhenKept(call)] + sendGravity(.host(call), .event(wire, envelope(page)))
    }

    /// `setNotificationPermissionStatus`: `device.permission` of every request decided from
    /// now on, the engine's own lifecycle events included (B11).
    mutating func notificationPermissionSet(_ status: NotificationPermissionStatus) -> [EngineAction] {
        settings.notificationPermission = status
        return []
    }

    /// `sendContentEngagement` (B12): the URLs of the content's `events` of the type its
    /// `variables` name for this engagement (`onImpression`, `onVisibleImpression`, `onClose`,
    /// as the SDKs' `ContentEventService` reads them), valid ones, each once (AN5).
    mutating func contentEngagementCalled(_ engagement: any ContentEngagement) -> [EngineAction] {
        guard let known = engagement as? any KnownContentEngagement else {
            return [Self.foreign("sendContentEngagement", "\(Swift.type(of: engagement))", "one of the engine's types")]
        }
        let content = known.content
        let label = "content \(content.contentId ?? "-") \(known.kind.rawValue)"
        guard let action = content.engagementAction(known.kind) else {
            return [.log(.debug, "\(label): the content names no event for it")]
        }
        return engagementURLs(content.trackingURLs(action), of: content, label: label)
    }

    /// `sendProductEngagement` (B12): the URLs of the slot's `events` of the engagement's type
    /// (`click`, `visible_impression`), valid ones, each once (AN5).
    mutating func productEngagementCalled(_ engagement: any ProductEngagement) -> [EngineAction] {
        guard let known = engagement as? any KnownProductEngagement else {
            return [Self.foreign("sendProductEngagement", "\(Swift.type(of: engagement))", "one of the engine's types")]
        }
        let slot = known.slot.slotId ?? known.slot.strId.map(String.init) ?? "-"
        return engagementURLs(
            known.slot.trackingURLs(known.eventType), of: known.content,
            label: "slot \(slot) of content \(known.content.contentId ?? "-") \(known.eventType)")
    }

    /// A value of a type of the host's own conforming to the engine's protocol: the engine cannot
    /// know its fields, so it is not sent (B10, B12).
    private static func foreign(_ call: String, _ value: String, _ instead: String) -> EngineAction {
        .log(.error, "\(call): \(value) is not one of the engine's types; not sent (send it as \(instead))")
    }

    /// An engagement's tracking URLs, bound to the user of the answer the content came in (AN3).
    /// A content of an identity that has ended since is stale, as a product ref of an older
    /// identity is (PR8): its engagement is not sent, so it is never counted for the new user.
    private func engagementURLs(_ urls: [String], of content: CampaignContent, label: String) -> [EngineAction] {
        if let origin = content.origin, origin.identityEpoch != identity.epoch {
            return [.log(.info, "\(label) not sent: the content is from before an identity change")]  // B12, AN3
        }
        let valid = urls.filter(HTTPURLValidator.isValid)
        guard !valid.isEmpty else { return [.log(.debug, "\(label): no tracking URL")] }
        return trackURLs(valid, user: content.origin?.user)  // AN5: each once
    }

    /// `getContentBySelector`: `POST /choose` (B5), with the content calls made in the same
    /// instant (B16). Never blocked by a presentation lock (B6).
    mutating func contentCalled(_ call: CallID, selector: String, page: PageContext) -> [EngineAction] {
        hostRequests[call] = (.content(selector: selector), abandoned: false)
        return requestContent(.host(call), selector: selector, page: page)
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
    ///
    /// Its campaigns are for the moment and the user of the call (B15): none is shown when the
    /// identity changed while the answer was on its way, or when the answer came after the
    /// call's `deadline` (on the engine's clock) — a late answer that reaches the machine after
    /// the deadline's own event never gets here (`gravityAnswered`).
    mutating func campaignsAnswered(
        _ call: CallID, _ result: Result<GravityClient.Answer<[InAppCampaign]>, WireFailure>, identityEpoch: UInt64,
        deadline: Duration
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
            guard identityEpoch == identity.epoch, clockNow <= deadline else {  // B15
                let why =
                    identityEpoch == identity.epoch
                    ? "the answer came after its call's deadline" : "the identity changed meanwhile"
                return actions + Self.campaignsDropped(answer.value, why) + completion
            }
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
            campaigns.arrived(shown, for: call, deadline: deadline)
            return actions + hold(completion, until: .campaignsShown(call)) + showNextCampaign()
        }
    }

    /// The note that the campaigns of an answer are not shown, and why (B15); none without any.
    static func campaignsDropped(_ campaigns: [InAppCampaign], _ why: String) -> [EngineAction] {
        guard !campaigns.isEmpty else { return [] }
        return [.log(.info, "in-app campaigns \(campaigns.map(\.campaignId).joined(separator: ", ")) dropped: \(why)")]
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
            // B12, AN3: its engagement is bound to the identity it was selected for.
            let origin = ContentOrigin(identityEpoch: identityEpoch, user: identity.wire)
            return actions + [.complete(call, .content(answer.value.bound(to: origin)))]
        }
    }

    // MARK: - The session gate (B8)

    /// Sends a Gravity request now, or holds it at the session gate until the first answer of
    /// the session (B8).
    mutating func sendGravity(_ id: RequestID, _ call: GravityCall) -> [EngineAction] {
        let request = SessionGate.Waiting(id: id, call: call, identityEpoch: identity.epoch)
        guard sessionGate.requested(request, needsSession: identity.needsSession) else {
            let note = EngineAction.log(.debug, "\(id) waits for the session's first Gravity answer")  // B8
            // DL2, DL5: kept now, so that `triggerEvent` returns; `trackView` waits for its answer.
            guard case .event = call else { return [note] }
            return [note, .keepAtGate(id, call, identityEpoch: identity.epoch)]
        }
        return send(request)
    }

    /// The request goes now, with its own deadline (B13).
    private mutating func send(_ request: SessionGate.Waiting) -> [EngineAction] {
        gravityInFlight[request.id] = clockNow + settings.gravityTimeout
        if request.call.user.isNobody { sentAsNobody.insert(request.id) }
        return [
            .sendGravity(request.id, request.call, identityEpoch: request.identityEpoch),
            .startTimer(.gravity(request.id), after: settings.gravityTimeout),  // B13
        ]
    }

    /// Stops waiting for a Gravity request: one still at the gate is never sent; the first
    /// request of a session, let go, releases the gate as a failed one does (B8).
    mutating func cancelGravity(_ id: RequestID) -> [EngineAction] {
        if let actions = withdrawContent(id) { return actions }  // B16: still waiting, or merged
        if sessionGate.withdrawn(id) { return [.forgetKeptAtGate(id)] }
        sentAsNobody.remove(id)
        return [.cancelRequest(id), .cancelTimer(.gravity(id))] + sessionGateAnswered(id)
    }

    /// A Gravity request answered (its `user` already adopted): what waited at the gate goes,
    /// carrying the session it brought (B8).
    mutating func sessionGateAnswered(_ id: RequestID) -> [EngineAction] {
        let actions = sessionGate.answered(id, needsSession: identity.needsSession).flatMap { request in
            // A request decided for an older identity keeps the user it was decided for (AN3).
            let call = request.identityEpoch == identity.epoch ? request.call.sent(as: identity.wire) : request.call
            return send(SessionGate.Waiting(id: request.id, call: call, identityEpoch: request.identityEpoch))
        }
        return actions + answerOwnerWaiters()
    }

    // MARK: - Queued records raised before any identity (B8, DL7)

    /// The outbox is about to send a queued record raised before any identity was known: it
    /// leaves as the identity known now (DL7). With nobody known it goes alone as the session's
    /// first request, or waits for the one on its way, so that one profile is opened, not one
    /// per record (B8).
    mutating func queuedOwnerAsked(_ owner: UInt64) -> [EngineAction] {
        ownerWaiters.append(owner)
        return answerOwnerWaiters()
    }

    /// A queued record that went as the session's first request is over: its answer's `user`
    /// is taken as any first answer's (B9, taken only while nobody is known), and what waited
    /// at the gate goes.
    mutating func queuedOpenerFinished(_ owner: UInt64, user: GravityAnsweredUser?, identityEpoch: UInt64)
        -> [EngineAction]
    {
        lifecycleEventAnswered(user: user, identityEpoch: identityEpoch, sentAsNobody: true)
            + sessionGateAnswered(.queued(owner))
    }

    /// Owners asked while the gate had a first request on its way learn theirs once it is
    /// over: the identity known then, or, still with nobody known, the first of them goes alone.
    private mutating func answerOwnerWaiters() -> [EngineAction] {
        guard !ownerWaiters.isEmpty, sessionGate.opener == nil else { return [] }
        if !identity.wire.isNobody {
            defer { ownerWaiters = [] }
            return ownerWaiters.map { .answerOwner($0, identity.wire, identityEpoch: identity.epoch, opens: false) }
        }
        let first = ownerWaiters.removeFirst()
        sessionGate.opened(by: .queued(first))
        return [.answerOwner(first, identity.wire, identityEpoch: identity.epoch, opens: true)]
    }

    /// A Gravity call's deadline passed (B13): it ends as a timeout — an uncertain outcome,
    /// the server may have had it — and the transport stops waiting. The first request of a
    /// session releases the gate, as a failed one does (B8).
    mutating func gravityDeadlinePassed(_ id: RequestID) -> [EngineAction] {
        guard let deadline = gravityInFlight.removeValue(forKey: id) else { return [] }
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
        return [.cancelRequest(id)]
            + dispatchGravityAnswer(id, result, identityEpoch: identity.epoch, deadline: deadline)
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

    mutating func changeIdentity(_ change: IdentityChange, call: CallID) -> [EngineAction] {
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
        // B16: the calls of the instant leave as the identity they were made under.
        var actions = contentWindowEndedEarly()
        switch change {
        case .setUser(let userId, let sessionId):
            guard identity.userSet(userId: userId, sessionId: sessionId) else { return actions }
        case .reset:
            // B14: the listener hears `nil` once a uid was known, on disk or from Gravity.
            if identity.canonicalUID != nil || reportedUID != nil { uidToReport = .some(nil) }
            identity.resetRequested()
            actions.append(.persistUID(nil))
        case .restoreUID(let uid):
            guard identity.uidRestored(uid) else { return actions }
            uidToReport = .some(uid)
            actions.append(.persistUID(uid))
        }
        actions.append(.log(.info, "identity changed"))
        actions += perform(campaigns.identityChanged())  // B15: what waited was for the user that was
        actions += endDialog(.identityChange, user: previous)  // D13, D17, AN3
        actions += run(preparation.identityChanged())  // B3: the old user's start screen is not the new one's
        for request in sessionGate.identityChanged() {  // B8: the gate starts again for the new identity
            actions += sendGravity(request.id, request.call.sent(as: identity.wire))
        }
        actions += answerOwnerWaiters()  // a queued first request of the old identity gates nothing
        return actions + releaseReached()  // B15: a call whose campaigns were all dropped returns
    }
}

// MARK: - Delivery (DL5, DL8)

extension EngineMachine {
    /// `clearQueue()` (DL8): an event still waiting at the session gate is never sent; its
    /// caller returns.
    mutating func queueCleared() -> [EngineAction] {
        var actions: [EngineAction] = []
        for waiting in sessionGate.waiting {
            guard case .event = waiting.call, case .host(let call) = waiting.id, sessionGate.withdrawn(waiting.id)
            else { continue }
            actions.append(.log(.info, "triggerEvent: cleared from the queue before it was sent"))
            actions.append(.forgetKeptAtGate(waiting.id))
            if let (_, abandoned) = hostRequests.removeValue(forKey: call), !abandoned {
                actions.append(.complete(call, .done))
            }
        }
        return actions
    }
}
