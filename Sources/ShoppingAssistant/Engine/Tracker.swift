import Foundation
import Synchronization

/// One entry of the analytics log, for inspection (REPL `:log`, tests).
public struct TrackingRecord: Sendable, Hashable, CustomStringConvertible {
    /// The channel a record went through, so a test can tell lifecycle events from tracking URLs.
    public enum Kind: String, Sendable, Hashable {
        /// A lifecycle event through Gravity `/event` (AN1).
        case event
        /// A tracking URL request (AN5, AN7).
        case url
    }

    /// Which channel delivered it.
    public let kind: Kind
    /// The event type, or the tracking URL.
    public let name: String
    /// The SDK-managed `user.uid` the record was sent as (AN3); `nil` for a manual user.
    public let uid: String?
    /// The app's own id (`user.custom`) the record was sent as, for a manual user (B3, AN3).
    public let customUserId: String?
    /// The event's `customProps`; empty for a tracking URL.
    public let properties: [String: String]
    /// `nil` on success, else the error code.
    public let failure: String?

    /// One line: kind, name, user and properties sorted by key, and the failure if any.
    public var description: String {
        let props = properties.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let outcome = failure.map { " FAILED \($0)" } ?? ""
        let user = customUserId.map { "custom=\($0)" } ?? "uid=\(uid ?? "-")"
        return "\(kind.rawValue) \(name) \(user)\(props.isEmpty ? "" : " " + props)\(outcome)"
    }
}

/// Delivers lifecycle events and tracking URLs in order, each bound to the identity it
/// happened under (AN3, AN8). Delivery continues after the chat closes and across identity
/// changes; nothing is retried forever and nothing is promised at process exit (AN4, AN9).
final class Tracker: Sendable {
    enum Job: Sendable, Hashable {
        /// A lifecycle event, with the envelope (user, page, options) it is bound to (AN3).
        case event(GravityCustomEvent, envelope: GravityClient.Envelope)
        /// A tracking URL, requested with `GET` and no key; `user` is who it is logged for.
        case url(String, user: GravityUser)
    }

    private struct State: WaitingState {
        var queue: [Job] = []
        var draining = false
        /// Jobs ever queued, and jobs attempted so far (in order): a flush waits for the count
        /// of jobs queued before it.
        var queued: UInt64 = 0
        var attempted: UInt64 = 0
        /// The engine shut down: nothing more is queued or delivered (H2).
        var stopped = false
        var drainTask: Task<Void, Never>?
        /// Flushes, each waiting for `attempted` to reach its count.
        var waiters = Waiters<Void, UInt64>()
        var log: RingBuffer<TrackingRecord>
    }

    private let state: Locked<State>
    /// Jobs queued and not yet taken by the drain, read without the lock by a drain that waits
    /// for more work, so that it does not contend with `enqueue` for the lock.
    private let pending = Atomic<Int>(0)
    private let gravity: GravityClient
    private let call: WireCall

    private let activity: ActivityMonitor?

    /// - Parameter logCapacity: how many of the latest records the log keeps, so a
    ///   long-lived engine does not grow with its history.
    init(gravity: GravityClient, call: WireCall, activity: ActivityMonitor?, logCapacity: Int) {
        self.gravity = gravity
        self.call = call
        self.activity = activity
        state = Locked(State(log: RingBuffer(capacity: logCapacity)))
    }

    /// The latest records, oldest first.
    var log: [TrackingRecord] { state.withLock { Array($0.log) } }

    func enqueue(_ jobs: [Job]) {
        guard !jobs.isEmpty else { return }
        let start = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.queue += jobs
            state.queued += UInt64(jobs.count)
            pending.add(jobs.count, ordering: .releasing)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        guard start else { return }
        // Holds the tracker: what is queued is still delivered if the engine goes away without a
        // shutdown (no promise at process exit, AN4, AN9).
        let body: @Sendable () async -> Void = { await self.drain() }
        let task = activity.map { $0.spawn(body) } ?? Task(operation: body)
        state.withLock { state in
            if state.draining { state.drainTask = task }
        }
    }

