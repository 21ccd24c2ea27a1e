// MARK: - Host callbacks, held completions, shutdown (H1, H2)

extension EngineMachine {
    // MARK: Receiving events

    /// Every event goes through here: it does nothing once the engine is shut down (H2);
    /// tracking held behind a presenter call leaves first, and tracking of an event that
    /// gives the presenter a snapshot waits for the next event (`trackingAfterPresenter`).
    mutating func receive(_ event: (inout EngineMachine) -> [EngineAction]) -> [EngineAction] {
        guard !isShutDown else { return [] }  // H2: nothing happens after a shutdown
        let held = takeTrackingAfterPresenter()
        var actions = holdTrackingBehindPresenter(event(&self))
        if uidToReport != nil || !userIdCalls.isEmpty { actions += userIdSettled() }  // B14
        return held.isEmpty ? actions : held + actions  // the event's own array, uncopied, as a rule
    }

    /// A public call that waits: refused with `refusal` once the engine is shut down (H2).
    mutating func receive(
        call: CallID, refusal: CallResult, _ event: (inout EngineMachine, CallID) -> [EngineAction]
    ) -> [EngineAction] {
        guard !isShutDown else {
            return [.log(.info, "\(call) refused: the engine is shut down"), .complete(call, refusal)]  // H2
        }
        return receive { event(&$0, call) }
    }

    /// `flushTracking`: whatever tracking is held leaves now (the flush waits for it).
    mutating func flushRequested() -> [EngineAction] { [] }

    private mutating func takeTrackingAfterPresenter() -> [EngineAction] {
        guard let jobs = TrackingJobs(trackingAfterPresenter) else { return [] }
        trackingAfterPresenter = []
        return [.track(jobs)]
    }

    /// The tracking of a batch that starts a present or an update waits for the next event:
    /// the presenter gets the snapshot first. Order is kept: held tracking leaves before any
    /// later tracking.
    private mutating func holdTrackingBehindPresenter(_ actions: [EngineAction]) -> [EngineAction] {
        let givesSnapshot = actions.contains { action in
            switch action {
            case .callHost(_, .present), .callHost(_, .update): return true
            default: return false
            }
        }
        guard givesSnapshot else { return actions }
        return actions.filter { action in
            guard case .track(let jobs) = action else { return true }
            trackingAfterPresenter += jobs
            return false
        }
    }

    // MARK: Host callbacks

    /// A host callback to start now; the machine records what it is for, so that its return
    /// can be checked against the current state.
    mutating func hostCall(_ call: HostCall) -> EngineAction {
        nextHostCall += 1
        let id = HostCallID(value: nextHostCall)
        hostCalls[id] = HostCallPurpose(call)
        return .callHost(id, call)
    }

    /// A host callback the actor started has returned. A return the machine does not expect
    /// (after a shutdown, or twice) changes nothing; one for an opening that is no longer on
    /// screen is checked by the presentation machine.
    mutating func hostCallFinished(_ id: HostCallID) -> [EngineAction] {
        guard let purpose = hostCalls.removeValue(forKey: id) else { return [] }
        switch purpose {
        case .present(let opening, let revision):
            return run(presentation.presentFinished(opening, revision: revision))
        case .update(let opening, let revision):
            return run(presentation.updateFinished(opening, revision: revision))
        case .dismiss(let opening):
            return run(presentation.dismissFinished(opening))
        case .handOver:
            return run(presentation.handOverFinished())
        case .campaign:
            campaigns.finishedShowing()
            return showNextCampaign()
        }
    }

    /// The actor found the presenter gone when it was to call it (O5): the chat is over.
    mutating func presenterGone(_ id: HostCallID) -> [EngineAction] {
        guard let purpose = hostCalls.removeValue(forKey: id) else { return [] }
        switch purpose {
        case .present(let opening, _), .update(let opening, _), .dismiss(let opening):
            // O5: a presenter that went away dismissed the chat.
            return [.log(.info, "the presenter went away: closing the chat")] + run(presentation.dismissed(opening))
        case .handOver, .campaign:
            preconditionFailure("\(id) was not a presenter call")
        }
    }

