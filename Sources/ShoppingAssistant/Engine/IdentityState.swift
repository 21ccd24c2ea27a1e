/// The identity rules of B3 and S3, as a value type.
struct IdentityState: Sendable, Hashable {
    struct ManualUser: Sendable, Hashable {
        let userId: String
        let sessionId: String?
    }

    /// SDK-managed uid, persisted; also the canonical uid in managed mode.
    private(set) var managedUID: String?
    private(set) var manual: ManualUser?
    private(set) var ses: String?
    /// The canonical `user.uid` Gravity returned for the current identity (S3).
    private(set) var canonicalUID: String?
    /// Increases on every identity change; refs, events and requests carry it.
    private(set) var epoch: UInt64 = 1

    init(storedUID: String?) {
        managedUID = storedUID
        canonicalUID = storedUID
    }

    /// What Gravity requests send as `user`.
    var wire: GravityIdentity {
        if let manual { return GravityIdentity(uid: manual.userId, ses: manual.sessionId ?? ses) }
        return GravityIdentity(uid: managedUID, ses: ses)
    }

    /// Takes `user` from a response made under `epoch`. Returns the uid to persist, if any.
    mutating func absorb(_ user: GravityUser?, epoch requestEpoch: UInt64) -> (persist: String?, resolved: Bool) {
        guard requestEpoch == epoch, let user else { return (nil, false) }
        if let ses = user.ses, !ses.isEmpty { self.ses = ses }
        guard let uid = user.uid, !uid.isEmpty else { return (nil, false) }
        let wasUnknown = canonicalUID == nil
        canonicalUID = uid
        var persist: String?
        if manual == nil, managedUID != uid {
            managedUID = uid
            persist = uid
        }
        return (persist, wasUnknown)
    }

    /// Whether `setUser` with this id would be an identity change.
    func isChange(toUser userId: String) -> Bool { manual?.userId != userId }

    /// `setUser(userId:sessionId:)`. Returns true when this is an identity change (B3).
    mutating func setUser(userId: String, sessionId: String?) -> Bool {
        if let manual, manual.userId == userId {
            self.manual = ManualUser(userId: userId, sessionId: sessionId)
            return false
        }
        manual = ManualUser(userId: userId, sessionId: sessionId)
        ses = nil
        canonicalUID = nil  // known again only from Gravity's answer (S3)
        epoch += 1
        return true
    }

    /// An explicit reset to a new anonymous, SDK-managed identity.
    mutating func reset() {
        manual = nil
        managedUID = nil
        ses = nil
        canonicalUID = nil
        epoch += 1
    }
}
