import Foundation

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

    private struct State {
        var queue: [Job] = []
        var draining = false
        var idleWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var cancelledEarly: Set<UInt64> = []
        var log: RingBuffer<TrackingRecord>
    }

    private let state: Locked<State>
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
            state.queue += jobs
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start {
            if let activity { activity.spawn { await self.drain() } } else { Task { await self.drain() } }
        }
    }

    /// Suspends until everything queued so far has been attempted, or the calling task is
    /// cancelled.
    func flush() async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.cancelledEarly.remove(id) != nil { return true }
                    if !state.draining && state.queue.isEmpty { return true }
                    state.idleWaiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() } else { activity?.end() }  // parked until drained
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.idleWaiters.removeValue(forKey: id) else {
                    state.cancelledEarly.insert(id)
                    return nil
                }
                return waiter
            }
            if let waiter {
                activity?.begin()
                waiter.resume()
            }
        }
    }

    private func drain() async {
        while true {
            // Takes the whole queue at once, in order: `removeFirst()` per job shifts the rest
            // of the array every time, which is quadratic when jobs arrive faster than they
            // are delivered (a burst of impressions). Jobs queued meanwhile form the next batch.
            let batch = state.withLock { state -> [Job] in
                var batch: [Job] = []
                swap(&batch, &state.queue)
                if batch.isEmpty { state.draining = false }
                return batch
            }
            guard !batch.isEmpty else { break }
            for job in batch {
                let record = await deliver(job)
                state.withLock { $0.log.append(record) }
            }
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.draining else { return [] }
            defer { state.idleWaiters = [:] }
            return Array(state.idleWaiters.values)
        }
        for waiter in waiters {
            activity?.begin()
            waiter.resume()
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
