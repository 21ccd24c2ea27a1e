import Dispatch
import Synchronization

/// Where the tracker's tasks run: one serial queue for the whole process, so that deliveries
/// of tracking never take more than one core, however many lanes and engines there are.
///
/// A burst of impressions (a carousel scrolled into view) queues dozens of tracking URLs at
/// once. Delivered on the shared pool, up to four lanes each kept a thread busy, and on a
/// two-core machine the host calls that queued them got a third of a core (figure 3 of the
/// bench). Lanes still overlap where they wait for the network — an `await` of the transport
/// gives the queue to the next lane — so a stalled host still delays nothing else (B13).
///
/// The queue also runs the trackers' drains (`drainWhenIdle`): a drain waits until the queue
/// has nothing else to run, or for `patience` jobs at most, so that one drain moves a whole
/// burst into the lanes and the engine does not hand each impression over on its own. A
/// lane waiting for a stalled host is suspended, not queued: it never holds a drain back.
final class TrackingExecutor: TaskExecutor {
    static let shared = TrackingExecutor()

    /// Jobs that may run before a drain that was asked for, when the queue never empties.
    static let patience = 4

    private let queue = DispatchQueue(label: "ShoppingAssistant.tracking", qos: .utility)
    /// Jobs submitted and not yet finished.
    private let submitted = Atomic<Int>(0)
    /// The drains asked for, and whether there are any: set after a drain joins the list, read
    /// after each job (both sequentially consistent, with `submitted`: a drain asked for while
    /// the last job finishes is either seen by that job or finds the queue empty and submits
    /// itself — never neither).
    private let drains = Locked<[Drain]>([])
    private let drainsWanted = Atomic<Bool>(false)
    /// Jobs finished since drains were wanted; touched on the queue only.
    private let jobsSinceWanted = Atomic<Int>(0)

    /// Boxed: see `Locked` on why a bare closure is never its value.
    private struct Drain: Sendable {
        let run: @Sendable () -> Void
    }

    private init() {}

    /// Runs `drain` on the queue once it has nothing else to run, or after `patience` jobs:
    /// at once if it is idle now.
    func drainWhenIdle(_ drain: @escaping @Sendable () -> Void) {
        drains.withLock { $0.append(Drain(run: drain)) }
        drainsWanted.store(true, ordering: .sequentiallyConsistent)
        if submitted.load(ordering: .sequentiallyConsistent) == 0 { submit { self.runDrains() } }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        submit { job.runSynchronously(on: executor) }
    }

    private func submit(_ body: @escaping @Sendable () -> Void) {
        submitted.add(1, ordering: .sequentiallyConsistent)
        queue.async {
            body()
            self.finished()
        }
    }

    /// After each job: the drains run when it was the last one queued, or the queue has been
    /// busy for `patience` jobs since they were asked for.
    private func finished() {
        let left = submitted.subtract(1, ordering: .sequentiallyConsistent).newValue
        guard drainsWanted.load(ordering: .sequentiallyConsistent) else { return }
        let ran = jobsSinceWanted.add(1, ordering: .relaxed).newValue
        if left == 0 || ran >= Self.patience { runDrains() }
    }

    private func runDrains() {
        drainsWanted.store(false, ordering: .sequentiallyConsistent)
        jobsSinceWanted.store(0, ordering: .relaxed)
        let due = drains.withLock { drains -> [Drain] in
            defer { drains = [] }
            return drains
        }
        for drain in due { drain.run() }
    }
}
