/// The public calls under way, for the actor: each call's ID, the caller parked for it, the
/// result of a call the machine completed before its caller parked, and the presenter an
/// `openAssistant` call offered. Mechanism only: the machine decides when a call completes.
///
/// One value, so that the actor reaches all of it in one access: a call that returns at once
/// (most do) touches it three times — begun, completed, its result taken — and each access to
/// an actor's stored property is checked for exclusivity at run time.
struct CallsInProgress {
    /// What completing a parked call hands back: the caller to resume, and whether it was
    /// counted as no longer runnable (replay quiescence).
    struct Resumption {
        let continuation: CheckedContinuation<CallResult, Never>
        let wasCounted: Bool
    }

    private var nextCall: UInt64 = 0
    /// Parked callers, and those of them no longer counted as runnable work.
    private var parked = CountedParking<CallID, CallResult>()
    /// The usual completion — a call decided in its own event, taken back right after — waits
    /// here, without a dictionary; any other (a page view begun now and awaited later) in
    /// `completedBeforeParking`.
    private var completedAtOnce: (id: CallID, result: CallResult)?
    private var completedBeforeParking: [CallID: CallResult] = [:]
    /// The presenter each `openAssistant` call still under way offered.
    private var offeredPresenters: [CallID: any AssistantPresenter] = [:]
    /// Calls that complete once what they send is kept, each until both its caller has taken
    /// it and the machine has completed it.
    private var keptCompletions: [CallID: (completion: KeptCompletion, taken: Bool, completed: Bool)] = [:]

    /// A new call's ID; `presenter` is kept under it until the call completes.
    mutating func begin(insideHostCallback: Bool, offering presenter: (any AssistantPresenter)?) -> CallID {
        nextCall += 1
        let id = CallID(value: nextCall, insideHostCallback: insideHostCallback)
        if let presenter { offeredPresenters[id] = presenter }
        return id
    }

    /// Call `id` completes once what it sends is kept, from the store's queue (DL5).
    mutating func completeWhenKept(_ id: CallID, activity: ActivityMonitor?) -> KeptCompletion {
        let completion = KeptCompletion(activity: activity)
        keptCompletions[id] = (completion, false, false)
        return completion
    }

    /// The kept completion of call `id`, if it completes that way, for the store's queue.
    func keptCompletion(of id: CallID) -> KeptCompletion? {
        keptCompletions.isEmpty ? nil : keptCompletions[id]?.completion
    }

    /// Kept completions still listed: for tests that none outlives its call.
    var keptCompletionCount: Int { keptCompletions.count }

    /// The kept completion of call `id` for its caller to await, if it completes that way.
    mutating func takeKeptCompletion(_ id: CallID) -> KeptCompletion? {
        guard !keptCompletions.isEmpty, let entry = keptCompletions[id] else { return nil }
        if entry.completed { keptCompletions[id] = nil } else { keptCompletions[id]?.taken = true }
        return entry.completion
    }

    /// What call `id` was completed with before its caller parked, if it was; taken.
    mutating func takeCompleted(_ id: CallID) -> CallResult? {
        if completedAtOnce?.id == id { return completedAtOnce.take()?.result }
        guard !completedBeforeParking.isEmpty else { return nil }  // the usual case: no hashing
        return completedBeforeParking.removeValue(forKey: id)
    }

    /// The caller of call `id` waits for it.
    mutating func park(_ id: CallID, _ continuation: CheckedContinuation<CallResult, Never>) {
        parked.park(id, continuation)
    }

    /// The caller of `id`, still parked, stops counting as runnable; `false` when the call
    /// completed meanwhile (it never waited).
    mutating func countParked(_ id: CallID) -> Bool {
        parked.countOut(id)
    }

    /// Call `id` ends with `result`: its parked caller to resume, or `nil` when it has not
    /// parked yet and the result is kept for it.
    mutating func complete(_ id: CallID, with result: CallResult) -> Resumption? {
        if !offeredPresenters.isEmpty { offeredPresenters[id] = nil }
        if !keptCompletions.isEmpty, let entry = keptCompletions[id] {
            // Its caller waits on the completion (or will): the first result is the one.
            if entry.taken { keptCompletions[id] = nil } else { keptCompletions[id]?.completed = true }
            entry.completion.complete(result)
            return nil
        }
        // No caller parked (the usual case, a call decided in its own event): no hashing.
        guard !parked.isEmpty, let (continuation, wasCounted) = parked.take(id) else {
            if completedAtOnce == nil {
                completedAtOnce = (id, result)
            } else {
                completedBeforeParking[id] = result
            }
            return nil
        }
        return Resumption(continuation: continuation, wasCounted: wasCounted)
    }

    /// The presenter that `openAssistant` call `call` offered, while it is under way.
    func presenter(offeredBy call: CallID) -> (any AssistantPresenter)? {
        offeredPresenters[call]
    }

    /// A shutdown lets go of every offered presenter (H2).
    mutating func dropOfferedPresenters() {
        offeredPresenters = [:]
    }
}
