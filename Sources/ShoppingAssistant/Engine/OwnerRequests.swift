/// Who a queued record raised before any identity was known leaves as (DL7), and whether it
/// goes alone as the session's first request (B8), in which case its end is reported back
/// under `opener`.
struct QueuedOwner: Sendable {
    let user: GravityUser
    let identityEpoch: UInt64
    let opener: UInt64?
}

/// The outbox's questions about owners that the machine has not answered yet, numbered; an
/// answer given in the same event as the question never parks its asker.
struct OwnerRequests {
    private var questions = CountedParking<UInt64, QueuedOwner?>()
    private var counter: UInt64 = 0

    /// The number of the next question.
    mutating func next() -> UInt64 {
        counter += 1
        return counter
    }

    mutating func add(_ owner: UInt64, _ continuation: CheckedContinuation<QueuedOwner?, Never>) {
        questions.park(owner, continuation)
    }

    /// Marks a question still unanswered as parked; returns whether it was.
    mutating func park(_ owner: UInt64) -> Bool { questions.countOut(owner) }

    /// The question's continuation and whether it waited parked; `nil` if answered already.
    mutating func take(_ owner: UInt64) -> (CheckedContinuation<QueuedOwner?, Never>, Bool)? {
        questions.take(owner).map { ($0.continuation, $0.wasCounted) }
    }

    /// The questions not answered yet.
    var waiting: [UInt64] { questions.keys }
}
