import Foundation

// MARK: - Executing what the machine decided

extension AssistantEngine {
    /// Feeds the machine an event and performs what it returns; host callbacks it asks for
    /// start as tasks of their own.
    func handle(_ event: (inout EngineMachine) -> [EngineAction]) {
        machine.wallNow = wallClock()
        machine.clockNow = elapsed()
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
    @inline(__always)  // one async frame less on every call; most return at once
    func call(
        refusal: CallResult = .done, offering presenter: (any AssistantPresenter)? = nil,
        _ event: (inout EngineMachine, CallID) -> [EngineAction]
    ) async -> CallResult {
        let id = begin(refusal: refusal, offering: presenter, event)
        return await result(of: id)
    }

    /// Feeds a call's event under a new `CallID` and returns the ID, for `result(of:)`. A call
    /// made from inside a host callback says so in its ID (`HostCallbackScope`): the machine
    /// never makes it wait for the host (H1).
    func begin(
        refusal: CallResult, offering presenter: (any AssistantPresenter)? = nil,
        _ event: (inout EngineMachine, CallID) -> [EngineAction]
    ) -> CallID {
        let id = calls.begin(insideHostCallback: HostCallbackScope.isActive, offering: presenter)
        machine.wallNow = wallClock()
        machine.clockNow = elapsed()
        start(run(machine.receive(call: id, refusal: refusal, event)))
        return id
    }

    /// What the machine completes call `id` with: at once if it already did, else once it does.
    @inline(__always)  // the usual, immediate result costs no async frame; parking does
    func result(of id: CallID) async -> CallResult {
        if let result = calls.takeCompleted(id) { return result }
        if let kept = calls.takeKeptCompletion(id) { return await keptResult(of: id, kept) }
        return await parkedResult(of: id)
    }

    /// Waits for a call that completes once what it sends is kept: off the actor, so that the
    /// store's queue resumes the caller itself.
    private func keptResult(of id: CallID, _ kept: KeptCompletion) async -> CallResult {
        if Task.isCancelled { handle { $0.callCancelled(id) } }
        return await withTaskCancellationHandler {
            await kept.result()
        } onCancel: {
            self.spawn { await self.handle { $0.callCancelled(id) } }
        }
    }

    /// Parks the caller of call `id` until the machine completes it.
    private func parkedResult(of id: CallID) async -> CallResult {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CallResult, Never>) in
                calls.park(id, continuation)
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
        guard calls.countParked(id) else { return }  // completed at once: it never parked
        activity?.end()
    }

    /// The one place a call ends: a parked caller resumes (counted as runnable again first);
    /// a call decided in its own event returns without parking.
    private func complete(_ id: CallID, with result: CallResult) {
        guard let resumption = calls.complete(id, with: result) else { return }  // taken when the caller asks
        if resumption.wasCounted { activity?.begin() }
        resumption.continuation.resume(returning: result)
    }

