import Foundation

// MARK: - Executing what the machine decided

extension AssistantEngine {
    /// Feeds the machine an event and performs what it returns.
    func handle(_ event: (inout EngineMachine) -> [EngineAction]) {
        // Tracking held for an answer leaves before anything else happens: the hold only
        // keeps the tracker idle while the answer's first host call is on its way (below).
        if !answerTaskDrains { releaseHeldTracking() }
        run(event(&machine))
    }

    /// Runs a public call that waits for the machine: parks the caller under a new `CallID`,
    /// feeds `event`, and returns what the machine completes the call with. Cancelling the
    /// calling task is an event too (`callCancelled`): the machine decides what it means (P4).
    func call(_ event: @escaping (inout EngineMachine, CallID) -> [EngineAction]) async -> CallResult {
        nextCall += 1
        let id = CallID(value: nextCall)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CallResult, Never>) in
                parked[id] = continuation
                handle { event(&$0, id) }
                if Task.isCancelled { handle { $0.callCancelled(id) } }
                park(id)
            }
        } onCancel: {
            self.spawn { await self.handle { $0.callCancelled(id) } }
        }
    }

    /// The one place a caller parks: still waiting after its event ran (and started its
    /// work, which counts), it stops counting as runnable work, for replay quiescence.
    private func park(_ id: CallID) {
        guard parked[id] != nil else { return }  // completed at once: it never parked
        parkedCounted.insert(id)
        activity?.end()
    }

    /// The one place a parked caller resumes; counted as runnable again first.
    private func resume(_ id: CallID, with result: CallResult) {
        guard let continuation = parked.removeValue(forKey: id) else {
            preconditionFailure("\(id) completed but nobody waits for it")
        }
        if parkedCounted.remove(id) != nil { activity?.begin() }
        continuation.resume(returning: result)
    }

    /// Performs the machine's actions, in order. The only switch over `EngineAction`.
    ///
    /// Actions take effect in order: a completion that follows a host callback in the same
    /// batch takes effect once that callback has returned.
    func run(_ actions: [EngineAction]) {
        var lastHostCallOfBatch: UInt64?
        for action in actions {
            switch action {
            case .sendGravity(let id, let request, let epoch):
                let gravity = self.gravity
                requests[id] = spawn {
                    let answer = await gravity.perform(request)
                    await self.answered(id) { machine, _ in machine.gravityAnswered(id, answer, identityEpoch: epoch) }
                }
            case .sendShopping(let id, let request):
                let shopping = self.shopping
                requests[id] = spawn {
                    let answer = await shopping.perform(request)
                    await self.answered(id) { machine, canHandle in
                        machine.shoppingAnswered(id, answer, canHandle: canHandle)
                    }
                }
            case .cancelRequest(let id):
                requests.removeValue(forKey: id)?.cancel()
            case .startTimer(let id, let duration):
                timers.set(id, at: elapsed() + duration)
                rescheduleTicker()
            case .cancelTimer(let id):
                timers.cancel(id)
                rescheduleTicker()
            case .track(let jobs):
                if answerTaskDrains {
                    trackingHeldForAnswer += jobs
                } else {
                    tracker.enqueue(jobs)
                }
            case .callHost(let call):
                if case .present(let opening, _, _) = call {
                    // One chat at a time: any earlier presentation is over by now.
                    presenters = [opening: WeakPresenter(presenter: presenterBeingOpened)]
                    presenterBeingOpened = nil
                }
                lastHostCall += 1
                hostQueue.append((lastHostCall, call))
                lastHostCallOfBatch = lastHostCall
                startHostQueue()
            case .notifyLocks(let locks):
                lockListener?(locks)
            case .persistUID(let uid):
                identityStore.saveUid(uid)
            case .complete(let id, let result):
                if let host = lastHostCallOfBatch {
                    completionsAfterHostCall[host, default: []].append((id, result))
                } else {
                    resume(id, with: result)
                }
            case .log(let level, let message):
                logger.log(level, message)
            }
        }
    }

    /// Feeds a request's answer to the machine from the request's own task, which then
    /// performs the host calls the answer queued (the reply's update, for one): the reply
    /// reaches the presenter without waiting for another task to be started and scheduled.
    /// A cancelled request's task leaves them to a task of their own, as presenters may
    /// check for cancellation.
    private func answered(
        _ id: RequestID,
        _ event: (inout EngineMachine, _ canHandle: (AssistantAction) -> Bool) -> [EngineAction]
    ) async {
        requests[id] = nil  // answered: nothing is to cancel it now
        let drains = !Task.isCancelled
        let queueWasIdle = !hostQueueRunning
        answerTaskDrains = drains
        let handler = self.handler
        handle { event(&$0) { handler?.canHandle($0) ?? false } }
        answerTaskDrains = false
        // The queue started during the event was left to this task (`startHostQueue`).
        guard drains, queueWasIdle, hostQueueRunning else { return releaseHeldTracking() }
        await drainHostQueue()  // the first host call's `handle` releases the held tracking
    }

    func releaseHeldTracking() {
        guard !trackingHeldForAnswer.isEmpty else { return }
        defer { trackingHeldForAnswer = [] }
        tracker.enqueue(trackingHeldForAnswer)
    }

    /// Starts engine work as a task that the activity monitor counts until it ends.
    @discardableResult
    nonisolated func spawn(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if let activity { return activity.spawn(body) }
        return Task(operation: body)
    }

    // MARK: - Deadlines: one ticker

    /// Keeps one task asleep until the earliest deadline.
    private func rescheduleTicker() {
        guard let earliest = timers.earliest else {
            ticker?.cancel()
            ticker = nil
            tickerTarget = nil
            return
        }
        if ticker != nil, let tickerTarget, tickerTarget == earliest { return }
        ticker?.cancel()
        tickerTarget = earliest
        let wait = earliest - elapsed()
        let (clock, slice) = (self.clock, tickerSlice)
        tickerGeneration += 1
        let generation = tickerGeneration
        ticker = spawn {
            if wait > .zero {
                do { try await SlicedSleep.sleep(on: clock, for: wait, slice: slice) } catch { return }
            }
            await self.deadlinesPassed(ticker: generation)
        }
    }

    /// A ticker woke. One replaced after its sleep ended but before it reached the actor (its
    /// cancellation came too late) is not the ticker any more and does nothing: the one that
    /// replaced it keeps the deadlines, and there is never more than one.
    private func deadlinesPassed(ticker generation: UInt64) {
        guard generation == tickerGeneration else { return }
        ticker = nil
        tickerTarget = nil
        for id in timers.takeDue(at: elapsed()) {
            handle { $0.timerFired(id) }
        }
        rescheduleTicker()
    }

    // MARK: - Host callbacks: one at a time, in order

    private func startHostQueue() {
        guard !hostQueueRunning else { return }
        hostQueueRunning = true
        // An answer's own task performs the queue once its event has run (`answered`).
        guard !answerTaskDrains else { return }
        spawn { await self.drainHostQueue() }
    }

    private func drainHostQueue() async {
        while !hostQueue.isEmpty {
            let (number, call) = hostQueue.removeFirst()
            await perform(call)
            for (id, result) in completionsAfterHostCall.removeValue(forKey: number) ?? [] {
                resume(id, with: result)
            }
        }
        hostQueueRunning = false
    }

    /// Performs one host callback, then tells the machine it returned. A presenter that went
    /// away is reported instead of called (O5).
    private func perform(_ call: HostCall) async {
        switch call {
        case .present(let opening, let snapshot, _):
            guard let presenter = presenters[opening]?.presenter else { return handle { $0.presenterGone(opening) } }
            await presenter.presentAssistant(snapshot)
        case .update(let opening, let snapshot, _):
            guard let presenter = presenters[opening]?.presenter else { return handle { $0.presenterGone(opening) } }
            await presenter.updateAssistant(snapshot)
        case .dismiss(let opening):
            // Still registered while it dismisses: the chat is closing, not gone (O5).
            if let presenter = presenters[opening]?.presenter { await presenter.dismissAssistant() }
            presenters[opening] = nil
        case .handOver(let action):
            await handler?.handle(action)
        case .showInAppCampaign(let campaign, _):
            await inAppCampaignHandler?(campaign)
        }
        handle { $0.hostCallFinished(call) }
    }
}

// MARK: - The clients' side of the machine's requests

extension GravityClient {
    /// Sends a request the machine decided and decodes its answer.
    func perform(_ request: GravityCall) async -> GravityResult {
        switch request {
        case .choose(let selector, let settings, let envelope):
            return .content(await choose(selector: selector, settings: settings, envelope: envelope))
        case .visit(let envelope):
            return .campaigns(await visit(envelope: envelope))
        case .event(let events, let envelope):
            return .campaigns(await event(events, envelope: envelope))
        }
    }
}

extension ShoppingClient {
    /// Sends a request the machine decided and decodes its answer.
    func perform(_ request: ShoppingCall) async -> ShoppingResult {
        switch request {
        case .message(let message):
            return .reply(await sendMessage(body: Self.messageBody(message)))
        case .history(let threadId, let resourceId, let tenantId):
            return .history(await history(threadId: threadId, resourceId: resourceId, tenantId: tenantId))
        case .feedback(let feedback):
            return .feedback(await self.feedback(feedback))
        }
    }
}
