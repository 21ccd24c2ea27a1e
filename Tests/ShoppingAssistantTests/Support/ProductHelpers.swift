import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// Reply and product fixtures with full control over tracking URLs, for product, action and
/// analytics tests.
enum ProductFixtures {
    static let clickA = "https://t.example/c?i=p-1"
    static let clickB = "https://t2.example/c?i=p-1"
    static let impression = "https://t.example/vi?i=p-1"
    static let replyImpression = "https://t.example/ri?m=am-17"
    static let replyText = "Here are a few gift ideas under 3000."

    static var supportButton: [String: Any] {
        ["type": "button", "value": "Write to support", "action": "open_support_chat", "topic": "gifts", "priority": 2]
    }
    static var urlButton: [String: Any] {
        ["type": "button", "value": "Delivery terms", "action": "follow_url", "url": "https://shop.example/delivery"]
    }
    static var customButton: [String: Any] {
        ["type": "button", "value": "Compare", "action": "compare_products", "items": ["p-1", "p-2"]]
    }

    /// One wire item. `events: nil` leaves the `events` field out entirely.
    static func item(
        itemId: String = "p-1", name: String = "Thermo mug", sku: String? = "SKU-123",
        url: String? = "https://shop.example/p/SKU-123", clicks: [String]? = [clickA, clickB],
        impressions: [String]? = [impression], extra: [String: Any] = [:]
    ) -> [String: Any] {
        var item: [String: Any] = ["itemId": itemId, "name": name, "price": 1990, "currency": "RUB"]
        if let sku { item["sku"] = sku }
        if let url { item["url"] = url }
        var events: [[String: Any]] = []
        if let impressions { events.append(["type": "visible_impression", "urls": impressions]) }
        if let clicks { events.append(["type": "click", "urls": clicks]) }
        if clicks != nil || impressions != nil { item["events"] = events }
        for (key, value) in extra { item[key] = value }
        return item
    }

    /// A `/v1/messages` reply. `items: nil` leaves `products` out; `impressions: []` leaves `events` out.
    static func reply(
        assistantMessageId: String? = "am-17", text: String = replyText, title: String = "Gifts under 3000",
        items: [[String: Any]]? = [item()], buttons: [[String: Any]] = [supportButton, urlButton],
        impressions: [String] = [replyImpression]
    ) -> HTTPResponse {
        var body: [String: Any] = ["threadId": "t", "messageId": "m", "text": text, "ui": ["buttons": buttons]]
        if let items { body["products"] = ["title": title, "items": items] }
        if let assistantMessageId { body["assistantMessageId"] = assistantMessageId }
        if !impressions.isEmpty { body["events"] = [["type": "impression", "urls": impressions]] }
        return .json(200, body)
    }

    static let ok = HTTPResponse.text(204, "")
}

/// One `/event` request as sent: the event and the `user.uid` it was sent as.
struct SentLifecycleEvent: Equatable, CustomStringConvertible {
    let type: String
    let props: [String: String]
    let uid: String?
    let location: String?

    var description: String { "\(type) \(props) uid=\(uid ?? "-")" }
}

extension EngineHarness {
    /// Opens the chat and lands one reply in it, with every request it causes answered.
    /// Returns the message ID of the user message.
    @discardableResult
    func openWithReply(
        _ reply: HTTPResponse = ProductFixtures.reply(), impressions: [String] = [ProductFixtures.replyImpression],
        text: String = "Please help me pick a gift", sourceLocation: SourceLocation = #_sourceLocation
    ) async -> String {
        await openReady(sourceLocation: sourceLocation)
        return await sendAndLand(reply, impressions: impressions, text: text, sourceLocation: sourceLocation)
    }

    /// Sends a message in the open chat and lands `reply`; waits until its tracking is done.
    @discardableResult
    func sendAndLand(
        _ reply: HTTPResponse, impressions: [String], text: String = "Something else",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> String {
        transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(reply))
        expectEvents(2)  // chat_message_send, chat_message_reply
        for url in impressions { transport.expect(.get(url), .respond(ProductFixtures.ok)) }
        let sent = await engine.sendMessage(text)
        await engine.waitForReply()
        await engine.flushTracking()
        guard case .success(let messageId) = sent else {
            Issue.record("send refused: \(sent)", sourceLocation: sourceLocation)
            return ""
        }
        return messageId
    }

    /// The products of the latest reply as the presenter last saw them.
    var shownProducts: [AssistantProduct] {
        presenter.latest?.messages.last(where: { $0.role == .assistant })?.productBlock?.products ?? []
    }

    /// Every lifecycle event sent through `/event`, in order.
    var sentLifecycleEvents: [SentLifecycleEvent] {
        transport.requests.filter { $0.url.path.hasSuffix("/event") }.flatMap { request -> [SentLifecycleEvent] in
            let body = Fixtures.body(request)
            let uid = (body["user"] as? [String: Any])?["uid"] as? String
            let location = (body["ctx"] as? [String: Any])?["location"] as? String
            return (body["data"] as? [[String: Any]] ?? []).map { event in
                SentLifecycleEvent(
                    type: event["type"] as? String ?? "?", props: event["customProps"] as? [String: String] ?? [:],
                    uid: uid, location: location)
            }
        }
    }

    /// Tracking URLs attempted so far, in order.
    func trackedURLs() async -> [TrackingRecord] {
        await engine.trackingLog.filter { $0.kind == .url }
    }
}

/// Collects log messages for assertions on diagnostics.
final class LogCollector: Sendable {
    private let lines = Locked<[(level: AssistantLogLevel, message: String)]>([])
    var messages: [String] { lines.withLock { $0.map(\.message) } }
    /// The messages logged as errors: only what nothing else reports (B2).
    var errors: [String] { lines.withLock { $0.filter { $0.level == .error }.map(\.message) } }

    func makeLogger(level: AssistantLogLevel = .error) -> AssistantLogger {
        AssistantLogger(level: level) { [self] level, message in self.lines.withLock { $0.append((level, message)) } }
    }
}