    // MARK: Held completions (H1)

    /// `actions` now if `milestone` is reached, else once it is. A call made from inside a host
    /// callback never waits for the host (H1): the host may be waiting for that very call, so
    /// its completion takes effect at once, with the result decided, and what it caused
    /// follows once the callback has returned. (It still waits for what only the network and
    /// the engine's deadlines bring: a message to settle.)
    mutating func hold(_ actions: [EngineAction], until milestone: HostMilestone) -> [EngineAction] {
        // What waits for a message to settle waits on for that outcome's delivery.
        if milestone == .settled, isReached(.settled) {
            return hold(actions, until: .delivered(revision: dialog.revision))
        }
        let reached = isReached(milestone)
        return actions.filter { action in
            if reached { return true }
            // H1: never held for the host, which may be waiting for this very call.
            if case .complete(let call, _) = action, call.insideHostCallback, milestone.isTheHosts { return true }
            held.append(action, until: milestone)
            return false
        }
    }

    /// Whether the host has seen what `milestone` is about.
    func isReached(_ milestone: HostMilestone) -> Bool {
        switch milestone {
        case .presented(let opening): return presentation.state != .presenting(opening)
        case .closed: return presentation.isClosed
        case .handedOver(let closes):
            return presentation.closesHandedOver > closes
                || (presentation.isClosed && !presentation.handOversPending)
        case .delivered(let revision): return presentation.shownOpening == nil || deliveredRevision >= revision
        case .settled: return !dialog.isSending
        case .campaignsShown(let call): return campaigns.isDone(call)
        }
    }

    /// What was held for milestones that are reached now: notes before the callers they
    /// concern return, each kind in the order it was held. What waited for a message to
    /// settle waits on for its outcome's delivery.
    mutating func releaseReached() -> [EngineAction] {
        guard !held.isEmpty else { return [] }
        // Taken out while it is searched: `held.take(where: isReached)` would read the machine
        // while it is being changed, and Swift keeps that apart by copying the whole machine.
        var stillHeld = HeldActions()
        swap(&stillHeld, &held)
        let reached = stillHeld.take { isReached($0) }
        swap(&stillHeld, &held)
        var released: [EngineAction] = []
        for entry in reached {
            if entry.milestone == .settled {
                released += hold([entry.action], until: .settled)  // now: until its delivery
            } else {
                released.append(entry.action)
            }
        }
        return Self.notesFirst(released)
    }

    /// Notes before completions, each kind in its order.
    private static func notesFirst(_ actions: [EngineAction]) -> [EngineAction] {
        let isNote: (EngineAction) -> Bool = { if case .log = $0 { return true } else { return false } }
        return actions.filter(isNote) + actions.filter { !isNote($0) }
    }

    /// A snapshot of `revision` reached the presenter.
    mutating func snapshotDelivered(revision: UInt64) -> [EngineAction] {
        deliveredRevision = max(deliveredRevision, revision)
        return releaseReached()
    }

    // MARK: In-app campaigns (B6, O7)

    /// Hands the next waiting campaign to the host, unless one is being shown; campaigns that
    /// a lock now holds back are dropped (B6, O7). Calls whose campaigns are all done return.
    mutating func showNextCampaign() -> [EngineAction] {
        run(campaigns.next(isLocked: presentation.locks.isLocked))
    }

    /// A campaign's `delayTime` passed: shown now, or dropped if a lock was taken meanwhile
    /// (B6) or its call's deadline plus the delay has passed (B15).
    mutating func campaignDelayPassed(_ turn: UInt64) -> [EngineAction] {
        let step = campaigns.delayPassed(turn, isLocked: presentation.locks.isLocked, now: clockNow)
        return run(step) + (step.show == nil ? showNextCampaign() : [])
    }