    /// Performs the machine's actions, in order, and returns the host callbacks to start. The
    /// only switch over `EngineAction`.
    func run(_ actions: [EngineAction]) -> [(HostCallID, HostCall)] {
        var hostCalls: [(HostCallID, HostCall)] = []
        var refusedUIDs: [String?] = []
        for action in actions {
            switch action {
            case .sendGravity(let id, let request, let epoch):
                let gravity = self.gravity
                // `/visit` and `/event` go through the outbox: kept before they leave (DL2).
                let kept = deliveryRecord(for: request, identityEpoch: epoch)
                let outbox = self.outbox
                let held = keptAtGate.removeValue(forKey: id)
                let completion = keptCompletion(of: id)
                requests[id] = spawnRequest(id) { [weak self] in
                    let answer: GravityResult
                    if let (record, detail) = kept {
                        let response = await outbox.deliver(record, detail: detail, replacing: held) {
                            completion?.complete(.done)  // DL5: from the store's queue, at once
                        }
                        answer = .campaigns(response.flatMap(gravity.decodeEvents))
                    } else if case .choose(let selector, let settings, let envelope) = request {
                        answer = .content(
                            await gravity.choose(selector: selector, settings: settings, envelope: envelope))
                    } else if case .chooseTogether(let items, let envelope) = request {
                        answer = .content(await gravity.choose(items, envelope: envelope))  // B16
                    } else {
                        return  // every other call is kept (`deliveryRecord`)
                    }
                    if answer.succeeded { outbox.requestSucceeded() }
                    let next = await self?.answered(id) { machine, _ in
                        machine.gravityAnswered(id, answer, identityEpoch: epoch)
                    }
                    await next?.perform(reportingTo: WeakReference(self))
                }
            case .keepAtGate(let id, let request, let epoch):
                // Kept once: a request that meets the gate again after an identity change keeps
                // the record it was raised with (DL7).
                guard keptAtGate[id] == nil, let (record, detail) = deliveryRecord(for: request, identityEpoch: epoch)
                else { break }
                keptAtGate[id] = record.id
                let completion = keptCompletion(of: id)
                outbox.hold(record, detail: detail) { completion?.complete(.done) }
            case .forgetKeptAtGate(let id):
                if let kept = keptAtGate.removeValue(forKey: id) { outbox.withdrawHeld(kept) }
            case .sendShopping(let id, let request):
                let shopping = self.shopping
                let outbox = self.outbox
                // D19: a message leaves once the dialog that shows it sending is kept.
                let (writer, kept) = (dialogWriter, dialogWriter?.lastAsked ?? 0)
                requests[id] = spawnRequest(id) { [weak self] in
                    await writer?.waitUntilWritten(through: kept)
                    guard !Task.isCancelled else { return }  // abandoned: the machine awaits no answer
                    let answer = await shopping.perform(request)
                    if answer.succeeded { outbox.requestSucceeded() }
                    let next = await self?.answered(id) { machine, canHandle in
                        machine.shoppingAnswered(id, answer, canHandle: canHandle)
                    }
                    await next?.perform(reportingTo: WeakReference(self))
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
                track(jobs)
            case .callHost(let id, let call):
                if case .present(let opening, _, _, let caller) = call {
                    // One chat at a time: any earlier presentation is over by now.
                    presenters = [opening: WeakPresenter(presenter: calls.presenter(offeredBy: caller))]
                }
                hostCalls.append((id, call))
            case .notifyLocks(let locks):
                lockListener?(locks)
            case .persistUID(let uid):
                if !identityStore.attemptToSaveUid(uid) { refusedUIDs.append(uid) }
            case .notifyUserId(let uid):
                userIdListener?(uid)
            case .storeDialog(let dialog):
                storeDialog(dialog)
            case .forgetStoredDialog:
                forgetStoredDialog()
            case .completeWhenKept(let id):
                _ = calls.completeWhenKept(id, activity: activity)
            case .complete(let id, let result):
                complete(id, with: result)
            case .log(let level, let line):
                logger.log(level, line.description)
            case .answerOwner(let owner, let user, let epoch, let opens):
                answerOwner(owner, with: QueuedOwner(user: user, identityEpoch: epoch, opener: opens ? owner : nil))
            case .stopEverything:
                for owner in ownerRequests.waiting { answerOwner(owner, with: nil) }  // kept for the next engine
                for request in requests.values { request.cancel() }
                requests = [:]
                timers = EngineTimers()
                stopTicker()
            }
        }
        // B14: a refused write is an event too, fed before anything else can happen.
        for uid in refusedUIDs {
            hostCalls += run(machine.receive { $0.uidSaveRefused(uid) })
        }
        return hostCalls
    }

    /// Feeds a request's answer to the machine from the request's own task, and returns the
    /// first host callback the answer asked for (the reply's update, for one) for that task to
    /// perform itself: the reply reaches the presenter without waiting for another task to
    /// start. Nothing waits for a request's task, so awaiting the host there holds nothing up
    /// (H1); further callbacks start as tasks of their own. A cancelled request's task starts
    /// them all.
    private func answered(
        _ id: RequestID,
        _ event: (inout EngineMachine, _ canHandle: (AssistantAction) -> Bool) -> [EngineAction]
    ) -> HostCallbackRun? {
        requests[id] = nil  // answered: nothing is to cancel it now
        let handler = self.handler
        machine.wallNow = wallClock()
        machine.clockNow = elapsed()
        var calls = run(machine.receive { event(&$0) { handler?.canHandle($0) ?? false } })
        guard !Task.isCancelled, !calls.isEmpty else {
            start(calls)
            return nil
        }
        let (first, call) = calls.removeFirst()
        start(calls)
        return callback(first, call)
    }

    /// Starts each host callback as a task of its own: none waits for another (H1).
    private func start(_ calls: [(HostCallID, HostCall)]) {
        for (id, call) in calls {
            guard let run = callback(id, call) else { continue }
            spawn(.hostCallback) { [weak self] in await run.perform(reportingTo: WeakReference(self)) }
        }
    }

    /// Starts engine work as a task that the activity monitor counts until it ends, and that a
    /// shutdown waits for (unless it is a host callback: the host's own).
    @discardableResult
    nonisolated func spawn(_ kind: EngineTasks.Kind = .engine, _ body: @escaping @Sendable () async -> Void)
        -> Task<Void, Never>
    {
        tasks.start(kind, activity: activity, body)
    }

    /// Starts request `id`'s task, which must send nothing once the machine has let the
    /// request go (`.cancelRequest`) — above all when the caller that made it is cancelled
    /// (P4): its call feeds the machine that cancellation before it parks (`result(of:)`), in
    /// the same turn of the actor that started the request.
    ///
    /// Where the runtime has `Task.immediate` (`Task.startsOnCallingThread`) and the calling
    /// task is not cancelled, the task runs at once, on this thread, up to the transport, before
    /// the call that made the request returns: it saves the hop to another thread. Anywhere
    /// else — an older runtime, or a cancelled caller, whose cancellation must win — the task
    /// first waits for the actor, which the call that made the request holds until it has fed
    /// the machine everything it will feed in this turn, the cancellation included; a request
    /// the machine let go meanwhile is not in `requests` any more and is not sent. So P4 rests
    /// on the actor's ordering alone, never on `Task.immediate`.
    private func spawnRequest(_ id: RequestID, _ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if !Task.isCancelled, Task<Void, Never>.startsOnCallingThread {
            return tasks.start(.request, immediately: true, activity: activity, body)
        }
        return tasks.start(.request, activity: activity) { [weak self] in
            guard await self?.isRequested(id) == true else { return }
            await body()
        }
    }

    /// Whether request `id` is still wanted: started and neither cancelled nor answered.
    private func isRequested(_ id: RequestID) -> Bool { requests[id] != nil }

    // MARK: - Deadlines: one ticker

    /// Keeps one task asleep until the earliest deadline, or until an earlier instant where
    /// the ticker runs out (`letsTickerRunOut`): it then wakes with nothing due and sleeps again
    /// until the deadline. It never wakes after a deadline.
    private func rescheduleTicker() {
        guard let earliest = timers.earliest else {
            if !letsTickerRunOut { stopTicker() }
            return
        }
        if ticker != nil, let tickerTarget, tickerTarget == earliest || (letsTickerRunOut && tickerTarget < earliest) {
            return
        }
        ticker?.cancel()
        tickerTarget = earliest
        let wait = earliest - elapsed()
        let (clock, slice, activity) = (self.clock, tickerSlice, self.activity)
        tickerGeneration += 1
        let generation = tickerGeneration
        ticker = spawn { [weak self] in
            if wait > .zero {
                do { try await SlicedSleep.sleep(on: clock, for: wait, slice: slice) } catch { return }
            } else if let activity {
                // A deadline of this very instant (the end of a content window, B16) comes after
                // everything else that can run in it: on virtual time, once nothing else can.
                guard await activity.yieldUntilOthersIdle() else { return }
            }
            await self?.deadlinesPassed(ticker: generation)
        }
    }

    /// No ticker sleeps any more: no deadline is left, or the engine stopped.
    private func stopTicker() {
        ticker?.cancel()
        ticker = nil
        tickerTarget = nil
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

    /// What performing host call `id` takes: the host object, looked up now, so that the
    /// callback then runs without the engine (a presenter that never returns keeps nothing of
    /// the engine alive, H2). A presenter that went away is reported instead (O5); `nil` then.
    private func callback(_ id: HostCallID, _ call: HostCall) -> HostCallbackRun? {
        let target: HostCallbackRun.Target
        switch call {
        case .present(let opening, let snapshot, _, _):
            guard let presenter = presenters[opening]?.presenter else {
                handle { $0.presenterGone(id) }
                return nil
            }
            target = .present(presenter, snapshot)
        case .update(let opening, let snapshot, _):
            guard let presenter = presenters[opening]?.presenter else {
                handle { $0.presenterGone(id) }
                return nil
            }
            target = .update(presenter, snapshot)
        case .dismiss(let opening):
            // Still registered while it dismisses: the chat is closing, not gone (O5).
            target = .dismiss(presenters[opening]?.presenter, opening)
        case .handOver(let action):
            target = .handOver(handler, action)
        case .showInAppCampaign(let campaign):
            target = .campaign(inAppCampaignHandler, campaign)
        }
        return HostCallbackRun(id: id, target: target)
    }

    /// A host callback returned: the machine hears it; a dismissed chat's presenter is let go.
    fileprivate func hostCallbackReturned(_ run: HostCallbackRun) {
        if case .dismiss(_, let opening) = run.target { presenters[opening] = nil }
        handle { $0.hostCallFinished(run.id) }
    }
}

/// One host callback to perform, outside the engine: it holds the host object and the
/// engine only weakly, and reports its return as `hostCallFinished`.
struct HostCallbackRun: Sendable {
    enum Target: Sendable {
        case present(any AssistantPresenter, AssistantChatSnapshot)
        case update(any AssistantPresenter, AssistantChatSnapshot)
        case dismiss((any AssistantPresenter)?, OpeningID)
        case handOver((any AssistantActionHandler)?, AssistantAction)
        case campaign((@Sendable (InAppCampaign) async -> Void)?, InAppCampaign)
    }

    let id: HostCallID
    let target: Target

    /// Runs the callback marked as one (`HostCallbackScope`), so an engine call it makes never
    /// waits for the host (H1), then tells `engine`, if it is still there.
    func perform(reportingTo engine: WeakReference<AssistantEngine>) async {
        await HostCallbackScope.$isActive.withValue(true) {
            switch target {
            case .present(let presenter, let snapshot): await presenter.presentAssistant(snapshot)
            case .update(let presenter, let snapshot): await presenter.updateAssistant(snapshot)
            case .dismiss(let presenter, _): await presenter?.dismissAssistant()
            case .handOver(let handler, let action): await handler?.handle(action)
            case .campaign(let handler, let campaign): await handler?(campaign)
            }
        }
        await engine.object?.hostCallbackReturned(self)
    }
}

/// Marks the task of a host callback the engine is performing, so that an engine call made
/// from inside it (or from a task it starts with `Task { }`, which inherits the mark) never
/// waits for the host (H1).
enum HostCallbackScope {
    @TaskLocal static var isActive = false
}

// MARK: - The clients' side of the machine's requests

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
