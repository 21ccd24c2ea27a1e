import Foundation

/// Builds Shopping API requests and decodes replies (wire.md § Shopping API). No Gravity key
/// and no `Authorization` header ever go here (S5).
struct ShoppingClient: Sendable {
    let call: WireCall
    /// Whether replies keep the bytes they were decoded from, for the dialog store (D18).
    var keepsReceived = false
    /// The endpoints, resolved once (`EndpointURLs`).
    private let messagesURL: URL
    private let threadsURL: URL
    private let feedbackURL: URL

    init(baseURL: URL, call: WireCall) {
        self.call = call
        messagesURL = EndpointURLs.url(baseURL, "v1/messages")
        threadsURL = EndpointURLs.url(baseURL, "v1/threads")
        feedbackURL = EndpointURLs.url(baseURL, "v1/feedback")
    }

    /// The exact bytes of a message request, kept by the dialog so a retry is byte-identical (D6).
    static func messageBody(_ request: ShoppingMessageRequest) -> Data { WireJSON.encode(request) }

    func sendMessage(body: Data) async -> Result<ReplyContent, WireFailure> {
        let request = HTTPRequest(
            method: .post, url: messagesURL, headers: Self.headers, body: body,
            maximumResponseBytes: EndpointLimits.replyBytes, redirectPolicy: EndpointLimits.serviceRedirects)
        return await call.perform(request).flatMap { response in
            guard
                let reply = ReplyDecoder.decode(
                    response.body, idKey: .assistantMessageId, keepsReceived: keepsReceived)
            else {
                return .failure(
                    .failed(
                        AssistantError(code: .invalidResponse, message: "undecodable reply envelope"), uncertain: false)
                )
            }
            return .success(reply)
        }
    }

    func history(threadId: String, resourceId: String, tenantId: String) async -> Result<[HistoryMessage], WireFailure>
    {
        var components = URLComponents(
            url: threadsURL.appendingPathComponent(threadId).appendingPathComponent("messages"),
            resolvingAgainstBaseURL: false)
        components?.queryItems = [
            URLQueryItem(name: "resourceId", value: resourceId), URLQueryItem(name: "tenant_id", value: tenantId),
        ]
        guard let url = components?.url else {
            return .failure(
                .failed(AssistantError(code: .invalidConfiguration, message: "bad history URL"), uncertain: false))
        }
        let request = HTTPRequest(
            method: .get, url: url, headers: Self.headers, maximumResponseBytes: EndpointLimits.historyBytes,
            redirectPolicy: EndpointLimits.serviceRedirects)
        return await call.perform(request).flatMap { response in
            guard let messages = HistoryDecoder.decode(response.body) else {
                return .failure(
                    .failed(
                        AssistantError(code: .invalidResponse, message: "undecodable history envelope"),
                        uncertain: false))
            }
            return .success(messages)
        }
    }

    func feedback(_ body: ShoppingFeedbackRequest) async -> Result<Void, WireFailure> {
        let request = HTTPRequest(
            method: .post, url: feedbackURL, headers: Self.headers,
            body: WireJSON.encode(body), maximumResponseBytes: EndpointLimits.feedbackBytes,
            redirectPolicy: EndpointLimits.serviceRedirects)
        return await call.perform(request).map { _ in () }
    }

    private static let headers = ["Content-Type": "application/json", "Accept": "application/json"]
}
