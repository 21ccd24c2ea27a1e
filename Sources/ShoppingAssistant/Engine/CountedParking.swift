/// Callers parked on the actor under a key, and which of them no longer count as runnable work
/// (replay quiescence): a caller parks, is counted out once the event it started has run
/// without answering it, and whoever resumes it counts it back in first.
struct CountedParking<Key: Hashable, Value> {
    private var continuations: [Key: CheckedContinuation<Value, Never>] = [:]
    private var counted: Set<Key> = []

    var isEmpty: Bool { continuations.isEmpty }

    /// The keys of the callers still parked.
    var keys: [Key] { Array(continuations.keys) }

    mutating func park(_ key: Key, _ continuation: CheckedContinuation<Value, Never>) {
        continuations[key] = continuation
    }

    /// The caller under `key`, still parked, stops counting as runnable; `false` when it was
    /// resumed meanwhile (it never waited).
    mutating func countOut(_ key: Key) -> Bool {
        guard continuations[key] != nil else { return false }
        counted.insert(key)
        return true
    }

    /// The caller parked under `key`, and whether it was counted out; `nil` when none is.
    mutating func take(_ key: Key) -> (continuation: CheckedContinuation<Value, Never>, wasCounted: Bool)? {
        guard let continuation = continuations.removeValue(forKey: key) else { return nil }
        return (continuation, counted.remove(key) != nil)
    }
}
