// MARK: - What happened outside: answers, deadlines, cancelled callers

/// A Gravity answer, decoded by the client.
enum GravityResult: Sendable {
    case content(Result<GravityClient.Answer<ContentResponse>, WireFailure>)
    case campaigns(Result<GravityClient.Answer<[InAppCampaign]>, WireFailure>)

    /// The `user` the answer carried, if it was one.
    var user: GravityAnsweredUser? {
        switch self {
        case .content(.success(let answer)): return answer.user
        case .campaigns(.success(let answer)): return answer.user
        case .content(.failure), .campaigns(.failure): return nil
        }
    }

    /// The same answer without its `user`, for one that is not to be taken.
    var withoutUser: GravityResult {
        switch self {
        case .content(.success(var answer)):
            answer.user = nil
            return .content(.success(answer))
        case .campaigns(.success(var answer)):
            answer.user = nil
            return .campaigns(.success(answer))
        case .content(.failure), .campaigns(.failure): return self
        }
    }

    /// Whether the service answered: a sign the network is back (DL3).
    var succeeded: Bool {
        switch self {
        case .content(.success), .campaigns(.success): return true
        case .content(.failure), .campaigns(.failure): return false
        }
    }
}

/// A Shopping API answer, decoded by the client.
enum ShoppingResult: Sendable {
    case reply(Result<ReplyContent, WireFailure>)
    case history(Result<[HistoryMessage], WireFailure>)
    case feedback(Result<Void, WireFailure>)

    /// Whether the service answered: a sign the network is back (DL3).
    var succeeded: Bool {
        switch self {
        case .reply(.success), .history(.success), .feedback(.success): return true
        case .reply(.failure), .history(.failure), .feedback(.failure): return false
        }
    }
}

extension EngineMachine {
    /// A Gravity request answered; `identityEpoch` is the identity it was sent for.
    mutating func gravityAnswered(_ id: RequestID, _ answer: GravityResult, identityEpoch: UInt64) -> [EngineAction] {
        var answer = answer
        // B8: the profile a request sent as nobody opened is not taken over one known by now.
        if sentAsNobody.remove(id) != nil, !identity.wire.isNobody {
            answer = answer.withoutUser
        }
        guard let deadline = gravityInFlight.removeValue(forKey: id) else {
            // B13: it already ended at its deadline; the `user` it brings still counts (B9), its
            // in-app campaigns are not shown (B15).
            var actions = identityAnswered(answer.user, epoch: identityEpoch)
            actions.append(.log(.debug, "the answer of \(id) came after its deadline"))
            if case .campaigns(.success(let late)) = answer {
                actions += Self.campaignsDropped(late.value, "the answer came after its call's deadline")
            }
            return actions
        }
        return [.cancelTimer(.gravity(id))]
            + dispatchGravityAnswer(id, answer, identityEpoch: identityEpoch, deadline: deadline)
    }

    /// A Gravity request ended: with its answer, or at its deadline (B13).
    mutating func dispatchGravityAnswer(
        _ id: RequestID, _ answer: GravityResult, identityEpoch: UInt64, deadline: Duration
    ) -> [EngineAction] {
        let actions: [EngineAction]
        switch (id, answer) {
        case (.configuration(let preparation), .content(let result)):
            actions = configurationAnswered(preparation, result, identityEpoch: identityEpoch)
        case (.host(let call), .content(let result)):
            actions = contentAnswered(call, result, identityEpoch: identityEpoch)
        case (.contents(let merged), .content(let result)):
            actions = mergedContentAnswered(merged, result, identityEpoch: identityEpoch)
        case (.host(let call), .campaigns(let result)):
            actions = campaignsAnswered(call, result, identityEpoch: identityEpoch, deadline: deadline)
        default:
            preconditionFailure("\(id) cannot be answered with \(answer)")
        }
        return actions + sessionGateAnswered(id)  // B8: after its `user` was taken
    }

    /// A Shopping API request answered. `canHandle` is the action handler's synchronous
    /// answer for a reply's buttons (AC4); it does no I/O.
    mutating func shoppingAnswered(
        _ id: RequestID, _ answer: ShoppingResult, canHandle: (AssistantAction) -> Bool
    ) -> [EngineAction] {
        switch (id, answer) {
        case (.message(let tag), .reply(let result)):
            let enabled = (try? result.get()).map { Self.buttonsEnabled($0, canHandle: canHandle) } ?? []
            return replyAnswered(tag, result, buttonsEnabled: enabled)
        case (.history(let tag), .history(let result)):
            return historyAnswered(tag, result) { Self.buttonsEnabled($0, canHandle: canHandle) }
        case (.feedback(let dialog, let turn), .feedback(let result)):
            return feedbackAnswered(dialog: dialog, turn: turn, result)
        default:
            preconditionFailure("\(id) cannot be answered with \(answer)")
        }
    }

    /// A deadline passed.
    mutating func timerFired(_ id: TimerID) -> [EngineAction] {
        switch id {
        case .preparation(let preparation): return preparationDeadlinePassed(preparation)
        case .reply(let tag): return replyDeadlinePassed(tag)
        case .gravity(let request): return gravityDeadlinePassed(request)
        case .campaignDelay(let turn): return campaignDelayPassed(turn)
        case .contentWindow: return contentWindowEnded()
        }
    }

    /// A lifecycle event's or a queued record's `/event` answered (the outbox sends them): its
    /// `user` is adopted like any Gravity answer's, under the identity it was sent for (B9). One
    /// sent as nobody opened a profile of its own, taken only while the engine knows none: two
    /// such answers never flip the uid (B8).
    mutating func lifecycleEventAnswered(
        user: GravityAnsweredUser?, identityEpoch: UInt64, sentAsNobody: Bool = false
    ) -> [EngineAction] {
        if sentAsNobody, !identity.wire.isNobody { return [] }
        return identityAnswered(user, epoch: identityEpoch)
    }

    /// Which of a reply's buttons are offered: routed (AC3) and handled (AC4).
    static func buttonsEnabled(_ reply: ReplyContent, canHandle: (AssistantAction) -> Bool) -> [Bool] {
        reply.buttons.map { button in button.action.map(canHandle) ?? false }
    }
}
