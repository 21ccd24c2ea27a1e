/// The identity rules of B3 and S3, as a value type.
///
/// Two modes, as in the base SDK. SDK-managed: the `uid` Gravity returns is persisted and sent
/// back as `user.uid`, `ses` is kept for the process. Manual, after `setUser(userId:sessionId:)`:
/// the app's id travels as `user.custom`, never as `uid`; the `uid` Gravity returns for it is
/// still the canonical one the assistant uses (S3), held for that identity only and never
/// written over the SDK-managed stored uid.
///
/// A store that refuses a write (B14) changes nothing here but `unsaved`: the uid stays the
/// identity in memory, and is written again when an answer brings it back.
struct IdentityState: Sendable, Hashable {
    /// What absorbing an answer's `user` calls for.
    enum Action: Sendable, Hashable {
        /// Persist the SDK-managed uid (B3), or write it again after the store refused it (B14).
        case persist(String)
        /// The canonical uid just became known: a preparation waiting for it may finish (S4).
        case resolved
    }

    struct ManualUser: Sendable, Hashable {
        let userId: String
        let sessionId: String?
    }

    /// SDK-managed uid, persisted; the canonical uid in managed mode.
    private(set) var managedUID: String?
    /// The identity store refused the last write of `managedUID` (`nil` after a reset): the
    /// store still holds an older value, and the uid is written again when it comes back (B14).
    private(set) var unsaved = false
    /// The session Gravity returned in managed mode; runtime only.
    private(set) var managedSes: String?
    private(set) var manual: ManualUser?
    /// The session Gravity returned for a manual user whose app gave none.
    private(set) var manualSes: String?
    /// The canonical `user.uid` Gravity returned for the current identity (S3).
    private(set) var canonicalUID: String?
    /// Increases on every identity change; refs, events and requests carry it.
    private(set) var epoch: UInt64 = 1
    /// What Gravity requests send as `user` (wire.md § Gravity API V2): kept, not made per
    /// request, so that every event and tracking URL of the identity shares one.
    private(set) var wire: GravityUser

    init(storedUID: String?) {
        managedUID = storedUID
        canonicalUID = storedUID
        wire = GravityUser(uid: storedUID)
    }

    /// No Gravity session is known for the current identity yet: the first Gravity request
    /// opens one alone (B8). A manual user whose app gave a session id has one; one whose app
    /// gave none takes the session of Gravity's first answer (`manualSes`), so it waits too.
    var needsSession: Bool {
        guard let manual else { return managedSes == nil }
        return (manual.sessionId ?? manualSes) == nil
    }

    /// Makes `wire` say what the fields say now; called at the end of every change. An answer
    /// that changes nothing (most do) keeps the user it has.
    private mutating func userChanged() {
        let (uid, custom, ses): (String?, String?, String?) =
            if let manual { (nil, manual.userId, manual.sessionId ?? manualSes) } else { (managedUID, nil, managedSes) }
        guard uid != wire.uid || custom != wire.custom || ses != wire.ses else { return }
        wire = GravityUser(uid: uid, custom: custom, ses: ses)
    }

    /// Takes the `user` of an answer to a request made under `epoch`; an answer to a request of
    /// an older identity is ignored, so a late answer never restores a replaced uid.
    mutating func answered(_ user: GravityAnsweredUser?, epoch requestEpoch: UInt64) -> [Action] {
        guard requestEpoch == epoch, let user else { return [] }  // B3, AN3
        defer { userChanged() }
        if let ses = user.ses, !ses.isEmpty {
            if manual == nil { managedSes = ses } else if manual?.sessionId == nil { manualSes = ses }
        }
        guard let uid = user.uid, !uid.isEmpty else { return [] }
        var actions: [Action] = canonicalUID == nil ? [.resolved] : []
        canonicalUID = uid
        // B14: a uid the store refused is written again each time an answer brings it back.
        if manual == nil, managedUID != uid || unsaved {
            managedUID = uid
            unsaved = false
            actions.insert(.persist(uid), at: 0)
        }
        return actions
    }

    /// The identity store refused to write `uid` (B14). It stays the identity in memory; the
    /// next answer that brings it writes it again. A refusal of a value that is not the managed
    /// uid any more (a later change wrote another) changes nothing.
    mutating func saveRefused(_ uid: String?) {
        guard uid == managedUID else { return }
        unsaved = true
    }

    /// Whether `restoreUserId` with this uid would be an identity change (B14).
    func isChange(toRestoredUID uid: String) -> Bool { manual != nil || managedUID != uid }

    /// `restoreUserId` with the current uid: no change, but it is that uid coming back, so one
    /// whose write the store refused is written again (B14). Returns whether to write it.
    mutating func uidRestoredAgain() -> Bool {
        defer { unsaved = false }
        return unsaved
    }

    /// Whether `setUser` with this id would be an identity change.
    func isChange(toUser userId: String) -> Bool { manual?.userId != userId }

    /// `setUser(userId:sessionId:)`. Returns true when this is an identity change (B3); the same
    /// id with another session only replaces the session.
    mutating func userSet(userId: String, sessionId: String?) -> Bool {
        defer { userChanged() }
        if let manual, manual.userId == userId {
            self.manual = ManualUser(userId: userId, sessionId: sessionId)
            return false
        }
        manual = ManualUser(userId: userId, sessionId: sessionId)
        manualSes = nil
        canonicalUID = nil  // known again only from Gravity's answer (S3)
        epoch += 1
        return true
    }

    /// `restoreUserId` (B14): the SDK-managed identity of a uid the app kept elsewhere; the
    /// custom user is dropped and no session is known, so the session gate (B8) holds the next
    /// requests until Gravity answers. Returns whether this is an identity change: the same
    /// SDK-managed uid again is not.
    mutating func uidRestored(_ uid: String) -> Bool {
        guard isChange(toRestoredUID: uid) else { return false }
        defer { userChanged() }
        manual = nil
        manualSes = nil
        managedUID = uid
        unsaved = false  // the restore writes it
        managedSes = nil
        canonicalUID = uid
        epoch += 1
        return true
    }

    /// An explicit reset to a new anonymous, SDK-managed identity.
    mutating func resetRequested() {
        defer { userChanged() }
        manual = nil
        manualSes = nil
        managedUID = nil
        unsaved = false  // the reset writes `nil`
        managedSes = nil
        canonicalUID = nil
        epoch += 1
    }
}
