import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

@Suite(.timeLimit(.minutes(2))) struct ShoppingClientTests {
    static let base = URL(string: "https://shopping.example/api")!

    /// A client over a scripted transport; unexpected requests fail the test.
    static func client(logger: AssistantLogger = AssistantLogger()) -> (ShoppingClient, ScriptedTransport) {
        let transport = ScriptedTransport(clock: ManualClock()) { Issue.record(Comment(rawValue: $0)) }
        let client = ShoppingClient(
            baseURL: base,
            call: WireCall(transport: transport, logger: logger, service: "shopping", userAgent: "test-agent/1"))
        return (client, transport)
    }

    static func decodeReply(_ object: [String: Any]) async -> Result<ReplyContent, WireFailure> {
        let (client, transport) = client()
        transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(.json(200, object)))
        return await client.sendMessage(body: Data("{}".utf8))
    }

    static let runtime = ShoppingRuntimeContext(
        tenantId: "shop-1", uid: "u-8f3c", selector: "shopping-assistant", campaignId: "c-1", page: Fixtures.productPage
    )

    static func assertShoppingHeaders(_ request: HTTPRequest?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(request?.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
        #expect(request?.header("Accept") == "application/json", sourceLocation: sourceLocation)
        #expect(request?.header("Authorization") == nil, sourceLocation: sourceLocation)
    }

    // MARK: - Request shapes

    // covers: S5
    @Test func messageIsPostedAsJSONWithTheGivenBytesAndNoAuthorization() async throws {
        let (client, transport) = Self.client()
        let exchange = transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m-1")))
        let body = ShoppingClient.messageBody(
            ShoppingMessageRequest(
                threadId: "t-1", messageId: "m-1", resourceId: "u-8f3c", text: "Привет", runtimeContext: Self.runtime))
        _ = try await client.sendMessage(body: body).get()
        let request = transport.request(for: exchange)
        #expect(request?.url.absoluteString == "https://shopping.example/api/v1/messages")
        #expect(request?.body == body)
        Self.assertShoppingHeaders(request)
    }

    // covers: S2
    @Test func messageBodyCarriesTheWireFieldsAndRuntimeContext() throws {
        let body = ShoppingClient.messageBody(
            ShoppingMessageRequest(
                threadId: "t-1", messageId: "m-1", resourceId: "u-8f3c", text: "Привет", runtimeContext: Self.runtime))
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(Set(object.keys) == ["threadId", "messageId", "resourceId", "text", "runtimeContext"])
        let context = try #require(object["runtimeContext"] as? [String: Any])
        #expect(context["tenant_id"] as? String == "shop-1")
        #expect(context["uid"] as? String == "u-8f3c")
        #expect(context["selector"] as? String == "shopping-assistant")
        #expect(context["campaignId"] as? String == "c-1")
        let page = try #require(context["page"] as? [String: Any])
        #expect(page["type"] as? String == "PRODUCT")
        #expect(page["data"] as? [String] == ["SKU-123"])
        #expect(page["location"] as? String == "app://product/SKU-123")
        // Deterministic bytes: the same request encodes to the same body (D6).
        let again = ShoppingClient.messageBody(
            ShoppingMessageRequest(
                threadId: "t-1", messageId: "m-1", resourceId: "u-8f3c", text: "Привет", runtimeContext: Self.runtime))
        #expect(again == body)
    }

    // covers: S5
    @Test func historyIsAGetWithResourceAndTenantInTheQuery() async throws {
        let (client, transport) = Self.client()
        let exchange = transport.expect(
            .request(.get, pathSuffix: "/v1/threads/t-1/messages"),
            .respond(Fixtures.history(threadId: "t-1", messageId: "m-1", replyId: "am-h")))
        let messages = try await client.history(threadId: "t-1", resourceId: "u-8f3c", tenantId: "shop-1").get()
        let request = transport.request(for: exchange)
        #expect(request?.url.path == "/api/v1/threads/t-1/messages")
        #expect(DialogWire.query(request, "resourceId") == "u-8f3c")
        #expect(DialogWire.query(request, "tenant_id") == "shop-1")
        #expect(request?.body == nil)
        Self.assertShoppingHeaders(request)
        #expect(messages.map(\.role) == ["user", "assistant", "user", "assistant", "assistant"])
        #expect(messages.map(\.id) == ["m-earlier", "am-earlier", "m-1", "am-h", "am-other"])
        #expect(messages.first { $0.id == "am-h" }?.replyTo == "m-1")
    }

    // covers: S5
    @Test func feedbackIsPostedWithTheRatingAndAcceptsNoContent() async throws {
        let (client, transport) = Self.client()
        let exchange = transport.expect(.request(.post, pathSuffix: "/v1/feedback"), .respond(.text(204, "")))
        let request = ShoppingFeedbackRequest(
            threadId: "t-1", messageId: "am-17", resourceId: "u-8f3c", rating: "dislike", runtimeContext: Self.runtime)
        try await client.feedback(request).get()
        let sent = transport.request(for: exchange)
        Self.assertShoppingHeaders(sent)
        let object = Fixtures.body(sent)
        #expect(object["threadId"] as? String == "t-1")
        #expect(object["messageId"] as? String == "am-17")
        #expect(object["resourceId"] as? String == "u-8f3c")
        #expect(object["rating"] as? String == "dislike")
        #expect(DialogWire.runtimeContext(sent)["tenant_id"] as? String == "shop-1")
    }

    // MARK: - Lenient decoding

    @Test func fullReplyDecodesAsWireMdShowsIt() async throws {
        let (client, transport) = Self.client()
        transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m-1")))
        let reply = try await client.sendMessage(body: Data()).get()
        #expect(reply.assistantMessageId == "am-17")
        #expect(reply.replyTo == "m-1")
        #expect(reply.text == "Вот несколько идей до 3000 ₽.")
        #expect(reply.productsTitle == "Подарки до 3000 ₽")
        #expect(reply.products?.map(\.itemId) == ["p-1"])
        #expect(
            reply.products?.first?.tracking.clickURLs == ["https://t.example/c?i=p-1", "https://t2.example/c?i=p-1"])
        #expect(reply.suggests == ["Покажи дешевле", "А для мужчины?"])
        #expect(reply.buttons.map(\.actionName) == ["open_support_chat", "follow_url"])
        #expect(reply.buttons.first?.payload["topic"] == "gifts")
        #expect(reply.impressionURLs == ["https://t.example/ri?m=am-17"])
        #expect(reply.diagnostics.isEmpty)
    }

    @Test func malformedItemIsDroppedWithADiagnosticAndTheRestOfTheReplyKept() async throws {
        let reply = try await Self.decodeReply([
            "assistantMessageId": "am-1", "text": "Ответ",
            "products": [
                "title": "Товары",
                "items": [
                    ["itemId": "p-1", "name": "Кружка"], ["name": "без itemId"], ["itemId": "p-3"], "not an object",
                    ["itemId": "p-5", "name": "Чайник"],
                ],
            ],
            "ui": ["buttons": [["type": "button", "value": "Без действия"], 42]],
        ]).get()
        #expect(reply.text == "Ответ")
        #expect(reply.products?.map(\.itemId) == ["p-1", "p-5"])
        #expect(reply.diagnostics.filter { $0.contains("product") }.count == 3)
        #expect(reply.buttons.isEmpty)
        #expect(reply.diagnostics.filter { $0.contains("button") }.count == 2)
    }

    @Test func pricesMayBeNumbersOrStringsAndExtraItemFieldsAreKept() async throws {
        let reply = try await Self.decodeReply([
            "text": "",
            "products": [
                "items": [
                    [
                        "itemId": "p-1", "name": "A", "price": 1990, "oldPrice": "2 490 ₽", "rating": 4.5,
                        "badges": ["new"],
                    ],
                    ["itemId": 77, "name": "B", "sku": 123, "price": "от 990 ₽", "oldPrice": NSNull()],
                ]
            ],
        ]).get()
        let products = try #require(reply.products)
        #expect(products.count == 2)
        try #require(products.count > 1)
        #expect(products[0].price == .amount(1990))
        #expect(products[0].oldPrice == .text("2 490 ₽"))
        #expect(products[0].extra["rating"] == .number(4.5))
        #expect(products[0].extra["badges"] == ["new"])
        #expect(products[1].itemId == "77")
        #expect(products[1].sku == "123")
        #expect(products[1].price == .text("от 990 ₽"))
        #expect(products[1].oldPrice == nil)
        #expect(reply.productsTitle == nil)
    }

    @Test func unknownFieldsAreIgnoredAndOptionalPartsMayBeAbsentOrNull() async throws {
        let minimal = try await Self.decodeReply([
            "assistantMessageId": "am-2", "text": "Только текст", "futureField": ["x": 1], "ui": NSNull(),
            "events": NSNull(),
        ]).get()
        #expect(minimal.text == "Только текст")
        #expect(minimal.products == nil)
        #expect(minimal.suggests.isEmpty)
        #expect(minimal.buttons.isEmpty)
        #expect(minimal.impressionURLs.isEmpty)
        let emptyBlock = try await Self.decodeReply(["text": "Пусто", "products": ["title": "Ничего"]]).get()
        #expect(emptyBlock.products == [])
        #expect(emptyBlock.assistantMessageId == nil)
    }

    @Test(arguments: ["", "not json", "[1, 2]", "\"text\"", "null"])
    func undecodableReplyEnvelopeIsInvalidResponse(_ body: String) async {
        let (client, transport) = Self.client()
        transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(.text(200, body)))
        let result = await client.sendMessage(body: Data())
        #expect(result.failureCode == .invalidResponse)
        #expect(result.isUncertain == false)
    }

    @Test func historyDecodingDropsMessagesWithoutARoleAndRejectsABadEnvelope() async throws {
        let (client, transport) = Self.client()
        transport.expect(
            .request(.get, pathSuffix: "/messages"),
            .respond(
                .json(
                    200,
                    [
                        "threadId": "t-1", "unknown": true,
                        "messages": [
                            ["id": "x", "text": "no role"], ["id": "am-1", "role": "assistant", "replyTo": "m-1"],
                        ],
                    ])))
        transport.expect(.request(.get, pathSuffix: "/messages"), .respond(.json(200, ["threadId": "t-1"])))
        let messages = try await client.history(threadId: "t-1", resourceId: "u", tenantId: "s").get()
        #expect(messages.map(\.id) == ["am-1"])
        let bad = await client.history(threadId: "t-1", resourceId: "u", tenantId: "s")
        #expect(bad.failureCode == .invalidResponse)
    }

    // MARK: - Error table (wire.md § Errors)

    struct StatusCase: Sendable, CustomTestStringConvertible {
        let status: Int
        let body: String
        let headers: [String: String]
        let code: AssistantError.Code
        let uncertain: Bool
        var testDescription: String { "HTTP \(status) \(body.prefix(40)) → \(code.rawValue)" }

        init(
            _ status: Int, _ code: AssistantError.Code, body: String = "", headers: [String: String] = [:],
            uncertain: Bool = false
        ) {
            self.status = status
            self.body = body
            self.headers = headers
            self.code = code
            self.uncertain = uncertain
        }

        static func error(_ code: String) -> String { #"{"error":{"code":"\#(code)","message":"server says no"}}"# }
    }

    static let statusCases: [StatusCase] = [
        StatusCase(401, .unauthorized),
        StatusCase(403, .unauthorized),
        StatusCase(403, .unauthorized, body: StatusCase.error("IP_NOT_ALLOWED")),
        StatusCase(409, .messageConflict, body: StatusCase.error("MESSAGE_ID_CONFLICT")),
        StatusCase(409, .server, body: StatusCase.error("SOMETHING_ELSE")),
        StatusCase(404, .historyUnavailable, body: StatusCase.error("SHOPPING_HISTORY_NOT_FOUND")),
        StatusCase(404, .server, body: "<html>not found</html>"),
        StatusCase(400, .server, body: StatusCase.error("BAD_REQUEST")),
        StatusCase(429, .rateLimited, headers: ["Retry-After": "30"]),
        StatusCase(500, .server, body: "oops"),
        StatusCase(501, .server),
        StatusCase(502, .server, uncertain: true),
        StatusCase(503, .server, body: StatusCase.error("UNAVAILABLE"), uncertain: true),
        StatusCase(504, .server, uncertain: true),
        StatusCase(302, .server),
    ]

    // covers: S6
    @Test(arguments: statusCases)
    func statusMapsToTheErrorTable(_ item: StatusCase) async {
        let (client, transport) = Self.client()
        let response = HTTPResponse(status: item.status, headers: item.headers, body: Data(item.body.utf8))
        transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(response))
        let result = await client.sendMessage(body: Data("{}".utf8))
        guard case .failure(.failed(let error, let uncertain)) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == item.code)
        #expect(error.httpStatus == item.status)
        #expect(uncertain == item.uncertain)
    }

    @Test func rateLimitKeepsRetryAfterInTheMessage() {
        let failure = WireCall.map(HTTPResponse(status: 429, headers: ["retry-after": "120"], body: Data()))
        #expect(failure.error?.code == .rateLimited)
        #expect(failure.error?.message.contains("Retry-After: 120") == true)
    }

    @Test func rateLimitExposesRetryAfterSecondsButNotADate() {
        func retryAfter(_ value: String?, status: Int = 429) -> Duration? {
            let headers = value.map { ["Retry-After": $0] } ?? [:]
            return WireCall.map(HTTPResponse(status: status, headers: headers, body: Data())).error?.retryAfter
        }
        #expect(retryAfter("120") == .seconds(120))
        #expect(retryAfter(" 0 ") == .zero)
        #expect(retryAfter("Wed, 21 Oct 2015 07:28:00 GMT") == nil, "a date stays in the message only")
        #expect(retryAfter("-5") == nil)
        #expect(retryAfter(nil) == nil)
        #expect(retryAfter("30", status: 503) == nil, "only a rate limit carries it")
    }

    // covers: S6
    @Test func ipNotAllowedIsUnauthorizedWithTheServerCodeInTheMessage() {
        let body = Data(StatusCase.error("IP_NOT_ALLOWED").utf8)
        let failure = WireCall.map(HTTPResponse(status: 403, body: body))
        #expect(
            failure
                == .failed(
                    AssistantError(
                        code: .unauthorized, message: "HTTP 403 IP_NOT_ALLOWED: server says no", httpStatus: 403),
                    uncertain: false))
    }

    struct TransportCase: Sendable, CustomTestStringConvertible {
        let error: HTTPTransportError
        let code: AssistantError.Code
        let uncertain: Bool
        var testDescription: String { "\(error) → \(code.rawValue)\(uncertain ? " (uncertain)" : "")" }
    }

    static let transportCases: [TransportCase] = [
        TransportCase(error: .cannotConnect("refused"), code: .network, uncertain: false),
        TransportCase(error: .cannotConnect("DNS"), code: .network, uncertain: false),
        TransportCase(error: .connectionLost("reset"), code: .network, uncertain: true),
        TransportCase(error: .timedOut, code: .timeout, uncertain: true),
    ]

    @Test(arguments: transportCases)
    func transportFailureMapsToCertainOrUncertain(_ item: TransportCase) async {
        let (client, transport) = Self.client()
        transport.expect(.request(.post, pathSuffix: "/v1/messages"), .fail(item.error))
        let result = await client.sendMessage(body: Data("{}".utf8))
        guard case .failure(.failed(let error, let uncertain)) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == item.code)
        #expect(error.httpStatus == nil)
        #expect(uncertain == item.uncertain)
    }

    @Test func cancellationIsNotANetworkError() async {
        let (client, transport) = Self.client()
        transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        let task = Task { await client.sendMessage(body: Data()) }
        await transport.waitForRequests(1)
        task.cancel()
        #expect(await task.valueUnlessCancelled == .failure(.cancelled))
    }
}

