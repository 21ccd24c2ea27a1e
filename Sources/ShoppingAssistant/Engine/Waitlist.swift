/// Parks callers until a condition over their owner's state holds, or until their task is
/// cancelled — whichever comes first.
///
/// Every "wait until …" of the package and its test support goes through one of these, so a
/// waiter never outlives a cancelled task: a test whose time limit passes is cancelled by the
/// testing library, and its waits return instead of hanging the run.
///
/// The owner calls `recheck()` after every change of the state the conditions read, and never
/// while holding its own lock (conditions take it).
package final class Waitlist: Sendable {
    private struct Entry {
        let id: UInt64
        let isMet: @Sendable () -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var nextID: UInt64 = 0
        var entries: [Entry] = []
        var cancelledEarly: Set<UInt64> = []
    }

    private let state = Locked(State())

    package init() {}

    /// Returns `true` once `isMet` holds, or `false` if the calling task was cancelled first.
    @discardableResult
    package func wait(until isMet: @escaping @Sendable () -> Bool) async -> Bool {
        if isMet() { return true }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let cancelled = state.withLock { state -> Bool in
                    if state.cancelledEarly.remove(id) != nil { return true }
                    state.entries.append(Entry(id: id, isMet: isMet, continuation: continuation))
                    return false
                }
                if cancelled {
                    continuation.resume(returning: false)
                } else {
                    recheck()  // the condition may have become true while registering
                }
            }
        } onCancel: {
            let entry = state.withLock { state -> Entry? in
                guard let index = state.entries.firstIndex(where: { $0.id == id }) else {
                    state.cancelledEarly.insert(id)
                    return nil
                }
                return state.entries.remove(at: index)
            }
            entry?.continuation.resume(returning: false)
        }
    }

    /// Wakes every waiter whose condition now holds.
    package func recheck() {
        let parked = state.withLock { $0.entries }
        guard !parked.isEmpty else { return }
        let met = Set(parked.filter { $0.isMet() }.map(\.id))
        guard !met.isEmpty else { return }
        let ready = state.withLock { state -> [Entry] in
            let ready = state.entries.filter { met.contains($0.id) }
            state.entries.removeAll { met.contains($0.id) }
            return ready
        }
        for entry in ready { entry.continuation.resume(returning: true) }
    }

    /// How many callers are parked.
    package var count: Int { state.withLock { $0.entries.count } }
}
