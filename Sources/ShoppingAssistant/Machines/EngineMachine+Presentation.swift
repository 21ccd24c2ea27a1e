// MARK: - Opening and closing (O1–O9, B6, PR10, AC5, AN7)

extension EngineMachine {
    /// `openAssistant` (O1–O4). `presenterAlive` is false when the presenter of a chat still
    /// shown has gone away: that chat is closed first (O5), not "already open".
    mutating func openCalled(_ call: CallID, presenter: AssistantPresenterAvailability, presenterAlive: Bool)
        -> [EngineAction]
    {
        var actions: [EngineAction] = []
        if !presentation.isClosed, !presenterAlive {
            actions.append(.log(.info, "the presenter went away: closing the chat"))
            actions += run(presentation.dismissed(nil))  // O5: presenter loss
        }
        switch presentation.openCalled(call, isReady: preparation.ready != nil, presenter: presenter) {
        case .refused(let refusal):
            return actions + [.log(.info, "openAssistant: \(refusal)"), .complete(call, .open(refusal))]
        case .opening(let opened):
            products.openingBegan()  // PR6: each opening hands out new refs
            return actions + run(opened)
        }
    }

    /// `closeAssistant` (O5). A message already sent is not cancelled (O8, D12).
    mutating func closeCalled(_ call: CallID) -> [EngineAction] {
        // O5: the lock is released only once the presenter has dismissed the chat.
        if !presentation.isClosed { return [.log(.info, "closing the chat: closeAssistant")] + close(call, .done) }
        return [.complete(call, .done)]
    }

    /// `assistantWasDismissed`: the presenter dismissed the chat by itself (the mobile "Back").
    mutating func dismissedByPresenter(_ call: CallID) -> [EngineAction] {
        run(presentation.dismissed(nil)) + [.complete(call, .done)]  // O5: the mobile "Back"
    }

    /// The actor found the presenter gone when it was to be called for `opening` (O5).
    mutating func presenterGone(_ opening: OpeningID) -> [EngineAction] {
        [.log(.info, "the presenter went away: closing the chat")] + run(presentation.dismissed(opening))  // O5
    }

    /// `lockPresentation` / `unlockPresentation` (B6): idempotent, not counted.
    mutating func appLockChanged(locked: Bool) -> [EngineAction] {
        run(locked ? presentation.lockedByApp() : presentation.unlockedByApp())
    }

    /// A host callback the actor performed has returned.
    mutating func hostCallFinished(_ call: HostCall) -> [EngineAction] {
        switch call {
        case .present(let opening, _, let revision):
            return snapshotDelivered(revision: revision) + run(presentation.presentFinished(opening))
        case .update(let opening, _, let revision):
            return run(presentation.updateFinished(opening, revision: revision))
        case .dismiss(let opening):
            return run(presentation.dismissed(opening))
        case .handOver:
            return run(presentation.handOverFinished())
        case .showInAppCampaign(_, let caller):
            return campaignShown(for: caller)
        }
    }

    /// Starts closing the chat; `caller` returns with `result` once it is closed and what waited
    /// for the close has been handed over (PR10, AC5).
    mutating func close(_ caller: CallID?, _ result: CallResult, thenHandOver action: AssistantAction? = nil)
        -> [EngineAction]
    {
        run(
            presentation.closeRequested(
                by: caller.map { CloseWaiter(call: $0, result: result) }, thenHandOver: action))
    }

    /// Performs what the presentation machine decided.
    mutating func run(_ actions: [PresentationMachine.Action]) -> [EngineAction] {
        var result: [EngineAction] = []
        for action in actions {
            switch action {
            case .notifyLocks(let locks):
                result += [.log(.info, "presentation lock: \(locks)"), .notifyLocks(locks)]
            case .present(let opening):
                _ = dialog.changes.take()  // the first snapshot is all new; count changes from here
                result.append(.callHost(.present(opening, snapshot(), revision: dialog.revision)))
            case .update(let opening):
                result += repliesShown()
                let changed = dialog.changes.take()
                result.append(
                    .callHost(.update(opening, snapshot().telling(changed: changed), revision: dialog.revision)))
            case .dismiss(let opening):
                result.append(.callHost(.dismiss(opening)))
            case .opened(_, let callers):
                let prepared = dialog.context?.start.prepared ?? preparation.lastReady
                result.append(
                    lifecycle(
                        .dialogOpen,
                        props: [
                            "threadId": dialog.context?.threadId, "selector": prepared?.selector,
                            "campaignId": prepared?.campaignId,
                        ]))
                result += repliesShown()  // AN7: the replies on the screen just presented
                result += callers.map { .complete($0, .open(.opened)) }
            case .closed:
                result.append(lifecycle(.dialogClose, props: ["threadId": dialog.context?.threadId]))
                products.transitionEnded()
                result += deliveriesStopped()
                result += applyIdentityChangesWaitingForTheClose()  // AN3: after the old user's close
            case .handOver(let handOvers):
                for handOver in handOvers {
                    result += [
                        .log(.info, "handing \(handOver.name) to the action handler"), .callHost(.handOver(handOver)),
                    ]
                }
            case .closeFinished(let waiters):
                result += waiters.map { .complete($0.call, $0.result) }
            case .delivered(let revision):
                result += snapshotDelivered(revision: revision)
            }
        }
        return result
    }

    /// The impression URLs of replies shown for the first time (AN7).
    private mutating func repliesShown() -> [EngineAction] {
        trackURLs(dialog.repliesShown())
    }
}
