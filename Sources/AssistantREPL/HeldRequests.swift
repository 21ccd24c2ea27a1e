import Foundation
import ShoppingAssistant

/// Requests held at the network seam of a session on virtual time, answered one at a time and
/// only when nothing else can run.
///
/// This is what gives every line a session prints one position. An in-process backend (the
/// demo store, a transcript's replay) answers at once, so without it the answer to one request
/// would race with everything else the same step set going — a tracking URL's failure with the
/// chat closing, an in-app campaign with the entry button — and the thread scheduler would
/// decide the order of the lines. Held here, an answer is an event of its own, like a deadline
/// of the clock: `VirtualTime` lets the first held request go only once everything else is
/// parked, waits until what that answer caused can no longer run, and only then lets the next
/// go. Which one goes first is decided by each request's rank (the caller's: a replay ranks by
/// the file's order of exchanges, the demo store by the request's text), never by which thread
/// got there first; of two equal ranks the one that arrived first goes first.
package final class HeldRequests: Sendable {
    /// Where a held request stands in the queue; lower goes first.
    package struct Rank: Sendable, Comparable {
        /// The caller's order (a replay: the exchange of the file that will answer it).
        package var order: Int
        /// Text that tells equal orders apart deterministically (the request as written).
        package var text: String

        package init(order: Int, text: String) {
            self.order = order
            self.text = text
        }

        package static func < (lhs: Rank, rhs: Rank) -> Bool {
            (lhs.order, lhs.text) < (rhs.order, rhs.text)
        }
    }

    /// How to rank a held request, asked each time one is to go: a replay's rank depends on
    /// what earlier answers bound.
    private struct Ranking: Sendable {
        let rank: @Sendable () -> Rank
    }

    private struct State: WaitingState {
        /// `true`: let go; `false`: the caller's task was cancelled while held.
        var waiters = ParkedCallers<Bool, Ranking>()
    }

    private let state = Locked(State())
    private let activity: ActivityMonitor

    package init(activity: ActivityMonitor) {
        self.activity = activity
    }

    /// How many requests are held.
    package var count: Int { state.withLock { $0.waiters.count } }

    /// Parks the calling request until `releaseFirst()` lets it go. Throws `CancellationError`
    /// when the caller's task is cancelled first (the engine stopped waiting for it).
    package func hold(rank: @escaping @Sendable () -> Rank) async throws {
        let released = await state.wait(cancelled: false, activity: activity) { _ in .park(Ranking(rank: rank)) }
        if !released { throw CancellationError() }
    }

    /// Lets the held request of the lowest rank go; false when none is held.
    @discardableResult
    package func releaseFirst() -> Bool {
        let waiting = state.withLock { $0.waiters.waiting }
        guard !waiting.isEmpty else { return false }
        // Ranked outside the lock: a rank reads its owner's state, under its owner's lock.
        let ranked = waiting.map { (ticket: $0.ticket, rank: $0.tag.rank()) }
        guard let first = ranked.min(by: { ($0.rank, $0.ticket) < ($1.rank, $1.ticket) }) else { return false }
        let taken = state.withLock { $0.waiters.take(tickets: [first.ticket]) }
        for waiter in taken {
            activity.begin()
            waiter.resume(returning: true)
        }
        return !taken.isEmpty
    }
}

/// A transport whose requests wait in `HeldRequests` before they reach `inner`, ranked by
/// their text: the demo store on virtual time, so that it decides (and counts its IDs) in an
/// order no scheduler changes.
struct HeldTransport: HTTPTransport {
    let inner: any HTTPTransport
    let requests: HeldRequests

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let text =
            "\(request.method.rawValue) \(request.url.absoluteString) "
            + String(decoding: request.body ?? Data(), as: UTF8.self)
        try await requests.hold { HeldRequests.Rank(order: 0, text: text) }
        return try await inner.send(request)
    }
}
