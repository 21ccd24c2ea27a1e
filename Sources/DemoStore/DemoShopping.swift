import Foundation
import ShoppingAssistant

/// The Shopping API half of the demo store: messages, history, feedback, with server-side
/// idempotency by message ID (D6, D8).
struct DemoShopping: Sendable {
    /// One user message and the reply generated for it.
    private struct Exchange: Sendable {
        var threadId: String
        /// The request body as JSON: a resend with an equal body gets the stored reply again.
        var requestBody: JSONValue
        var response: HTTPResponse
        var userEntry: DemoJSON
        var assistantEntry: DemoJSON
    }

    private struct Thread: Sendable {
        var resourceId: String
        var tenant: String
        var messageIds: [String] = []
        var lastShown: [DemoProduct] = []
    }

    private var threads: [String: Thread] = [:]
    private var exchanges: [String: Exchange] = [:]
    /// Assistant message ID → thread ID, for ratings.
    private var assistantMessages: [String: String] = [:]
    private var nextAssistantMessage = 1
    private var nextTick = 0
    private let composer = DemoReplyComposer()
    /// Ratings received, in order.
    private(set) var feedback: [DemoFeedbackRecord] = []

    mutating func clearFeedback() {
        feedback.removeAll()
    }

    // MARK: - S5

    /// Header names that carry credentials, which Shopping API requests must never send (S5).
    private static let credentialHeaders: Set<String> = [
        "authorization", "x-api-key", "api-key", "apikey", "x-gravity-key", "x-connector-key", "connector-key",
    ]
    private static let credentialFields: Set<String> = [
        "apikey", "api_key", "gravitykey", "gravity_key", "connectorkey", "connector_key", "authorization",
    ]

