import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

extension ScriptedTransport {
    /// Suspends until the request that meets `exchange` has arrived. Deterministic: it waits
    /// for one more request at a time, never on wall time.
    func waitForRequest(_ exchange: Exchange) async {
        while true {
            let count = requests.count
            if request(for: exchange) != nil { return }
            await waitForRequests(count + 1)
        }
    }

    /// Requests to the Shopping API (messages, history, feedback), in order.
    var shoppingRequests: [HTTPRequest] {
        requests.filter { $0.url.host == AssistantEngineConfiguration.defaultShoppingBaseURL.host }
    }

    /// `POST …/v1/messages` requests, in order.
    var messageRequests: [HTTPRequest] {
        requests.filter { $0.method == .post && $0.url.path.hasSuffix("/v1/messages") }
    }
}

extension EngineHarness {
    /// Sends `text` and returns its message ID; a refusal stops the test, so that nothing
    /// waits for a request that will never come.
    func sendAccepted(_ text: String) async throws -> String {
        try await engine.sendMessage(text).get()
    }

    /// Sends `text`, answers it with `reply` and waits until the reply has landed.
    @discardableResult
    func sendAndReceive(_ text: String, reply: HTTPResponse) async throws -> String {
        transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(reply))
        expectEvents(2)  // chat_message_send, chat_message_reply
        let messageId = try await engine.sendMessage(text).get()
        await engine.waitForReply()
        return messageId
    }

    /// Prepares for `page` with a `/choose` answer of the caller's choice.
    func prepareWith(
        _ choose: HTTPResponse, page: PageContext = Fixtures.productPage,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        transport.expect(.request(.post, pathSuffix: "/choose"), .respond(choose))
        let result = await engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: page)
        #expect(result == .ready, sourceLocation: sourceLocation)
    }

    /// The tasks carrying the dialog requests in flight. Awaiting them waits until their
    /// result was handed to the dialog machine (and dropped, if stale).
    func dialogRequestsInFlight() async -> [Task<Void, Never>] {
        await engine.requests.compactMap { id, task in
            if case .message = id { return task }
            return nil
        }
    }

    /// The user message with `id` in the current snapshot.
    func userMessage(_ id: String) async -> AssistantChatMessage? {
        await engine.chatSnapshot.messages.first { $0.role == .user && $0.id == id }
    }
}

/// Wire helpers for reading request bodies.
enum DialogWire {
    /// `runtimeContext` of a Shopping request body.
    static func runtimeContext(_ request: HTTPRequest?) -> [String: Any] {
        Fixtures.body(request)["runtimeContext"] as? [String: Any] ?? [:]
    }

    /// `runtimeContext.page` of a Shopping request body.
    static func page(_ request: HTTPRequest?) -> [String: Any] {
        runtimeContext(request)["page"] as? [String: Any] ?? [:]
    }

    /// A query item of a request URL.
    static func query(_ request: HTTPRequest?, _ name: String) -> String? {
        guard let url = request?.url else { return nil }
        return URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    /// The error code of a failed message status.
    static func failureCode(_ message: AssistantChatMessage?) -> AssistantError.Code? {
        if case .failed(let error)? = message?.status { return error.code }
        return nil
    }
}
