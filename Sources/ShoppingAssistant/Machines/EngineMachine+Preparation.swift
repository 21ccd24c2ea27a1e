// MARK: - Preparation (G1, P1–P8, C1–C8, S4)

extension EngineMachine {
    /// `prepareAssistant` (P1–P5). The latest call wins (P2); the deadline covers waiting for
    /// the canonical uid too (P3, S4); no request without a builder and a handler (G1).
    mutating func prepareCalled(_ call: CallID, selector: String, page: PageContext, timeout: Duration)
        -> [EngineAction]
    {
        nextPreparation += 1
        let id = PreparationID(value: nextPreparation)
        preparers[id] = call
        return run(
            preparation.prepareCalled(
                id, selector: selector, pageContext: page, timeout: timeout,
                hostRegistered: hasBuilder && hasHandler))
    }

    /// The configuration's `/choose` of preparation `id` answered (C1–C6).
    mutating func configurationAnswered(
        _ id: PreparationID, _ result: Result<GravityClient.Answer<ContentResponse>, WireFailure>,
        identityEpoch: UInt64
    ) -> [EngineAction] {
        var actions: [EngineAction] = []
        if case .success(let answer) = result { actions += identityAnswered(answer.user, epoch: identityEpoch) }
        let decided = preparation.configurationAnswered(
            id, result.map(\.value), uidKnown: identity.canonicalUID != nil)
        if decided.isEmpty { actions.append(.log(.debug, "stale /choose answer of \(id) dropped")) }  // P2
        return actions + run(decided)
    }

    /// The deadline of preparation `id` passed (P3).
    mutating func preparationDeadlinePassed(_ id: PreparationID) -> [EngineAction] {
        run(preparation.deadlinePassed(id))
    }

    /// A `prepareAssistant` caller's task was cancelled (P4).
    mutating func prepareCancelled(_ call: CallID) -> [EngineAction] {
        guard let id = preparers.first(where: { $0.value == call })?.key else { return [] }
        return run(preparation.callerCancelled(id))  // P4
    }

    /// The canonical uid became known or changed; a preparation waiting for it may finish (S4).
    mutating func identityAnswered(_ user: GravityAnsweredUser?, epoch: UInt64) -> [EngineAction] {
        var actions: [EngineAction] = []
        if epoch == identity.epoch, let uid = user?.uid, !uid.isEmpty { uidToReport = .some(uid) }  // B14
        for change in identity.answered(user, epoch: epoch) {
            switch change {
            case .persist(let uid): actions.append(.persistUID(uid))  // B3
            case .resolved: actions += run(preparation.identityResolved())  // S4
            }
        }
        return actions
    }

    /// Performs what the preparation machine decided.
    mutating func run(_ actions: [PreparationMachine.Action]) -> [EngineAction] {
        var result: [EngineAction] = []
        for action in actions {
            switch action {
            case .fetchConfiguration(let id, let selector, let page):
                result += requestContent(.configuration(id), selector: selector, page: page)  // B16
            case .startTimeout(let id, let duration):
                result.append(.startTimer(.preparation(id), after: duration))
            case .stopWork(let id):
                result += [.cancelTimer(.preparation(id))] + cancelGravity(.configuration(id))
            case .trackContentLoad(let urls):
                result += trackURLs(urls)  // B7
            case .finish(let id, let outcome):
                result.append(.log(.info, "\(id) finished: \(outcome)"))
                if outcome == .ready { result += assistantChangeIfAny() }  // P8
                guard let call = preparers.removeValue(forKey: id) else {
                    preconditionFailure("\(id) finished twice")
                }
                result.append(.complete(call, .prepare(outcome)))
            }
        }
        return result
    }

    /// P8: a ready preparation of another selector than the current dialog's is an assistant
    /// change (D13): the dialog ends, reported with the ended dialog's page.
    private mutating func assistantChangeIfAny() -> [EngineAction] {
        // P8: another selector than the current dialog's.
        if let ready = preparation.ready, let stored = restorable, stored.selector != ready.selector {
            restorable = nil  // D20: a stored dialog of another assistant is replaced at once
            return [.log(.info, "the stored dialog is of another assistant: forgotten"), .forgetStoredDialog]
        }
        guard let ready = preparation.ready, let current = dialog.context,
            current.start.prepared.selector != ready.selector
        else { return [] }
        return endDialog(.assistantChange)
    }
}