    /// A 400 response if the request carries a credential: an `Authorization` or API-key header,
    /// a key-like body field, or any Gravity key seen earlier, anywhere in headers or body.
    static func credentialViolation(_ request: HTTPRequest, knownKeys: Set<String>) -> HTTPResponse? {
        let reason: String?
        let body = JSONValue.parse(request.body)
        // The shopper's own text may say anything; every other part of the request is checked.
        var checked = body
        if case .object(var members) = body {
            members["text"] = nil
            checked = .object(members)
        }
        let bodyText: String
        if let checked, let data = try? JSONEncoder().encode(checked) {
            bodyText = String(decoding: data, as: UTF8.self)
        } else {
            bodyText = request.body.map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
        if let header = request.headers.keys.first(where: { credentialHeaders.contains($0.lowercased()) }) {
            reason = "header \(header)"
        } else if body?.containsKey(where: { credentialFields.contains($0.lowercased()) }) == true {
            reason = "a key field in the body"
        } else if knownKeys.contains(where: { key in
            // Very short keys would match ordinary text by chance.
            key.count >= 6
                && (bodyText.contains(key) || request.headers.values.contains { $0.contains(key) }
                    || request.url.absoluteString.contains(key))
        }) {
            reason = "the Gravity API key"
        } else {
            reason = nil
        }
        guard let reason else { return nil }
        return DemoHTTP.error(
            400, code: "CREDENTIALS_NOT_ALLOWED",
            message: "Shopping API requests must not carry credentials (found \(reason))")
    }

    // MARK: - POST /v1/messages

    /// Handles a message: validates it, answers a resend from storage, or composes, stores and
    /// returns a new reply.
    mutating func postMessage(_ request: HTTPRequest, configuration: DemoStore.Configuration) -> HTTPResponse {
        let envelope: MessageEnvelope
        switch readEnvelope(request) {
        case .failure(let refusal): return refusal.response
        case .success(let read): envelope = read
        }
        let (body, threadId, messageId, resourceId) =
            (envelope.body, envelope.threadId, envelope.messageId, envelope.resourceId)
        guard let text = body["text"]?.stringValue, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        else {
            return invalid("text must be a non-empty string")
        }
        let context = body["runtimeContext"]
        guard let tenant = context?.nonEmptyString("tenant_id"), let uid = context?.nonEmptyString("uid") else {
            return invalid("runtimeContext.tenant_id and runtimeContext.uid are required")
        }
        guard uid == resourceId else {
            return invalid("resourceId must equal runtimeContext.uid (the canonical user.uid)")
        }
        if let refusal = checkTenant(tenant, configuration) { return refusal }
        let pageType = context?["page"]?["type"]?.stringValue
        guard let pageType, PageContext.PageType(rawValue: pageType) != nil else {
            return invalid(
                "runtimeContext.page.type must be the page type as sent to Gravity (PRODUCT, …); got \(pageType ?? "nothing")"
            )
        }
        if let stored = exchanges[messageId] {
            guard stored.requestBody == body else {
                return DemoHTTP.error(
                    409, code: "MESSAGE_ID_CONFLICT",
                    message: "Message \(messageId) was already sent with a different body")
            }
            return stored.response
        }
        var thread = threads[threadId] ?? Thread(resourceId: resourceId, tenant: tenant)
        guard thread.resourceId == resourceId, thread.tenant == tenant else {
            return DemoHTTP.error(403, code: "THREAD_FORBIDDEN", message: "Thread \(threadId) belongs to another user")
        }

        let page = DemoReplyComposer.Page(context?["page"])
        let reply = composer.compose(text: text, page: page, lastShown: thread.lastShown)
        let assistantMessageId = "am-\(nextAssistantMessage)"
        nextAssistantMessage += 1
        let userCreatedAt = timestamp(configuration)
        let replyCreatedAt = timestamp(configuration)

        let productsJSON = reply.products.map { products -> DemoJSON in
            .compactObject([
                ("title", reply.productsTitle.map(DemoJSON.string)),
                ("items", .array(products.map(\.wireJSON))),
            ])
        }
        let uiJSON = DemoJSON.object(["suggests": .strings(reply.suggests), "buttons": .array(reply.buttons)])
        let impression = "https://\(DemoStore.trackingHost)/ri?m=\(assistantMessageId)"
        let eventsJSON = DemoJSON.array([.object(["type": "impression", "urls": .strings([impression])])])

        let responseBody = DemoJSON.compactObject([
            ("threadId", .string(threadId)),
            ("messageId", .string(messageId)),
            ("assistantMessageId", .string(assistantMessageId)),
            ("text", .string(reply.text)),
            ("products", productsJSON),
            ("ui", uiJSON),
            ("events", eventsJSON),
        ])
        let userEntry = DemoJSON.object([
            "id": .string(messageId), "role": "user", "text": .string(text), "createdAt": .string(userCreatedAt),
        ])
        let assistantEntry = DemoJSON.compactObject([
            ("id", .string(assistantMessageId)),
            ("role", "assistant"),
            ("replyTo", .string(messageId)),
            ("text", .string(reply.text)),
            ("products", productsJSON),
            ("ui", uiJSON),
            ("events", eventsJSON),
            ("createdAt", .string(replyCreatedAt)),
        ])
        let response = DemoHTTP.json(200, responseBody)
        exchanges[messageId] = Exchange(
            threadId: threadId, requestBody: body, response: response, userEntry: userEntry,
            assistantEntry: assistantEntry)
        assistantMessages[assistantMessageId] = threadId
        thread.messageIds.append(messageId)
        if let products = reply.products, !products.isEmpty { thread.lastShown = products }
        threads[threadId] = thread
        return response
    }

    // MARK: - GET /v1/threads/{id}/messages

    /// The thread's messages in order, or 404 `SHOPPING_HISTORY_NOT_FOUND` for a thread that
    /// does not exist for this user and tenant.
    func history(_ request: HTTPRequest, threadId: String, configuration: DemoStore.Configuration) -> HTTPResponse {
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func query(_ name: String) -> String? {
            items.first { $0.name == name }?.value.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let resourceId = query("resourceId"), let tenant = query("tenant_id") else {
            return invalid("resourceId and tenant_id query parameters are required")
        }
        if let refusal = checkTenant(tenant, configuration) { return refusal }
        guard let thread = threads[threadId], thread.resourceId == resourceId, thread.tenant == tenant else {
            return DemoHTTP.error(
                404, code: "SHOPPING_HISTORY_NOT_FOUND", message: "No thread \(threadId) for this user")
        }
        let messages = thread.messageIds.compactMap { exchanges[$0] }.flatMap { [$0.userEntry, $0.assistantEntry] }
        return DemoHTTP.json(200, .object(["threadId": .string(threadId), "messages": .array(messages)]))
    }

    // MARK: - POST /v1/feedback

    /// Records a `like`/`dislike` for an assistant message of this store; 204 on success.
    mutating func postFeedback(_ request: HTTPRequest, configuration: DemoStore.Configuration) -> HTTPResponse {
        let envelope: MessageEnvelope
        switch readEnvelope(request) {
        case .failure(let refusal): return refusal.response
        case .success(let read): envelope = read
        }
        let (body, threadId, messageId, resourceId) =
            (envelope.body, envelope.threadId, envelope.messageId, envelope.resourceId)
        guard let rating = body["rating"]?.stringValue, rating == "like" || rating == "dislike" else {
            return DemoHTTP.error(400, code: "INVALID_RATING", message: "rating must be \"like\" or \"dislike\"")
        }
        if let tenant = body["runtimeContext"]?.nonEmptyString("tenant_id"),
            let refusal = checkTenant(tenant, configuration)
        {
            return refusal
        }
        guard assistantMessages[messageId] == threadId, threads[threadId]?.resourceId == resourceId else {
            return DemoHTTP.error(
                404, code: "MESSAGE_NOT_FOUND", message: "No assistant message \(messageId) in thread \(threadId)")
        }
        feedback.append(
            DemoFeedbackRecord(threadId: threadId, messageId: messageId, resourceId: resourceId, rating: rating))
        return DemoHTTP.noContent()
    }

    // MARK: - Helpers

    /// The fields every message-scoped request carries (`/v1/messages`, `/v1/feedback`).
    private struct MessageEnvelope {
        let body: JSONValue
        let threadId: String
        let messageId: String
        let resourceId: String
    }

    private struct Refusal: Error {
        let response: HTTPResponse
    }

    /// Checks the content type and reads the envelope, or says why the request is refused.
    private func readEnvelope(_ request: HTTPRequest) -> Result<MessageEnvelope, Refusal> {
        if let refusal = DemoHTTP.requireJSONContentType(request) { return .failure(Refusal(response: refusal)) }
        guard let body = JSONValue.parse(request.body), body.objectValue != nil else {
            return .failure(Refusal(response: invalid("The body must be a JSON object")))
        }
        guard let threadId = body.nonEmptyString("threadId"), let messageId = body.nonEmptyString("messageId"),
            let resourceId = body.nonEmptyString("resourceId")
        else {
            return .failure(Refusal(response: invalid("threadId, messageId and resourceId are required")))
        }
        return .success(MessageEnvelope(body: body, threadId: threadId, messageId: messageId, resourceId: resourceId))
    }

    private func invalid(_ message: String) -> HTTPResponse {
        DemoHTTP.error(400, code: "INVALID_REQUEST", message: message)
    }

    private func checkTenant(_ tenant: String, _ configuration: DemoStore.Configuration) -> HTTPResponse? {
        guard let expected = configuration.tenant, expected != tenant else { return nil }
        return DemoHTTP.error(403, code: "TENANT_NOT_CONNECTED", message: "Section \(tenant) is not connected")
    }

    /// A deterministic `createdAt`: the configured epoch plus one second per stored message.
    private mutating func timestamp(_ configuration: DemoStore.Configuration) -> String {
        let date = configuration.historyEpoch.addingTimeInterval(TimeInterval(nextTick))
        nextTick += 1
        return date.formatted(.iso8601)
    }
}
