/// The jobs of one `.track` action, in queue order: never empty, and a single job — an
/// impression, the usual case, many a second when a carousel scrolls — takes no array of its
/// own (figure 3 of the bench). Equal batches hold equal jobs in the same order.
struct TrackingJobs: Hashable, Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
    private let head: Tracker.Job
    private let tail: [Tracker.Job]

    /// One job.
    init(_ job: Tracker.Job) {
        head = job
        tail = []
    }

    /// `jobs` in order, or `nil` when there are none: an empty `.track` cannot be written.
    init?(_ jobs: some Collection<Tracker.Job>) {
        guard let head = jobs.first else { return nil }
        self.head = head
        tail = Array(jobs.dropFirst())
    }

    init(arrayLiteral jobs: Tracker.Job...) {
        guard let batch = TrackingJobs(jobs) else { preconditionFailure("a .track action with no job") }
        self = batch
    }

    var startIndex: Int { 0 }
    var endIndex: Int { tail.count + 1 }
    subscript(position: Int) -> Tracker.Job { position == 0 ? head : tail[position - 1] }

    /// `jobs` first, then these.
    func after(_ jobs: [Tracker.Job]) -> TrackingJobs {
        TrackingJobs(jobs + self) ?? self
    }
}
