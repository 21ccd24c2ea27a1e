import Foundation

// MARK: - Executing what the machine decided

extension AssistantEngine {
    /// Feeds the machine an event and performs what it returns; host callbacks it asks for
    /// start as tasks of their own.
    func handle(_ event: (inout EngineMachine) -> [EngineAction]) {
        start(run(machine.receive(event)))
    }

    /// Runs a public call that waits for the machine: feeds `event` under a new `CallID` and
    /// returns what the machine completes the call with — at once when it decided in that
    /// event, else once it does, the caller parked meanwhile. Cancelling the calling task is an
    /// event too (`callCancelled`): the machine decides what it means (P4, H1). Once the engine
    /// is shut down, the machine answers `refusal` (H2).
    ///
    /// `presenter` is the presenter an `openAssistant` call offers: kept under the call's ID
    /// until the call returns, so that the machine's present names it by that ID.
    func call(
        refusal: CallResult = .done, offering presenter: (any AssistantPresenter)? = nil,
        _ event: @escaping (inout EngineMachine, CallID) -> [EngineAction]
    ) async -> CallResult {
        let id = begin(refusal: refusal, offering: presenter, event)
        return await result(of: id)
    }

    /// Feeds a call's event under a new `CallID` and returns the ID, for `result(of:)`. A call
    /// made from inside a host callback says so in its ID (`HostCallbackScope`): the machine
    /// never makes it wait for the host (H1).
    func begin(
        refusal: CallResult, offering presenter: (any AssistantPresenter)? = nil,
        _ event: @escaping (inout EngineMachine, CallID) -> [EngineAction]
    ) -> CallID {
        nextCall += 1
        let id = CallID(value: nextCall, insideHostCallback: HostCallbackScope.isActive)
        if let presenter { offeredPresenters[id] = presenter }
        start(run(machine.receive(call: id, refusal: refusal, event)))
        return id
    }

    /// What the machine completes call `id` with: at once if it already did, else once it does.
    func result(of id: CallID) async -> CallResult {
        if let result = completedBeforeParking.removeValue(forKey: id) { return result }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CallResult, Never>) in
                parked[id] = continuation
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

    /// The one place a call ends: a parked caller resumes (counted as runnable again first);
    /// a call decided in its own event returns without parking.
    private func complete(_ id: CallID, with result: CallResult) {
        offeredPresenters[id] = nil
        guard let continuation = parked.removeValue(forKey: id) else {
            completedBeforeParking[id] = result
            return
        }
        if parkedCounted.remove(id) != nil { activity?.begin() }
        continuation.resume(returning: result)
    }

    /// Performs the machine's actions, in order, and returns the host callbacks to start. The
    /// only switch over `EngineAction`.
    func run(_ actions: [EngineAction]) -> [(HostCallID, HostCall)] {
        var hostCalls: [(HostCallID, HostCall)] = []
        for action in actions {
            switch action {
            case .sendGravity(let id, let request, let epoch):
                let gravity = self.gravity
                requests[id] = spawn { [weak self] in
                    let answer = await gravity.perform(request)
                    await self?.answered(id) { machine, _ in machine.gravityAnswered(id, answer, identityEpoch: epoch) }
                }
            case .sendShopping(let id, let request):
                let shopping = self.shopping
                requests[id] = spawn { [weak self] in
                    let answer = await shopping.perform(request)
                    await self?.answered(id) { machine, canHandle in
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
                tracker.enqueue(jobs)
            case .callHost(let id, let call):
                if case .present(let opening, _, _, let caller) = call {
                    // One chat at a time: any earlier presentation is over by now.
                    presenters = [opening: WeakPresenter(presenter: offeredPresenters[caller])]
                }
                hostCalls.append((id, call))
            case .notifyLocks(let locks):
                lockListener?(locks)
            case .persistUID(let uid):
                identityStore.saveUid(uid)
            case .complete(let id, let result):
                complete(id, with: result)
            case .log(let level, let message):
                logger.log(level, message)
            case .stopEverything:
                for request in requests.values { request.cancel() }
                requests = [:]
                timers = EngineTimers()
                rescheduleTicker()
            }
        }
        return hostCalls
    }

    /// Feeds a request's answer to the machine from the request's own task, which then
    /// performs the first host callback the answer asked for (the reply's update, for one)
    /// itself: the reply reaches the presenter without waiting for another task to start.
    /// Nothing waits for this task, so awaiting the host here holds nothing up (H1); further
    /// callbacks start as tasks of their own. A cancelled request's task starts them all.
    private func answered(
        _ id: RequestID,
        _ event: (inout EngineMachine, _ canHandle: (AssistantAction) -> Bool) -> [EngineAction]
    ) async {
        requests[id] = nil  // answered: nothing is to cancel it now
        let handler = self.handler
        var calls = run(machine.receive { event(&$0) { handler?.canHandle($0) ?? false } })
        guard !Task.isCancelled, !calls.isEmpty else { return start(calls) }
        let first = calls.removeFirst()
        start(calls)
        await perform(first.0, first.1)
    }

    /// Starts each host callback as a task of its own: none waits for another (H1).
    private func start(_ calls: [(HostCallID, HostCall)]) {
        for (id, call) in calls {
            spawn { [weak self] in await self?.perform(id, call) }
        }
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
        ticker = spawn { [weak self] in
            if wait > .zero {
                do { try await SlicedSleep.sleep(on: clock, for: wait, slice: slice) } catch { return }
            }
            await self?.deadlinesPassed(ticker: generation)
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

    // MARK: - Host callbacks (H1)

    /// Performs one host callback, then tells the machine it returned. The callback runs
    /// marked as one (`HostCallbackScope`), so an engine call it makes never waits for the
    /// host (H1). A presenter that went away is reported instead of called (O5).
    private func perform(_ id: HostCallID, _ call: HostCall) async {
        switch call {
        case .present(let opening, let snapshot, _, _):
            guard let presenter = presenters[opening]?.presenter else { return handle { $0.presenterGone(id) } }
            await HostCallbackScope.$isActive.withValue(true) { await presenter.presentAssistant(snapshot) }
        case .update(let opening, let snapshot, _):
            guard let presenter = presenters[opening]?.presenter else { return handle { $0.presenterGone(id) } }
            await HostCallbackScope.$isActive.withValue(true) { await presenter.updateAssistant(snapshot) }
        case .dismiss(let opening):
            // Still registered while it dismisses: the chat is closing, not gone (O5).
            if let presenter = presenters[opening]?.presenter {
                await HostCallbackScope.$isActive.withValue(true) { await presenter.dismissAssistant() }
            }
            presenters[opening] = nil
        case .handOver(let action):
            if let handler {
                await HostCallbackScope.$isActive.withValue(true) { await handler.handle(action) }
            }
        case .showInAppCampaign(let campaign):
            if let inAppCampaignHandler {
                await HostCallbackScope.$isActive.withValue(true) { await inAppCampaignHandler(campaign) }
            }
        }
        handle { $0.hostCallFinished(id) }
    }
}

/// Marks the task of a host callback the engine is performing, so that an engine call made
/// from inside it (or from a task it starts with `Task { }`, which inherits the mark) never
/// waits for the host (H1).
enum HostCallbackScope {
    @TaskLocal static var isActive = false
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
