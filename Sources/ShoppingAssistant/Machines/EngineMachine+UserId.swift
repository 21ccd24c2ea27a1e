// MARK: - The uid, for the app (B14)

extension EngineMachine {
    /// `getUserId()`: the canonical uid at once when it is known, or when no first answer is on
    /// its way; else once the session gate's first request has answered or failed (B8).
    mutating func userIdRequested(_ call: CallID) -> [EngineAction] {
        guard identity.canonicalUID == nil, sessionGate.opener != nil else {
            return [.complete(call, .userId(identity.canonicalUID))]
        }
        userIdCalls.append(call)
        return []
    }

    /// `restoreUserId(_:)`: a uid the app kept elsewhere becomes the SDK-managed identity, an
    /// identity change unless it is the current one (B14).
    mutating func userIdRestoreCalled(_ call: CallID, uid: String) -> [EngineAction] {
        guard identity.isChange(toRestoredUID: uid) else {
            // The uid coming back: written again if the store refused it (B14).
            return (identity.uidRestoredAgain() ? [.persistUID(uid)] : []) + [.complete(call, .done)]
        }
        return changeIdentity(.restoreUID(uid), call: call)
    }

    /// The identity store refused to write `uid` (B14): the engine goes on with it in memory —
    /// requests carry it, `getUserId()` and the listener report it — and writes it again when
    /// an answer brings it back. The store reported why through its warning handler.
    mutating func uidSaveRefused(_ uid: String?) -> [EngineAction] {
        identity.saveRefused(uid)
        let line: LogLine =
            uid == nil
            ? "the identity store refused to forget the uid; the next uid Gravity answers with is written over it"
            : "the identity store refused the uid; kept in memory, written again when Gravity answers with it"
        return [.log(.info, line)]
    }

    /// After every event: the app's listener hears of a uid an answer brought, a restored uid,
    /// or `nil` after a reset, unless it was the last one it heard (never the same uid twice in
    /// a row; reading the stored uid at start is no change); and `getUserId()` callers get their
    /// answer once the uid is known or no first answer is on its way any more (B14).
    mutating func userIdSettled() -> [EngineAction] {
        var actions: [EngineAction] = []
        if let uid = uidToReport {
            uidToReport = nil
            if reportedUID != .some(uid) {
                reportedUID = .some(uid)
                actions.append(.notifyUserId(uid))
            }
        }
        if !userIdCalls.isEmpty, identity.canonicalUID != nil || sessionGate.opener == nil {
            actions += userIdCalls.map { .complete($0, .userId(identity.canonicalUID)) }
            userIdCalls = []
        }
        return actions
    }
}
