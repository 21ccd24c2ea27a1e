import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

/// The calls the engine makes, told apart by method, path and (for `/choose`) selector.
enum SocketEndpoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `POST /choose` for the assistant's configuration, by `prepareAssistant`.
    case chooseAssistant
    /// `POST /choose` for the entry campaign, by `getContentBySelector`.
    case chooseEntry
    case visit, event, messages, history, feedback, tracking

    static let assistantSelector = "shopping-assistant"
    static let entrySelector = "assistant-entry"

    var testDescription: String { rawValue }

    init(method: String, path: String, body: Data?) {
        switch (method, path) {
        case ("POST", _) where path.hasSuffix("/choose"):
            let selector = (try? JSONSerialization.jsonObject(with: body ?? Data()) as? [String: Any])
                .flatMap { ($0["data"] as? [[String: Any]])?.first?["selector"] as? String }
            self = selector == Self.entrySelector ? .chooseEntry : .chooseAssistant
        case ("POST", _) where path.hasSuffix("/visit"): self = .visit
        case ("POST", _) where path.hasSuffix("/event"): self = .event
        case ("POST", _) where path.hasSuffix("/v1/messages"): self = .messages
        case ("POST", _) where path.hasSuffix("/v1/feedback"): self = .feedback
        case ("GET", _) where path.contains("/v1/threads/"): self = .history
        default: self = .tracking
        }
    }

    init(_ request: HTTPRequest) {
        self.init(method: request.method.rawValue, path: request.url.path, body: request.body)
    }

    var method: HTTPRequest.Method { self == .history || self == .tracking ? .get : .post }
    var redirectPolicy: HTTPRedirectPolicy { self == .tracking ? .sameScheme(limit: 3) : .sameOrigin(limit: 3) }

    /// The body bounds the clients set (`EndpointLimits`).
    var maximumResponseBytes: Int {
        switch self {
        case .messages, .history: 8 * 1024 * 1024
        case .chooseAssistant, .chooseEntry: 1024 * 1024
        case .visit, .event: 256 * 1024
        case .feedback, .tracking: 64 * 1024
        }
    }

    /// The engine's own timeout for this call, if it has one (P3, D3, D5's history check).
    var engineTimeout: Duration? {
        switch self {
        case .chooseAssistant: .seconds(10)
        case .messages: .seconds(120)
        case .history: .seconds(30)
        default: nil
        }
    }
}

/// Both services and the tracking host on one loopback server, answering every endpoint
/// correctly unless a request carries `LoopbackFault.header`, in which case it plays that
/// fault. A second loopback host answers whatever a cross-host redirect sends it.
final class LoopbackBackend: Sendable {
    let server: LoopbackHTTPServer
    let otherHost: LoopbackHTTPServer

    struct Thread: Sendable {
        var messageIds: [String] = []
    }

    private struct State {
        var threads: [String: Thread] = [:]
        /// Whether history holds the reply to the thread's latest message (D5 adopts it).
        var historyHoldsReplies = true
    }

    private let state = Locked(State())
    let uid = "u-8f3c"

    init() throws {
        server = try LoopbackHTTPServer()
        otherHost = try LoopbackHTTPServer(host: "127.0.0.2")
        let otherHostURL = otherHost.baseURL
        server.setResponder { [weak self] head in
            guard let name = head.header(LoopbackFault.header), let fault = LoopbackFault(rawValue: name),
                fault == .redirectLoop || !head.target.contains(LoopbackFault.redirectedMarker)
            else { return .respond { [weak self] in self?.valid(for: $0).reply ?? .drop } }
            if fault == .resetBeforeBody { return .resetBeforeBody }
            return .respond { [weak self] request in
                guard let self else { return .drop }
                return fault.reply(
                    .init(valid: self.valid(for: request), target: request.target, otherHost: otherHostURL))
            }
        }
        otherHost.setResponder { _ in .answer(status: 200) }
    }

    func stop() {
        server.stop()
        otherHost.stop()
    }

    var gravityURL: URL { server.baseURL.appendingPathComponent("v2") }
    var shoppingURL: URL { server.baseURL }

    func setHistoryHoldsReplies(_ value: Bool) { state.withLock { $0.historyHoldsReplies = value } }

