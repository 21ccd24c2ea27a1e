import Foundation
import ShoppingAssistant

/// A transport that answers only what a test told it to expect, in the spirit of an
/// exhaustive test store: any other request is a failure, and `unmetExpectations` lists
/// expected exchanges that never happened. "Nothing was resent" becomes a real assertion.
///
/// With `analytics: .answeredAutomatically` it answers Gravity's `/visit` and `/event` posts
/// and tracking `GET`s itself when no expectation takes them, so a test about a dialog does
/// not have to script every lifecycle event; they are still recorded (`analyticsRequests`).
public final class ScriptedTransport: HTTPTransport, Sendable {
    /// Who answers the analytics the engine sends on its own: lifecycle events, page views and
    /// tracking URLs. They accompany almost every call, so scripting them is noise unless the
    /// test is about them.
    public enum Analytics: Sendable {
        /// Only expectations answer them, like any other request: a test that is about
        /// analytics asserts every one.
        case scripted
        /// An expectation still answers them when one matches (a `/visit` announcing an in-app
        /// campaign, a tracking URL that fails); otherwise `/visit` and `/event` get `200` with
        /// `{"campaigns":[]}` (no identity change, no campaign) and a tracking `GET` gets
        /// `204`. They never count as unexpected.
        case answeredAutomatically
    }

    /// How an expected exchange ends.
    public enum Reply: Sendable {
        /// Answer at once.
        case respond(HTTPResponse)
        /// Answer after `latency` on the injected clock.
        case respondAfter(Duration, HTTPResponse)
        /// Fail at once, as the network would.
        case fail(HTTPTransportError)
        /// Wait until the test calls `complete(_:with:)` or `fail(_:with:)`, or the caller is cancelled.
        case deferred
    }

    /// Which requests an expectation accepts.
    public struct Matcher: Sendable, CustomStringConvertible {
        /// Names the expectation in `unmetExpectations` and in failures.
        public let description: String
        let accepts: @Sendable (HTTPRequest) -> Bool

        /// A matcher for anything the ready-made ones do not cover; `description` should say what it
        /// accepts, since that is what a failing test prints.
        public init(_ description: String, accepts: @escaping @Sendable (HTTPRequest) -> Bool) {
            self.description = description
            self.accepts = accepts
        }

        /// Method and a path suffix (`/choose`, `/v1/messages`), the common case.
        public static func request(_ method: HTTPRequest.Method, pathSuffix: String) -> Matcher {
            Matcher("\(method.rawValue) …\(pathSuffix)") { $0.method == method && $0.url.path.hasSuffix(pathSuffix) }
        }

        /// A request whose path ends with `pathSuffix` and whose JSON body satisfies `body`.
        public static func request(
            _ method: HTTPRequest.Method, pathSuffix: String, where body: @escaping @Sendable ([String: Any]) -> Bool
        ) -> Matcher {
            Matcher("\(method.rawValue) …\(pathSuffix) (with body condition)") { request in
                guard request.method == method, request.url.path.hasSuffix(pathSuffix), let data = request.body,
                    let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
                else { return false }
                return body(object)
            }
        }

        /// Exactly this URL, as for tracking pixels.
        public static func get(_ url: String) -> Matcher {
            Matcher("GET \(url)") { $0.method == .get && $0.url.absoluteString == url }
        }
    }

    /// A handle on one expectation, for deferred replies and for reading what was sent.
    public struct Exchange: Sendable, Hashable {
        /// The order in which the expectation was registered, from 1.
        public let id: Int
    }

    private struct Expectation {
        let id: Int
        let matcher: Matcher
        let reply: Reply
        var request: HTTPRequest?
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var pendingOutcome: Result<HTTPResponse, any Error>?
    }

    private struct State {
        var expectations: [Expectation] = []
        var nextID = 0
        var requests: [HTTPRequest] = []
        var unexpected: [HTTPRequest] = []
        var answeredAutomatically: [HTTPRequest] = []
    }

    private let state = Locked(State())
    private let requestWaiters = Waitlist()
    private let clock: any Clock<Duration>
    private let onUnexpected: @Sendable (String) -> Void
    private let analytics: Analytics
    /// Told when a deferred exchange parks and when it is answered, so an `EngineTestBed`
    /// knows that a task waiting for the test's answer cannot run.
    private let activity: ActivityMonitor?

    /// - Parameters:
    ///   - clock: the clock latencies are measured on (the test's manual clock).
    ///   - analytics: whether `/visit`, `/event` and tracking `GET`s need expectations.
    ///   - onUnexpected: called with a description of each unexpected request; pass
    ///     `{ Issue.record(Comment(rawValue: $0)) }` to fail the running test at once.
    public convenience init(
        clock: any Clock<Duration>, analytics: Analytics = .scripted,
        onUnexpected: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.init(clock: clock, analytics: analytics, activity: nil, onUnexpected: onUnexpected)
    }

    /// The same, counting deferred exchanges as parked work on `activity`.
    package init(
        clock: any Clock<Duration>, analytics: Analytics = .scripted, activity: ActivityMonitor?,
        onUnexpected: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.clock = clock
        self.analytics = analytics
        self.activity = activity
        self.onUnexpected = onUnexpected
    }