    /// Performs a step of the campaign queue; a dropped campaign lets the next one come up.
    private mutating func run(_ step: InAppCampaignQueue.Step) -> [EngineAction] {
        perform(step) + releaseReached()
    }

    /// What a step of the campaign queue calls for, without releasing the callers it let go
    /// of: the caller of this releases them when the event is done (`releaseReached()`).
    mutating func perform(_ step: InAppCampaignQueue.Step) -> [EngineAction] {
        var actions: [EngineAction] = step.dropped.map { drop in
            let id = drop.campaign.campaignId
            return switch drop.reason {
            case .locked: .log(.info, "in-app campaign \(id) suppressed: presentation locked by \(presentation.locks)")
            case .late:
                .log(.info, "in-app campaign \(id) dropped: its delay ended after its call's deadline plus the delay")
            case .identityChanged: .log(.info, "in-app campaign \(id) dropped: the identity changed while it waited")
            }
        }
        if let turn = step.stop { actions.append(.cancelTimer(.campaignDelay(turn))) }
        if let entry = step.show { actions.append(hostCall(.showInAppCampaign(entry.campaign))) }
        if let (turn, delay) = step.wait { actions.append(.startTimer(.campaignDelay(turn), after: delay)) }
        return actions
    }

    // MARK: Cancelled callers

    /// The task of a caller parked in the engine was cancelled. A preparation ends as
    /// `.cancelled` (P4); a call that waits for the host returns at once with what was decided
    /// for it (H1) — the close, hand-over or delivery goes on; a Gravity call of the host
    /// returns without its answer (the page view still reaches Gravity).
    mutating func callCancelled(_ call: CallID) -> [EngineAction] {
        if preparers.values.contains(call) { return prepareCancelled(call) }  // P4
        if let completion = held.takeCompletion(of: call) { return [completion] }  // H1
        guard let (request, abandoned) = hostRequests[call], !abandoned else { return [] }
        hostRequests[call] = (request, true)
        switch request {
        case .trackView, .triggerEvent:
            return [.complete(call, .done)]
        case .content:
            return cancelGravity(.host(call)) + [.complete(call, .content(nil))]  // nobody reads it now
        }
    }

    // MARK: Shutdown (H2)

    /// `shutdown()`: every parked caller returns with a defined result — a preparation
    /// `.cancelled`, a call held for the host with what was decided for it, a Gravity call
    /// without its answer — every request and deadline stops, and every later call is refused.
    /// Queued tracking is the actor's to flush, within its deadline.
    mutating func shutdownCalled(_ call: CallID) -> [EngineAction] {
        var actions: [EngineAction] = [.log(.info, "shutting down")]
        if case .preparing(let attempt) = preparation.state {
            actions += run(preparation.callerCancelled(attempt.id))  // its caller returns `.cancelled`
        }
        actions += Self.notesFirst(held.takeAll().map(\.action))
        for (caller, entry) in hostRequests where !entry.abandoned {
            actions.append(.complete(caller, result(of: entry.request)))
        }
        hostRequests = [:]
        contentBatcher = ContentBatcher()
        actions += userIdCalls.map { .complete($0, .userId(identity.canonicalUID)) }  // B14
        userIdCalls = []
        campaigns.clear()
        hostCalls = [:]  // returns of callbacks still under way change nothing
        actions += takeTrackingAfterPresenter()
        if let jobs = TrackingJobs(trackingAfterOutcome) { actions.append(.track(jobs)) }
        trackingAfterOutcome = []
        isShutDown = true
        return actions + [.stopEverything, .complete(call, .done)]
    }

    /// What a host Gravity call returns when it ends without its answer.
    private func result(of request: HostRequest) -> CallResult {
        switch request {
        case .trackView, .triggerEvent: return .done
        case .content: return .content(nil)
        }
    }
}