    /// Forgets every thread, once the engine has settled at the end of a dialog: a soak's
    /// backend must not grow with it, or it would hide the curve of the engine's memory.
    func forgetThreads() { state.withLock { $0.threads = [:] } }

    /// A tracking URL on this server.
    func trackingURL(_ kind: String, _ query: String) -> String {
        "\(server.baseURL.absoluteString)/t/\(kind)?\(query)"
    }

    // MARK: - Valid answers

    static func assistantAnswerID(_ messageId: String) -> String { "am-\(messageId.suffix(6))" }

    func valid(for request: LoopbackHTTPServer.ReceivedRequest) -> LoopbackAnswer {
        let endpoint = SocketEndpoint(method: request.method, path: request.path, body: request.body)
        let object = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] ?? [:]
        let user = ["uid": uid, "ses": "s-1"]
        switch endpoint {
        case .chooseAssistant, .chooseEntry:
            let json =
                endpoint == .chooseEntry
                ? #"{"enabled":true,"title":"Спросите помощника"}"#
                : #"{"enabled":true,"title":"Помощник магазина","subtitle":"Помогу выбрать.","suggests":["Подарок"]}"#
            let selector = endpoint == .chooseEntry ? SocketEndpoint.entrySelector : SocketEndpoint.assistantSelector
            let body: [String: Any] = [
                "user": user,
                "data": [
                    [
                        "selector": selector,
                        "payload": [
                            [
                                "campaignId": "c-1", "experienceId": "e-1", "variationId": "v-1", "decisionId": "d-1",
                                "contents": [
                                    [
                                        "contentId": "ct-1", "deliveryMethod": "inline", "contentType": "custom",
                                        "custom": ["json": json],
                                    ]
                                ],
                            ]
                        ],
                    ]
                ],
            ]
            return Self.json(body, wrongTypes: ["user": ["uid": 42, "ses": true], "data": ["selector": 7]])
        case .visit, .event:
            return Self.json(
                ["user": user, "campaigns": [] as [Any]], wrongTypes: ["user": ["uid": 42], "campaigns": "none"])
        case .messages:
            let messageId = object["messageId"] as? String ?? "?"
            let threadId = object["threadId"] as? String ?? "?"
            state.withLock { state in
                state.threads[threadId, default: Thread()].messageIds.append(messageId)
            }
            var answer = Self.json(reply(to: messageId, threadId: threadId), wrongTypes: [:])
            answer.wrongTypes = FaultMatrixTests.Fault.wrongFieldTypes(.messages).body
            return answer
        case .history:
            let threadId = request.path.split(separator: "/").dropLast().last.map(String.init) ?? "?"
            let (thread, holdsReplies) = state.withLock { ($0.threads[threadId] ?? Thread(), $0.historyHoldsReplies) }
            var messages: [[String: Any]] = []
            for messageId in thread.messageIds {
                messages.append(["id": messageId, "role": "user", "text": "…"])
                if holdsReplies {
                    var answer = reply(to: messageId, threadId: threadId)
                    answer["id"] = "h-" + Self.assistantAnswerID(messageId)
                    answer["role"] = "assistant"
                    answer["replyTo"] = messageId
                    messages.append(answer)
                }
            }
            return Self.json(
                ["threadId": threadId, "messages": messages], wrongTypes: ["threadId": 5, "messages": "none"])
        case .feedback:
            return Self.json(["ok": true], wrongTypes: ["ok": "yes", "status": [1, 2]])
        case .tracking:
            return LoopbackAnswer(body: Data())
        }
    }

    /// A reply as wire.md shows it, with one product whose tracking URLs point here.
    func reply(to messageId: String, threadId: String) -> [String: Any] {
        let answerId = Self.assistantAnswerID(messageId)
        return [
            "threadId": threadId, "messageId": messageId, "assistantMessageId": answerId,
            "text": "Вот несколько идей до 3000 ₽.",
            "products": [
                "title": "Подарки",
                "items": [
                    [
                        "itemId": "p-1", "sku": "SKU-123", "name": "Термокружка",
                        "url": "https://shop.example/p/SKU-123",
                        "price": 1990, "currency": "RUB",
                        "events": [
                            ["type": "visible_impression", "urls": [trackingURL("vi", "i=p-1&m=\(answerId)")]],
                            ["type": "click", "urls": [trackingURL("c", "i=p-1&m=\(answerId)")]],
                        ],
                    ]
                ],
            ],
            "ui": ["suggests": ["Покажи дешевле"]],
            "events": [["type": "impression", "urls": [trackingURL("ri", "m=\(answerId)")]]],
        ]
    }

    static func json(_ body: [String: Any], wrongTypes: [String: Any]) -> LoopbackAnswer {
        func encode(_ object: [String: Any]) -> Data {
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        }
        return LoopbackAnswer(body: encode(body), wrongTypes: encode(wrongTypes))
    }
}