    /// Expects one request accepted by `matcher` and answers it with `reply`.
    @discardableResult
    public func expect(_ matcher: Matcher, _ reply: Reply) -> Exchange {
        state.withLock { state in
            state.nextID += 1
            state.expectations.append(Expectation(id: state.nextID, matcher: matcher, reply: reply))
            return Exchange(id: state.nextID)
        }
    }

    /// Every request received, in order, expected or not.
    public var requests: [HTTPRequest] { state.withLock { $0.requests } }

    /// Requests nobody expected.
    public var unexpectedRequests: [HTTPRequest] { state.withLock { $0.unexpected } }

    /// Analytics answered without an expectation (`analytics: .answeredAutomatically`), in
    /// order, for a test that checks some of them without scripting all.
    public var analyticsRequests: [HTTPRequest] { state.withLock { $0.answeredAutomatically } }

    /// Expectations that no request has met yet.
    public var unmetExpectations: [String] {
        state.withLock { $0.expectations.filter { $0.request == nil }.map(\.matcher.description) }
    }

    /// The request that met an expectation, if it arrived.
    public func request(for exchange: Exchange) -> HTTPRequest? {
        state.withLock { $0.expectations.first { $0.id == exchange.id }?.request }
    }

    /// Suspends until at least `count` requests have arrived in total. Returns `false` instead
    /// if the waiting task is cancelled first (a test's time limit), so a request that never
    /// comes fails the test rather than hanging it.
    @discardableResult
    public func waitForRequests(_ count: Int) async -> Bool {
        await requestWaiters.wait { [state] in state.withLock { $0.requests.count >= count } }
    }

    /// Answers a deferred exchange.
    public func complete(_ exchange: Exchange, with response: HTTPResponse) {
        finish(exchange, with: .success(response))
    }

    /// Fails a deferred exchange.
    public func fail(_ exchange: Exchange, with error: HTTPTransportError) {
        finish(exchange, with: .failure(error))
    }

    /// Answers with the first unused expectation that accepts `request`; an unexpected request is
    /// recorded, reported to `onUnexpected` and fails as `.cannotConnect`, so the engine cannot
    /// take it for a success.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let automatic = analytics == .answeredAutomatically ? Self.automaticAnswer(to: request) : nil
        let (expectation, answered) = state.withLock { state -> (Expectation?, HTTPResponse?) in
            state.requests.append(request)
            guard let index = state.expectations.firstIndex(where: { $0.request == nil && $0.matcher.accepts(request) })
            else {
                if let automatic {
                    state.answeredAutomatically.append(request)
                    return (nil, automatic)
                }
                state.unexpected.append(request)
                return (nil, nil)
            }
            state.expectations[index].request = request
            return (state.expectations[index], nil)
        }
        requestWaiters.recheck()
        if let answered { return answered }
        guard let expectation else {
            let text = "Unexpected request: \(request.method.rawValue) \(request.url.absoluteString)"
            onUnexpected(text)
            throw HTTPTransportError.cannotConnect(text)
        }
        switch expectation.reply {
        case .respond(let response):
            return response
        case .respondAfter(let latency, let response):
            try await clock.sleep(for: latency)
            return response
        case .fail(let error):
            throw error
        case .deferred:
            return try await awaitDeferred(expectation.id)
        }
    }

    /// The answer for an analytics request, or `nil` for any other: Gravity's page views and
    /// events (by path) and tracking pixels (every `GET` but a Shopping history read).
    private static func automaticAnswer(to request: HTTPRequest) -> HTTPResponse? {
        let path = request.url.path
        switch request.method {
        case .post where path.hasSuffix("/visit") || path.hasSuffix("/event"):
            return HTTPResponse(
                status: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"campaigns":[]}"#.utf8))
        case .get where !path.contains("/v1/threads/"):
            return HTTPResponse(status: 204, headers: [:], body: Data())
        default:
            return nil
        }
    }

    private func awaitDeferred(_ id: Int) async throws -> HTTPResponse {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let ready = state.withLock { state -> Result<HTTPResponse, any Error>? in
                    guard let index = state.expectations.firstIndex(where: { $0.id == id }) else { return nil }
                    if let outcome = state.expectations[index].pendingOutcome { return outcome }
                    state.expectations[index].continuation = continuation
                    return nil
                }
                if let ready {
                    continuation.resume(with: ready)
                } else {
                    activity?.end()  // parked until the test answers
                }
            }
        } onCancel: {
            finish(Exchange(id: id), with: .failure(CancellationError()))
        }
    }

    private func finish(_ exchange: Exchange, with outcome: Result<HTTPResponse, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            guard let index = state.expectations.firstIndex(where: { $0.id == exchange.id }) else { return nil }
            if let continuation = state.expectations[index].continuation {
                state.expectations[index].continuation = nil
                return continuation
            }
            if state.expectations[index].pendingOutcome == nil { state.expectations[index].pendingOutcome = outcome }
            return nil
        }
        guard let continuation else { return }
        activity?.begin()  // runnable again, counted before it is resumed
        continuation.resume(with: outcome)
    }
}

extension HTTPResponse {
    /// A JSON response from a literal object, for scripts.
    public static func json(_ status: Int = 200, _ object: Any) -> HTTPResponse {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }

    /// A response with a raw text body.
    public static func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [:], body: Data(body.utf8))
    }
}
