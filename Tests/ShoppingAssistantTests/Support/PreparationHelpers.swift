import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// `/choose` answers and configuration strings for preparation, presentation and wire tests.
enum PrepFixtures {
    /// A configuration with its own title, so tests can tell start screens apart (O9, P2).
    static func configuration(
        title: String, subtitle: String = "Подзаголовок", suggests: [String] = ["Подскажи"], enabled: Bool = true
    ) -> String {
        let object: [String: Any] = ["enabled": enabled, "title": title, "subtitle": subtitle, "suggests": suggests]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// A `/choose` answer with one payload per entry; each entry is a campaign ID and the
    /// `custom.json` of each of its contents (`nil`: a content without `custom`).
    static func choose(
        campaigns: [(id: String, contents: [String?])], uid: String? = "u-8f3c", ses: String = "s-1",
        selector: String = Fixtures.assistantSelector
    ) -> HTTPResponse {
        let payloads: [[String: Any]] = campaigns.map { campaign in
            [
                "campaignId": campaign.id, "experienceId": "e-\(campaign.id)", "variationId": "v-\(campaign.id)",
                "decisionId": "d-\(campaign.id)",
                "contents": campaign.contents.enumerated().map { index, json -> [String: Any] in
                    var content: [String: Any] = [
                        "contentId": "ct-\(campaign.id)-\(index)", "deliveryMethod": "inline", "contentType": "custom",
                    ]
                    if let json { content["custom"] = ["json": json] }
                    return content
                },
            ]
        }
        var body: [String: Any] = ["data": [["selector": selector, "payload": payloads]]]
        if let uid { body["user"] = ["uid": uid, "ses": ses] }
        return .json(200, body)
    }

    /// A `ContentResponse` as `GravityClient` decodes it, for the pure parsers.
    static func content(
        _ campaigns: [(id: String?, contents: [String?])], selector: String = Fixtures.assistantSelector
    )
        -> ContentResponse
    {
        ContentResponse(data: [
            Campaign(
                selector: selector,
                payload: campaigns.map { campaign in
                    CampaignVariation(
                        campaignId: campaign.id, experienceId: nil, variationId: nil, decisionId: nil,
                        contents: campaign.contents.map {
                            CampaignContent(
                                contentId: nil, contentType: "custom", deliveryMethod: "inline",
                                custom: $0.map { CustomModel(json: $0) })
                        })
                })
        ])
    }

    /// A `/visit` or `/event` answer announcing auto-shown in-app campaigns (B6, O7).
    static func campaigns(_ ids: [String], uid: String = "u-8f3c") -> HTTPResponse {
        Fixtures.eventResponse(
            uid: uid, campaigns: ids.map { ["campaignId": $0, "trigger": "screenview", "priority": 1, "delayTime": 0] })
    }

    /// The raw text of a request body.
    static func bodyText(_ request: HTTPRequest?) -> String {
        String(decoding: request?.body ?? Data(), as: UTF8.self)
    }
}

/// Hands every request to `inner` in a task of its own, so cancelling the engine's request
/// does not reach the server: an older `/choose` can still answer after a newer one (P2).
struct CancellationIgnoringTransport: HTTPTransport {
    let inner: any HTTPTransport

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let inner = self.inner
        return try await Task { try await inner.send(request) }.value
    }
}

/// Reports a cancelled request as a lost connection, as some HTTP stacks do (P4).
struct CancellationAsNetworkErrorTransport: HTTPTransport {
    let inner: any HTTPTransport

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            return try await inner.send(request)
        } catch is CancellationError {
            throw HTTPTransportError.connectionLost("cancelled")
        }
    }
}

/// Collects what a listener receives: log lines, lock changes, in-app campaigns.
final class CollectedValues<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}

extension EngineHarness {
    /// Starts `prepareAssistant` in a task of its own and waits until its `/choose` was sent
    /// (`requestsBefore + 1` requests in total).
    /// `timeout: nil` leaves the engine's default (P3) in force.
    func startPreparing(
        selector: String = Fixtures.assistantSelector, page: PageContext = Fixtures.productPage,
        timeout: Duration? = nil, requestsBefore: Int
    ) async -> Task<AssistantPrepareResult, Never> {
        let engine = self.engine
        let task = Task {
            guard let timeout else {
                return await engine.prepareAssistant(assistantSelector: selector, pageContext: page)
            }
            return await engine.prepareAssistant(assistantSelector: selector, pageContext: page, timeout: timeout)
        }
        await transport.waitForRequests(requestsBefore + 1)
        return task
    }

    /// Sends one message with the chat closed and lands its reply; returns the message ID.
    @discardableResult
    func landOneReply(_ text: String = "Помогите выбрать подарок", sourceLocation: SourceLocation = #_sourceLocation)
        async -> String
    {
        transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m")))
        expectEvents(2)  // chat_message_send, chat_message_reply
        let sent = await engine.sendMessage(text)
        guard case .success(let messageId) = sent else {
            Issue.record("send refused: \(sent)", sourceLocation: sourceLocation)
            return ""
        }
        await engine.waitForReply()
        return messageId
    }
}

extension ManualClock {
    /// Waits until `count` tasks sleep on the clock or `task` has finished, whichever comes
    /// first, so a regression that finishes a preparation early fails the test instead of
    /// leaving it waiting for a deadline that was never set.
    func waitForSleepersOrFinish<Value: Sendable>(_ count: Int = 1, of task: Task<Value, Never>) async {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        Task {
            await self.waitForSleepers(count)
            continuation.yield()
        }
        Task {
            _ = await task.valueUnlessCancelled
            continuation.yield()
        }
        for await _ in stream { return }
    }
}