/// The transport the engine is given: a real transport of `kind` for everything, except that
/// the next request to an armed endpoint is marked with its fault (or, for `refused`, pointed
/// at a port that refuses) and sent through a second transport of that kind whose deadline runs
/// on a clock of its own, so a test can end that one stalled request without touching any other.
final class FaultInjectingTransport: HTTPTransport, Sendable {
    let kind: TransportKind
    let normalClock = ManualClock()
    let faultClock = ManualClock()
    private let normal: any HTTPTransport
    private let faulted: any HTTPTransport
    private let refusing: LoopbackHTTPServer.RefusingPort
    private struct State {
        var armed: [SocketEndpoint: LoopbackFault] = [:]
        var sent: [(SocketEndpoint, HTTPRequest)] = []
        var sentCount = 0
        /// Click tracking URLs requested, with how often (kept even when requests are not).
        var clicks: [String: Int] = [:]
    }

    private let state = Locked(State())
    private let recordsRequests: Bool
    /// Decides a fault for requests nobody armed one for (the soak's seeded faults).
    private let chooser: (@Sendable (SocketEndpoint, HTTPRequest) -> LoopbackFault?)?

    /// - Parameter recordsRequests: keep every request for `requests(to:)`; a soak keeps only counts.
    init(
        _ kind: TransportKind, chooser: (@Sendable (SocketEndpoint, HTTPRequest) -> LoopbackFault?)? = nil,
        recordsRequests: Bool = true
    ) throws {
        self.kind = kind
        self.recordsRequests = recordsRequests
        normal = kind.make(clock: normalClock)
        faulted = kind.make(clock: faultClock)
        refusing = try LoopbackHTTPServer.RefusingPort()
        self.chooser = chooser
    }

    /// Plays `fault` on the next request to `endpoint`.
    func arm(_ fault: LoopbackFault, for endpoint: SocketEndpoint) {
        state.withLock { $0.armed[endpoint] = fault }
    }

    /// Requests the engine sent to `endpoint`, in order (redirect hops not included).
    func requests(to endpoint: SocketEndpoint) -> [HTTPRequest] {
        state.withLock { $0.sent.filter { $0.0 == endpoint }.map(\.1) }
    }

    var requestCount: Int { state.withLock { $0.sentCount } }

    /// How often each click tracking URL (`/t/c?…`) was requested since the last call: a soak
    /// checks the clicks dialog by dialog, and keeps no table that grows with it.
    func takeClickCounts() -> [String: Int] {
        state.withLock { state in
            defer { state.clicks = [:] }
            return state.clicks
        }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let endpoint = SocketEndpoint(request)
        let recordsRequests = self.recordsRequests
        let armed = state.withLock { state -> LoopbackFault? in
            if recordsRequests { state.sent.append((endpoint, request)) }
            state.sentCount += 1
            if endpoint == .tracking, request.url.path.hasSuffix("/t/c") {
                state.clicks[request.url.absoluteString, default: 0] += 1
            }
            return state.armed.removeValue(forKey: endpoint)
        }
        guard let fault = armed ?? chooser?(endpoint, request), fault != .valid else {
            return try await normal.send(request)
        }
        var marked = request
        if fault == .refused {
            var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
            components?.port = Int(refusing.port)
            marked.url = components?.url ?? request.url
        } else {
            marked.headers[LoopbackFault.header] = fault.rawValue
        }
        return try await faulted.send(marked)
    }
}