    /// Suspends until everything queued before this call has been attempted (later jobs do
    /// not hold it up), or the calling task is cancelled, or the tracker stopped.
    func flush() async {
        await state.wait(cancelled: (), activity: activity) { state in
            state.attempted >= state.queued || state.stopped ? .proceed(()) : .park(state.queued)
        }
    }

    /// Drops whatever is still queued, stops the delivery under way and lets every flush
    /// return; nothing is delivered afterwards (H2).
    func stop() {
        let (task, waiters) = state.withLock { state -> (Task<Void, Never>?, [Waiters<Void, UInt64>.Waiter]) in
            state.stopped = true
            state.queue = []
            state.attempted = state.queued
            defer { state.drainTask = nil }
            return (state.drainTask, state.waiters.takeAll())
        }
        task?.cancel()
        resume(waiters)
    }

    /// How many times an idle drain yields for more work before it ends: impressions come in
    /// bursts (a carousel scrolled into view), and a drain that is still there takes the next
    /// job without a task being started and a thread woken for it.
    private static let lingerYields = 4

    private func drain() async {
        while true {
            // Takes the whole queue at once, in order: `removeFirst()` per job shifts the rest
            // of the array every time, which is quadratic when jobs arrive faster than they
            // are delivered (a burst of impressions). Jobs queued meanwhile form the next batch.
            let batch = state.withLock { state -> [Job] in
                var batch: [Job] = []
                swap(&batch, &state.queue)
                return batch
            }
            if batch.isEmpty {
                // Waits a moment for more, reading the count without the lock.
                var yields = 0
                while pending.load(ordering: .acquiring) == 0, yields < Self.lingerYields, !Task.isCancelled {
                    await Task.yield()
                    yields += 1
                }
                if pending.load(ordering: .acquiring) > 0, !Task.isCancelled { continue }
                let ended = state.withLock { state -> Bool in
                    guard state.queue.isEmpty else { return false }  // came in just now
                    state.draining = false
                    state.drainTask = nil
                    return true
                }
                if ended || Task.isCancelled { break }
                continue
            }
            pending.subtract(batch.count, ordering: .relaxed)
            for job in batch {
                if Task.isCancelled { return }
                let record = await deliver(job)
                let done = state.withLock { state -> [Waiters<Void, UInt64>.Waiter] in
                    guard !state.stopped else { return [] }
                    state.log.append(record)
                    state.attempted += 1
                    let attempted = state.attempted
                    return state.waiters.take { $0 <= attempted }
                }
                resume(done)
            }
        }
    }

    private func resume(_ waiters: [Waiters<Void, UInt64>.Waiter]) {
        for waiter in waiters {
            activity?.begin()
            waiter.resume(returning: ())
        }
    }

    private func deliver(_ job: Job) async -> TrackingRecord {
        switch job {
        case .event(let event, let envelope):
            let result = await gravity.event([event], envelope: envelope)
            return record(
                .event, event.type, user: envelope.user, properties: event.customProps, result.map { _ in () })
        case .url(let string, let user):
            guard let url = URL(string: string) else {
                return TrackingRecord(
                    kind: .url, name: string, uid: user.uid, customUserId: user.custom, properties: [:],
                    failure: "invalid_url")
            }
            let result = await call.perform(
                HTTPRequest(
                    method: .get, url: url, maximumResponseBytes: EndpointLimits.trackingBytes,
                    redirectPolicy: EndpointLimits.trackingRedirects))
            return record(.url, string, user: user, properties: [:], result.map { _ in () })
        }
    }

    /// The log entry of one attempt. A failure is logged as an error: nothing else reports a
    /// lost event or tracking URL, and nothing retries it (AN9).
    private func record(
        _ kind: TrackingRecord.Kind, _ name: String, user: GravityUser, properties: [String: String],
        _ result: Result<Void, WireFailure>
    ) -> TrackingRecord {
        let failure: String?
        switch result {
        case .success: failure = nil
        case .failure(.cancelled): failure = "cancelled"
        case .failure(.failed(let error, _)):
            failure = error.code.rawValue
            call.logger.log(.error, "\(kind.rawValue) \(name) not delivered: \(error)")
        }
        return TrackingRecord(
            kind: kind, name: name, uid: user.uid, customUserId: user.custom, properties: properties, failure: failure)
    }
}
