import DemoStore
import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// Request builders and response readers shared by the demo store tests. Bodies are built and
/// read with JSONSerialization, independently of the store's own writer, so the tests check
/// the wire shape rather than the store's internals.
enum Wire {
    static let gravityBase = "https://evs-01.gravityfield.ai/v2"
    static let shoppingBase = "https://shopping-assistant-api.gravityfield.ai"
    static let apiKey = "test-api-key-123"

    /// A Gravity request; a body without `ctx` gets a home-page context, as every SDK request has one.
    static func gravity(_ endpoint: String, _ body: [String: Any], key: String? = apiKey) -> HTTPRequest {
        var body = body
        if body["ctx"] == nil { body["ctx"] = ["type": "HOMEPAGE", "data": [], "location": "app://home"] }
        var headers = ["Content-Type": "application/json"]
        if let key { headers["Authorization"] = "Bearer \(key)" }
        return HTTPRequest(method: .post, url: url("\(gravityBase)/\(endpoint)"), headers: headers, body: data(body))
    }

    static func choose(_ selectors: [String], user: [String: Any] = [:], pageType: String = "HOMEPAGE") -> HTTPRequest {
        gravity(
            "choose",
            [
                "sec": "demo-section",
                "device": ["userAgent": "tests", "id": NSNull()],
                "user": user,
                "ctx": ["type": pageType, "data": [], "location": "app://home"],
                "data": selectors.map { ["selector": $0, "options": ["skusOnly": false, "fields": NSNull()]] },
            ]
        )
    }

    static func runtimeContext(uid: String, page: [String: Any] = ["type": "HOMEPAGE", "data": []]) -> [String: Any] {
        [
            "tenant_id": "demo-section", "uid": uid, "selector": "shopping-assistant", "campaignId": "demo-c-assistant",
            "page": page,
        ]
    }

    static func messageBody(
        thread: String = "thread-1", message: String, text: String, uid: String = "demo-u-1",
        page: [String: Any] = ["type": "HOMEPAGE", "data": []]
    ) -> [String: Any] {
        [
            "threadId": thread, "messageId": message, "resourceId": uid, "text": text,
            "runtimeContext": runtimeContext(uid: uid, page: page),
        ]
    }

    static func message(_ body: [String: Any], headers extra: [String: String] = [:]) -> HTTPRequest {
        var headers = ["Content-Type": "application/json", "Accept": "application/json"]
        headers.merge(extra) { _, new in new }
        return HTTPRequest(method: .post, url: url("\(shoppingBase)/v1/messages"), headers: headers, body: data(body))
    }

    static func history(thread: String = "thread-1", uid: String = "demo-u-1", tenant: String = "demo-section")
        -> HTTPRequest
    {
        HTTPRequest(
            method: .get,
            url: url("\(shoppingBase)/v1/threads/\(thread)/messages?resourceId=\(uid)&tenant_id=\(tenant)"),
            headers: ["Content-Type": "application/json", "Accept": "application/json"]
        )
    }

    static func feedback(thread: String = "thread-1", message: String, rating: String, uid: String = "demo-u-1")
        -> HTTPRequest
    {
        let body: [String: Any] = [
            "threadId": thread, "messageId": message, "resourceId": uid, "rating": rating,
            "runtimeContext": runtimeContext(uid: uid),
        ]
        return HTTPRequest(
            method: .post, url: url("\(shoppingBase)/v1/feedback"), headers: ["Content-Type": "application/json"],
            body: data(body))
    }

    static func url(_ string: String, sourceLocation: SourceLocation = #_sourceLocation) -> URL {
        guard let url = URL(string: string) else {
            Issue.record("bad URL \(string)", sourceLocation: sourceLocation)
            return URL(fileURLWithPath: "/")
        }
        return url
    }

    static func data(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    /// The response body as a JSON object; records an issue when it is not one.
    static func object(_ response: HTTPResponse, sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            Issue.record(
                "body is not a JSON object: \(String(decoding: response.body, as: UTF8.self))",
                sourceLocation: sourceLocation)
            return [:]
        }
        return object
    }

    /// The `error.code` of an error body.
    static func errorCode(_ response: HTTPResponse) -> String? {
        let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        return (object?["error"] as? [String: Any])?["code"] as? String
    }

    /// The products of a reply (or history entry).
    static func items(_ reply: [String: Any]) -> [[String: Any]] {
        ((reply["products"] as? [String: Any])?["items"] as? [[String: Any]]) ?? []
    }

    /// The catalogue products behind a reply's items.
    static func catalogueProducts(_ reply: [String: Any]) -> [DemoProduct] {
        items(reply).compactMap { ($0["itemId"] as? String).flatMap(DemoCatalog.product(itemId:)) }
    }

    static func buttons(_ reply: [String: Any]) -> [[String: Any]] {
        ((reply["ui"] as? [String: Any])?["buttons"] as? [[String: Any]]) ?? []
    }

    static func suggests(_ reply: [String: Any]) -> [String] {
        ((reply["ui"] as? [String: Any])?["suggests"] as? [String]) ?? []
    }
}

/// Sends through the store, turning a thrown error into a test failure.
func send(_ store: DemoStore, _ request: HTTPRequest, sourceLocation: SourceLocation = #_sourceLocation) async
    -> HTTPResponse
{
    do {
        return try await store.send(request)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        return HTTPResponse(status: -1)
    }
}

/// Asks a question in a fresh store and returns the decoded reply.
func ask(
    _ text: String, page: [String: Any] = ["type": "HOMEPAGE", "data": []],
    sourceLocation: SourceLocation = #_sourceLocation
) async -> [String: Any] {
    let store = DemoStore(clock: ManualClock())
    let response = await send(store, Wire.message(Wire.messageBody(message: "m-1", text: text, page: page)))
    #expect(response.status == 200, sourceLocation: sourceLocation)
    return Wire.object(response, sourceLocation: sourceLocation)
}
