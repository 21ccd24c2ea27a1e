import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The endpoints the engine calls, told apart by method and path (wire.md).
enum WireEndpoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Gravity `POST /choose`.
    case choose
    /// Gravity `POST /visit`.
    case visit
    /// Gravity `POST /event`.
    case event
    /// Shopping `POST /v1/messages`.
    case messages
    /// Shopping `GET /v1/threads/{id}/messages`.
    case history
    /// Shopping `POST /v1/feedback`.
    case feedback
    /// A tracking URL `GET`.
    case tracking

    init(_ request: HTTPRequest) {
        let path = request.url.path
        switch (request.method, path) {
        case (.post, _) where path.hasSuffix("/choose"): self = .choose
        case (.post, _) where path.hasSuffix("/visit"): self = .visit
        case (.post, _) where path.hasSuffix("/event"): self = .event
        case (.post, _) where path.hasSuffix("/v1/messages"): self = .messages
        case (.post, _) where path.hasSuffix("/v1/feedback"): self = .feedback
        case (.get, _) where path.contains("/v1/threads/") && path.hasSuffix("/messages"): self = .history
        default: self = .tracking
        }
    }

    var testDescription: String { rawValue }
}

/// A transport that answers every endpoint through a responder, can fail the next request to
/// an endpoint with an armed answer, and can hold requests until the test releases them.
/// `EngineHarness` puts it in front of the scripted transport, to which it forwards when it
/// has no responder.
///
/// It tells the activity monitor when a request parks and when it is woken, so "the engine
/// has settled" (`EngineHarness.settle`) means everything left is waiting on the clock or on a
/// held request.
final class RoutingTransport: HTTPTransport, Sendable {
    /// How a request is answered.
    enum Answer: Sendable {
        case respond(HTTPResponse)
        case fail(HTTPTransportError)
        /// Park until `release(_:with:)`, or until the caller is cancelled.
        case hold
        /// Let another transport answer (the scripted one).
        case forward(to: any HTTPTransport)
    }

    /// A request the transport holds.
    struct Held: Sendable {
        let id: Int
        let endpoint: WireEndpoint
        let request: HTTPRequest
    }

    typealias Responder = @Sendable (WireEndpoint, HTTPRequest) -> Answer

    private struct Parked {
        let held: Held
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var outcome: Result<HTTPResponse, any Error>?
    }

    private struct State {
        var requests: [(endpoint: WireEndpoint, request: HTTPRequest)] = []
        var armed: [WireEndpoint: (answer: Answer, remaining: Int)] = [:]
        var parked: [Parked] = []
        var nextID = 0
    }

    private let state = Locked(State())
    private let activity: ActivityMonitor
    private let responder: Responder

    init(activity: ActivityMonitor, responder: @escaping Responder) {
        self.activity = activity
        self.responder = responder
    }

    /// Answers the next `times` requests to `endpoint` with `answer` instead of the
    /// responder's: once by default, as many times as a call is tried (DL1) for a fault that
    /// persists through its retries.
    func arm(_ answer: Answer, for endpoint: WireEndpoint, times: Int = 1) {
        state.withLock { $0.armed[endpoint] = times > 0 ? (answer, times) : nil }
    }

    /// Every request received, in order.
    var requests: [(endpoint: WireEndpoint, request: HTTPRequest)] { state.withLock { $0.requests } }

    /// Requests to one endpoint, in order.
    func requests(to endpoint: WireEndpoint) -> [HTTPRequest] {
        requests.filter { $0.endpoint == endpoint }.map(\.request)
    }

    /// Requests held and not yet released, in arrival order.
    var held: [Held] { state.withLock { $0.parked.filter { $0.outcome == nil }.map(\.held) } }

    /// Ends a held request with a response or a transport error.
    func release(_ id: Int, with outcome: Result<HTTPResponse, HTTPTransportError>) {
        finish(id, outcome.mapError { $0 as any Error })
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let endpoint = WireEndpoint(request)
        let armed = state.withLock { state -> Answer? in
            state.requests.append((endpoint, request))
            guard let (answer, remaining) = state.armed[endpoint] else { return nil }
            state.armed[endpoint] = remaining > 1 ? (answer, remaining - 1) : nil
            return answer
        }
        switch armed ?? responder(endpoint, request) {
        case .respond(let response):
            return response
        case .fail(let error):
            throw error
        case .forward(let transport):
            return try await transport.send(request)
        case .hold:
            let id = state.withLock { state -> Int in
                state.nextID += 1
                state.parked.append(Parked(held: Held(id: state.nextID, endpoint: endpoint, request: request)))
                return state.nextID
            }
            return try await park(id)
        }
    }

    private func park(_ id: Int) async throws -> HTTPResponse {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let ready = state.withLock { state -> Result<HTTPResponse, any Error>? in
                    guard let index = state.parked.firstIndex(where: { $0.held.id == id }) else {
                        return .failure(CancellationError())
                    }
                    if let outcome = state.parked[index].outcome {
                        state.parked.remove(at: index)
                        return outcome
                    }
                    state.parked[index].continuation = continuation
                    return nil
                }
                if let ready {
                    continuation.resume(with: ready)
                } else {
                    activity.end()  // parked: no longer runnable until released
                }
            }
        } onCancel: {
            finish(id, .failure(CancellationError()))
        }
    }

    private func finish(_ id: Int, _ outcome: Result<HTTPResponse, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            guard let index = state.parked.firstIndex(where: { $0.held.id == id }) else { return nil }
            if let continuation = state.parked[index].continuation {
                state.parked.remove(at: index)
                return continuation
            }
            if state.parked[index].outcome == nil { state.parked[index].outcome = outcome }
            return nil
        }
        guard let continuation else { return }
        activity.begin()  // runnable again, counted before it is resumed
        continuation.resume(with: outcome)
    }
}
