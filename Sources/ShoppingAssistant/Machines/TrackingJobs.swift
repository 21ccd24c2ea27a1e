/// The jobs of one `.track` action, in queue order: never empty, and a single job — an
/// impression, the usual case, many a second when a carousel scrolls — takes no array of its
/// own. Equal batches hold equal jobs in the same order.
struct TrackingJobs: Hashable, Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
    private let head: TrackingJob
    private let tail: [TrackingJob]

    /// One job.
    init(_ job: TrackingJob) {
        head = job
        tail = []
    }

    /// `jobs` in order, or `nil` when there are none: an empty `.track` cannot be written.
    init?(_ jobs: some Collection<TrackingJob>) {
        guard let head = jobs.first else { return nil }
        self.head = head
        tail = Array(jobs.dropFirst())
    }

    init(arrayLiteral jobs: TrackingJob...) {
        guard let batch = TrackingJobs(jobs) else { preconditionFailure("a .track action with no job") }
        self = batch
    }

    var startIndex: Int { 0 }
    var endIndex: Int { tail.count + 1 }
    subscript(position: Int) -> TrackingJob { position == 0 ? head : tail[position - 1] }

    /// `jobs` first, then these.
    func after(_ jobs: [TrackingJob]) -> TrackingJobs {
        TrackingJobs(jobs + self) ?? self
    }
}

/// What the engine hands to delivery, bound to who and where it happened (AN3, AN8).
enum TrackingJob: Sendable, Hashable {
    /// A lifecycle event, with the envelope (user, page, options) it is bound to (AN3), and
    /// the identity it was sent for, under which its answer's `user` is taken (B9).
    indirect case event(GravityCustomEvent, envelope: GravityClient.Envelope, identityEpoch: UInt64)
    /// A tracking URL, requested with `GET`; `user` is who it is logged for.
    case url(TrackingURL, user: GravityUser)
}
