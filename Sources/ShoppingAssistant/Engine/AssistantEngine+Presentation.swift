import Foundation

// MARK: - Opening and closing (O1–O9, B6)

extension AssistantEngine {
    /// Presents the chat on `presenter` (O1–O4). The assistant takes its own presentation
    /// lock first and releases it only once the chat is fully closed (O5, O6).
    public func openAssistant(presenter: any AssistantPresenter) async -> AssistantOpenResult {
        if presentation.state != .closed, self.presenter == nil {
            // O5: the presenter of the open chat went away; the chat is closed, not "already open".
            logger.log(.info, "the presenter went away: closing the chat")
            await runPresentation(presentation.dismissed())
        }
        let (result, actions) = presentation.open(isReady: preparation.ready != nil, presenter: presenter.availability)
        guard result == .opened else {
            logger.log(.info, "openAssistant: \(result)")
            return result
        }
        self.presenter = presenter
        ledger.beginOpening()
        lastPublished = nil
        await runPresentation(actions)
        return result
    }

    /// Closes the chat (O5). A message already sent is not cancelled (O8, D12).
    public func closeAssistant() async {
        await closeChat(reason: "closeAssistant")
    }

    /// The presenter dismissed the chat by itself (the mobile "Back"), or is going away (O5).
    public func assistantWasDismissed() async {
        await runPresentation(presentation.dismissed())
    }

    func closeChat(reason: String) async {
        let actions = presentation.close()
        if !actions.isEmpty { logger.log(.info, "closing the chat: \(reason)") }
        await runPresentation(actions)
    }

    func runPresentation(_ actions: [PresentationMachine.Action]) async {
        for action in actions {
            switch action {
            case .notifyLocks:
                runLocks([action])
            case .present:
                let snapshot = makeSnapshot()
                lastPublished = snapshot
                delivering = true
                await presenter?.presentAssistant(snapshot)
                await deliverPending()
                trackDialogOpen()
                await publish()  // anything that changed while presenting, and reply impressions
            case .dismiss:
                if let presenter { await presenter.dismissAssistant() }
                await runPresentation(presentation.dismissed())
            case .closed:
                presenter = nil
                lastPublished = nil
                track(type: "chat_dialog_close", props: ["threadId": dialog.context?.threadId])
                ledger.endTransition()
                await runAfterClose()
            }
        }
    }

    /// Hands queued navigation to the host, once each, after the close completed (PR10, AC5).
    private func runAfterClose() async {
        while !afterClose.isEmpty {
            let action = afterClose.removeFirst()
            logger.log(.info, "handing \(action.name) to the action handler")
            await handler?.handle(action)
        }
    }

    private func trackDialogOpen() {
        let prepared = dialog.context?.prepared ?? latestReady
        track(
            type: "chat_dialog_open",
            props: [
                "threadId": dialog.context?.threadId, "selector": prepared?.selector,
                "campaignId": prepared?.campaignId,
            ])
    }

    /// Pushes the current snapshot to an open presenter, if it changed, and requests the
    /// impression URLs of replies shown for the first time (AN7).
    func publish() async {
        guard case .open = presentation.state else { return }
        guard presenter != nil else {
            logger.log(.info, "the presenter went away: closing the chat")
            await runPresentation(presentation.dismissed())  // O5: presenter loss
            return
        }
        let urls = dialog.markRepliesShown()
        enqueueURLs(urls)
        let snapshot = makeSnapshot()
        guard snapshot != lastPublished else { return }
        lastPublished = snapshot
        // A presenter call runs off the actor, and the actor may publish again meanwhile: one
        // delivery at a time, and the newest waiting snapshot next, so snapshots never arrive
        // out of order (a skipped intermediate state is fine: each snapshot is complete).
        pendingSnapshot = snapshot
        guard !delivering else { return }
        delivering = true
        await deliverPending()
    }

    /// Delivers waiting snapshots until none is left; the caller has set `delivering`.
    private func deliverPending() async {
        while let snapshot = pendingSnapshot, let presenter {
            pendingSnapshot = nil
            await presenter.updateAssistant(snapshot)
        }
        pendingSnapshot = nil
        delivering = false
    }
}