extension Result where Failure == WireFailure {
    fileprivate var failureCode: AssistantError.Code? {
        if case .failure(let failure) = self { return failure.error?.code }
        return nil
    }

    fileprivate var isUncertain: Bool? {
        if case .failure(.failed(_, let uncertain)) = self { return uncertain }
        return nil
    }
}

/// Shopping API requests as the engine really sends them (S1–S3, S5).
@Suite(.timeLimit(.minutes(2))) struct ShoppingRequestsThroughTheEngineTests {
    // covers: S1
    @Test func defaultBaseURLIsTheShoppingAssistantAPI() async throws {
        let defaults = AssistantEngineConfiguration(apiKey: "k", section: "s")
        #expect(defaults.shoppingBaseURL.absoluteString == "https://shopping-assistant-api.gravityfield.ai")
        let h = await EngineHarness()
        await h.prepareReady()
        try await h.sendAndReceive("Привет", reply: Fixtures.reply(to: "m"))
        #expect(
            h.transport.messageRequests.map(\.url.absoluteString) == [
                "https://shopping-assistant-api.gravityfield.ai/v1/messages"
            ])
        await h.verify()
    }

    // covers: S1
    @Test func shoppingBaseURLIsConfigurable() async {
        let clock = ManualClock()
        let transport = ScriptedTransport(clock: clock) { Issue.record(Comment(rawValue: $0)) }
        let engine = AssistantEngine(
            configuration: AssistantEngineConfiguration(
                apiKey: Fixtures.apiKey, section: Fixtures.section,
                shoppingBaseURL: URL(string: "https://proxy.example/shopping")),
            transport: transport, clock: clock, identityStore: InMemoryIdentityStore(uid: "u-8f3c"))
        await engine.setAssistantProductBlockBuilder(RecordingProductBlockBuilder())
        await engine.setAssistantActionHandler(RecordingActionHandler())
        transport.expect(.request(.post, pathSuffix: "/choose"), .respond(Fixtures.choose()))
        #expect(
            await engine.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
                == .ready)
        let post = transport.expect(.request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m")))
        for _ in 0..<2 { transport.expect(.request(.post, pathSuffix: "/event"), .respond(Fixtures.eventResponse())) }
        _ = await engine.sendMessage("Привет")
        await engine.waitForReply()
        await engine.flushTracking()
        #expect(transport.request(for: post)?.url.absoluteString == "https://proxy.example/shopping/v1/messages")
        #expect(transport.unmetExpectations.isEmpty)
    }

    // covers: S2, S5
    @Test func everyShoppingRequestCarriesTheSectionAsTenantAndNoGravityKey() async throws {
        let h = await EngineHarness()
        await h.prepareReady()
        let post = h.transport.expect(.request(.post, pathSuffix: "/v1/messages"), .deferred)
        h.expectEvents(3)  // send, reply, feedback
        let messageId = try await h.sendAccepted("Помогите выбрать подарок")
        let threadId = try #require(await h.engine.currentThreadId)
        let history = h.transport.expect(
            .request(.get, pathSuffix: "/v1/threads/\(threadId)/messages"),
            .respond(Fixtures.history(threadId: threadId, messageId: messageId, replyId: "am-h")))
        h.transport.complete(post, with: .text(503, ""))
        await h.engine.waitForReply()
        let feedback = h.transport.expect(.request(.post, pathSuffix: "/v1/feedback"), .respond(.text(204, "")))
        try #require(await h.engine.rateReply(assistantMessageId: "am-h", rating: .like) == .sent)
        await h.transport.waitForRequest(feedback)
        await h.verify()

        let shopping = h.transport.shoppingRequests
        #expect(shopping.count == 3)
        for request in shopping {
            #expect(request.header("Content-Type") == "application/json")
            #expect(request.header("Accept") == "application/json")
            #expect(request.header("Authorization") == nil)
            let everything =
                request.url.absoluteString + request.headers.map { "\($0.key): \($0.value)" }.joined()
                + String(decoding: request.body ?? Data(), as: UTF8.self)
            #expect(!everything.contains(Fixtures.apiKey))
            #expect(!everything.localizedCaseInsensitiveContains("bearer"))
        }
        for exchange in [post, feedback] {
            let context = DialogWire.runtimeContext(h.transport.request(for: exchange))
            #expect(context["tenant_id"] as? String == Fixtures.section)
            #expect(context["selector"] as? String == Fixtures.assistantSelector)
            #expect(context["campaignId"] as? String == "c-1")
        }
        #expect(DialogWire.query(h.transport.request(for: history), "tenant_id") == Fixtures.section)
        // Gravity, by contrast, does get the key.
        let gravity = h.transport.requests.filter { $0.url.path.hasSuffix("/choose") }
        #expect(gravity.first?.header("Authorization") == "Bearer \(Fixtures.apiKey)")
    }

    // covers: S3
    @Test func resourceIdIsTheCanonicalUidNeverTheSetUserID() async throws {
        let h = await EngineHarness(storedUID: nil)
        await h.engine.setUser(userId: "manual-7", sessionId: "manual-session")
        await h.prepareWith(Fixtures.choose(uid: "u-canonical"))
        let chooseUser = Fixtures.body(h.transport.requests.first)["user"] as? [String: Any]
        #expect(chooseUser?["custom"] as? String == "manual-7")  // Gravity gets the setUser id as `custom`
        #expect(chooseUser?["uid"] == nil)
        #expect(await h.engine.canonicalUserId == "u-canonical")

        let post = h.transport.expect(
            .request(.post, pathSuffix: "/v1/messages"), .respond(Fixtures.reply(to: "m", assistantMessageId: "am-1")))
        h.expectEvents(3)  // send, reply, feedback
        _ = try await h.sendAccepted("Привет")
        await h.engine.waitForReply()
        let feedback = h.transport.expect(.request(.post, pathSuffix: "/v1/feedback"), .respond(.text(204, "")))
        try #require(await h.engine.rateReply(assistantMessageId: "am-1", rating: .like) == .sent)
        await h.transport.waitForRequest(feedback)
        await h.verify()

        for exchange in [post, feedback] {
            let request = h.transport.request(for: exchange)
            #expect(Fixtures.body(request)["resourceId"] as? String == "u-canonical")
            #expect(DialogWire.runtimeContext(request)["uid"] as? String == "u-canonical")
            let text = String(decoding: request?.body ?? Data(), as: UTF8.self)
            #expect(!text.contains("manual-7"))
        }
    }
}
