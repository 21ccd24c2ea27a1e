import Foundation

// MARK: - Preparation (P1–P8, C1–C8, G1, S4)

extension AssistantEngine {
    /// Prepares the assistant's start screen for this page (P1–P5).
    ///
    /// The latest call wins: an earlier call still in flight returns `.superseded` (P2). The
    /// timeout covers everything, including waiting for the canonical uid (P3, S4). Cancelling
    /// the calling task returns `.cancelled` (P4). It never calls `trackView` (E4) and never
    /// sends a message to the Shopping API (C8).
    public func prepareAssistant(
        assistantSelector: String, pageContext: PageContext, timeout: Duration = .seconds(10)
    ) async -> AssistantPrepareResult {
        nextPreparation += 1
        let id = PreparationID(value: nextPreparation)
        let registered = builder != nil && handler != nil
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AssistantPrepareResult, Never>) in
                prepareWaiters[id] = continuation
                runPreparation(
                    preparation.prepare(
                        id, selector: assistantSelector, pageContext: pageContext, timeout: timeout,
                        hostRegistered: registered))
                if Task.isCancelled { runPreparation(preparation.cancelled(id)) }
                // The caller parks until its result is decided; counted after the work it started.
                activity?.end()
            }
        } onCancel: {
            self.spawn { await self.preparationCancelled(id) }
        }
    }

    func preparationCancelled(_ id: PreparationID) {
        runPreparation(preparation.cancelled(id))
    }

    func runPreparation(_ actions: [PreparationMachine.Action]) {
        for action in actions {
            switch action {
            case .fetchConfiguration(let id, let selector, let pageContext):
                let epoch = identity.epoch
                let envelope = envelope(pageContext)
                let settings = contentSettings
                let gravity = self.gravity
                let task = spawn {
                    let result = await gravity.choose(selector: selector, settings: settings, envelope: envelope)
                    await self.configurationArrived(id, result, epoch: epoch)
                }
                preparationWork[id, default: []].append(task)
            case .startTimeout(let id, let duration):
                let clock = self.clock
                let task = spawn {
                    do { try await clock.sleep(for: duration) } catch { return }
                    await self.preparationTimedOut(id)
                }
                preparationWork[id, default: []].append(task)
            case .stopWork(let id):
                for task in preparationWork.removeValue(forKey: id) ?? [] { task.cancel() }
            case .finish(let id, let result):
                finishPreparation(id, result)
            case .trackContentLoad(let urls):
                enqueueURLs(urls)
            }
        }
    }

    private func configurationArrived(
        _ id: PreparationID, _ result: Result<GravityClient.Answer<ContentResponse>, WireFailure>, epoch: UInt64
    ) {
        if case .success(let answer) = result { absorb(answer.user, epoch: epoch) }
        runPreparation(
            preparation.configurationFetched(id, result.map(\.value), uidKnown: identity.canonicalUID != nil))
    }

    private func preparationTimedOut(_ id: PreparationID) {
        runPreparation(preparation.timeoutFired(id))
    }

    private func finishPreparation(_ id: PreparationID, _ result: AssistantPrepareResult) {
        logger.log(.info, "\(id) finished: \(result)")
        if result == .ready, let ready = preparation.ready {
            // P8: another selector than the current dialog's is an assistant change (D13).
            if let current = dialog.context, current.prepared.selector != ready.selector {
                let actions = dialog.end(.assistantChange)
                let page = current.prepared.pageContext
                spawn { await self.runDialog(actions, identity: nil, page: page) }
            }
            latestReady = ready
        }
        if let waiter = prepareWaiters.removeValue(forKey: id) {
            activity?.begin()
            waiter.resume(returning: result)
        }
    }
}
