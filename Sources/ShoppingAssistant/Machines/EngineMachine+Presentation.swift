// MARK: - Opening and closing (O1–O9, B6, PR10, AC5, AN7)

extension EngineMachine {
    /// `openAssistant` (O1–O4). `presenterAlive` is false when the presenter of a chat still
    /// shown has gone away: that chat is closed first (O5), not "already open". The call
    /// returns once the presenter has shown the chat.
    ///
    /// The first opening after a `.ready` preparation restores a stored dialog (D18);
    /// `canHandle` says which of its buttons are offered (AC4).
    mutating func openCalled(
        _ call: CallID, presenter: AssistantPresenterAvailability, presenterAlive: Bool,
        canHandle: (AssistantAction) -> Bool = { _ in false }
    ) -> [EngineAction] {
        var actions: [EngineAction] = []
        if !presentation.isClosed, !presenterAlive {
            actions.append(.log(.info, "the presenter went away: closing the chat"))
            actions += run(presentation.dismissed(nil))  // O5: presenter loss
        }
        switch presentation.openCalled(isReady: preparation.ready != nil, presenter: presenter) {
        case .refused(let refusal):
            return actions + [.log(.info, "openAssistant: \(refusal)"), .complete(call, .open(refusal))]
        case .opening(let opening, let opened):
            products.openingBegan()  // PR6: each opening hands out new refs
            presentingCall = call
            actions += restoreStoredDialog(canHandle: canHandle)  // D18–D20: before the first snapshot is made
            actions += run(opened)
            return actions + hold([.complete(call, .open(.opened))], until: .presented(opening))  // O1
        }
    }

    /// `closeAssistant` (O5): returns once the chat is closed and what waited for the close has
    /// been handed over. A message already sent is not cancelled (O8, D12).
    mutating func closeCalled(_ call: CallID) -> [EngineAction] {
        // O5: the lock is released only once the presenter has dismissed the chat.
        if !presentation.isClosed { return [.log(.info, "closing the chat: closeAssistant")] + close(call, .done) }
        return hold([.complete(call, .done)], until: .handedOver(afterCloses: presentation.closesHandedOver))
    }

    /// `assistantWasDismissed`: the presenter dismissed the chat by itself (the mobile "Back").
    /// Returns once the engine has taken the chat as closed; hand-overs go on by themselves.
    mutating func dismissedByPresenter(_ call: CallID) -> [EngineAction] {
        run(presentation.dismissed(nil)) + [.complete(call, .done)]  // O5: the mobile "Back"
    }

    /// `lockPresentation` / `unlockPresentation` (B6): idempotent, not counted.
    mutating func appLockChanged(locked: Bool) -> [EngineAction] {
        run(locked ? presentation.lockedByApp() : presentation.unlockedByApp())
    }

    /// Starts closing the chat; `caller` returns with `result` once it is closed and what waited
    /// for the close has been handed over (PR10, AC5).
    mutating func close(_ caller: CallID?, _ result: CallResult, thenHandOver action: AssistantAction? = nil)
        -> [EngineAction]
    {
        let closing = run(presentation.closeRequested(thenHandOver: action))
        guard let caller else { return closing }
        return closing
            + hold([.complete(caller, result)], until: .handedOver(afterCloses: presentation.closesHandedOver))
    }

    /// Performs what the presentation machine decided.
    mutating func run(_ actions: [PresentationMachine.Action]) -> [EngineAction] {
        var result: [EngineAction] = []
        for action in actions {
            switch action {
            case .notifyLocks(let locks):
                result += [.log(.info, "presentation lock: \(locks)"), .notifyLocks(locks)]
            case .present(let opening):
                guard let caller = presentingCall else { preconditionFailure("\(opening) is presented for no call") }
                _ = dialog.changes.take()  // the first snapshot is all new; count changes from here
                result.append(
                    hostCall(.present(opening, snapshot(), revision: dialog.revision, presenter: caller)))
            case .update(let opening):
                result += repliesShown()
                let changed = dialog.changes.take()
                result.append(
                    hostCall(.update(opening, snapshot().telling(changed: changed), revision: dialog.revision)))
            case .dismiss(let opening):
                result.append(hostCall(.dismiss(opening)))
            case .presented:
                presentingCall = nil
                let prepared = dialog.context?.start.prepared ?? preparation.lastReady
                result.append(
                    lifecycle(
                        .dialogOpen,
                        props: [
                            "threadId": dialog.context?.threadId, "selector": prepared?.selector,
                            "campaignId": prepared?.campaignId,
                        ]))
                result += repliesShown()  // AN7: the replies on the screen just presented
                result += releaseReached()  // O1: `openAssistant` returns
            case .closed:
                presentingCall = nil
                result.append(lifecycle(.dialogClose, props: ["threadId": dialog.context?.threadId]))
                products.transitionEnded()
                deliveredRevision = 0  // a new presentation starts with nothing delivered
                result += applyIdentityChangesWaitingForTheClose()  // AN3: after the old user's close
                result += releaseReached()  // deliveries stopped; the close is done
            case .handOver(let handOver):
                result += [
                    .log(.info, "handing \(handOver.name) to the action handler"), hostCall(.handOver(handOver)),
                ]
            case .handedOver:
                result += releaseReached()
            case .delivered(let revision):
                result += snapshotDelivered(revision: revision)
            }
        }
        return result
    }

    /// The impression URLs of replies shown for the first time (AN7).
    private mutating func repliesShown() -> [EngineAction] {
        // In two steps: `trackURLs(dialog.repliesShown())` reads the machine for the call
        // before the argument changes it, which Swift does on a copy of the whole machine.
        let shown = dialog.repliesShown()
        return trackURLs(shown)
    }
}
