// MARK: - Content calls made together (B16)

extension EngineMachine {
    /// A content call's `/choose` — a host's `getContentBySelector` or a preparation's
    /// configuration — waits for the rest of its instant, so that the calls made with it leave
    /// in one request (B16). The first call of an instant starts the timer that ends it: no
    /// length at all, so a call alone waits for no time on the engine's clock.
    mutating func requestContent(_ id: RequestID, selector: String, page: PageContext) -> [EngineAction] {
        let call = ContentBatcher.Call(
            id: id, selector: selector, settings: settings.contentSettings, envelope: envelope(page),
            identityEpoch: identity.epoch)
        return contentBatcher.called(call) ? [.startTimer(.contentWindow, after: .zero)] : []
    }

    /// The instant of the waiting content calls ended: they leave, one request per envelope and
    /// wave, each through the session gate (B8).
    mutating func contentWindowEnded() -> [EngineAction] {
        var actions: [EngineAction] = []
        for departure in contentBatcher.windowEnded() {
            if case .chooseTogether(let items, _) = departure.call {
                let selectors = items.map(\.selector).joined(separator: ", ")
                actions.append(.log(.debug, "content calls made together leave as one /choose: \(selectors)"))
            }
            actions += sendGravity(departure.id, departure.call)
        }
        return actions
    }

    /// The identity is about to change: the calls of the instant leave now, as the identity
    /// they were made under, so that no call is ever merged with one of the next identity (B16).
    mutating func contentWindowEndedEarly() -> [EngineAction] {
        guard contentBatcher.isWindowOpen else { return [] }
        return [.cancelTimer(.contentWindow)] + contentWindowEnded()
    }

    /// A merged `/choose` answered: its `user` is taken once (B9), then each call gets the
    /// entries of its own selector — none: an empty answer — exactly as an answer of its own,
    /// with its load tracking (B7) and the preparation's configuration rules (C4).
    mutating func mergedContentAnswered(
        _ merged: UInt64, _ result: Result<GravityClient.Answer<ContentResponse>, WireFailure>,
        identityEpoch: UInt64
    ) -> [EngineAction] {
        var actions: [EngineAction] = []
        if case .success(let answer) = result { actions += identityAnswered(answer.user, epoch: identityEpoch) }
        for call in contentBatcher.answered(merged) {
            let own = result.map { answer in
                GravityClient.Answer(
                    value: ContentResponse(data: answer.value.data.filter { $0.selector == call.selector }),
                    user: nil)
            }
            switch call.id {
            case .host(let caller): actions += contentAnswered(caller, own, identityEpoch: identityEpoch)
            case .configuration(let preparation):
                actions += configurationAnswered(preparation, own, identityEpoch: identityEpoch)
            default: preconditionFailure("\(call.id) is not a content call")
            }
        }
        return actions
    }

    /// Nobody waits for content call `id` any more: one still in its instant never leaves; one of
    /// a merged request leaves the others their answer, and the request is let go with its last
    /// call. `nil` when the call left as a request of its own.
    mutating func withdrawContent(_ id: RequestID) -> [EngineAction]? {
        let withdrawal = contentBatcher.withdrawn(id)
        if withdrawal != .notHere, case .host(let call) = id { hostRequests[call] = nil }  // nothing will answer it
        switch withdrawal {
        case .notHere: return nil
        case .fromWindow, .fromMerged(_, wasLast: false): return []
        case .fromMerged(let merged, wasLast: true): return cancelGravity(.contents(merged))
        }
    }
}
