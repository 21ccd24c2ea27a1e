/// The first-launch session gate (B8), as the flutter SDK's `SessionManager` keeps it: while
/// no Gravity session is known (SDK-managed mode: a cold start, a first launch, an identity
/// reset), the first Gravity request goes alone and every other one waits until it has
/// answered or failed, then carries the `uid`/`ses` it brought. Two first requests never
/// open two anonymous profiles, and the canonical uid never flips between two first answers.
///
/// A first request that fails (or brings no session) releases the gate: the next waiting
/// request then goes alone in its turn.
struct SessionGate: Sendable, Hashable {
    /// A request held at the gate, as decided, under the identity it was decided for.
    struct Waiting: Sendable, Hashable {
        let id: RequestID
        let call: GravityCall
        let identityEpoch: UInt64
    }

    /// The request that went alone and has not answered yet.
    private(set) var opener: RequestID?
    private(set) var waiting: [Waiting] = []

    /// A Gravity request is to be sent. `needsSession` is whether no session is known (and
    /// the identity is SDK-managed). Returns whether it goes now; if not, it waits here.
    mutating func requested(_ request: Waiting, needsSession: Bool) -> Bool {
        if opener != nil {
            waiting.append(request)  // B8: every other request waits for the first answer
            return false
        }
        if needsSession { opener = request.id }  // B8: the first one goes alone
        return true
    }

    /// A request the gate does not send goes alone as the session's first: a queued record
    /// raised before any identity was known, which the outbox sends (B8, DL7).
    mutating func opened(by id: RequestID) {
        precondition(opener == nil, "the gate has a first request already")
        opener = id
    }

    /// Request `id` answered or failed. Returns the waiting requests that go now: all of them
    /// once a session is known, else the next one alone.
    mutating func answered(_ id: RequestID, needsSession: Bool) -> [Waiting] {
        guard opener == id else { return [] }
        opener = nil
        guard !waiting.isEmpty else { return [] }
        guard needsSession else {
            defer { waiting = [] }
            return waiting
        }
        let next = waiting.removeFirst()
        opener = next.id  // B8: a failed first request releases the gate; the next goes alone
        return [next]
    }

    /// The identity changed: the old session's first request gates nothing any more, and what
    /// waited is to go through the gate again as the new identity (as flutter's generation
    /// bump releases its waiters to re-read the user).
    mutating func identityChanged() -> [Waiting] {
        defer { self = SessionGate() }
        return waiting
    }

    /// A request nobody waits for any more: if it is still at the gate it is never sent.
    mutating func withdrawn(_ id: RequestID) -> Bool {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return false }
        waiting.remove(at: index)
        return true
    }
}
