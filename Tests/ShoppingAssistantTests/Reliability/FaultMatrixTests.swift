import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// Every endpoint the engine calls × every way a call can go wrong, each with the outcome
/// wire.md § Errors documents. Each endpoint has one test parameterized over all faults, so
/// every pair is a test case of its own; `faultMatrixSize` prints how many there are.
///
/// Every case starts from the same state: a ready preparation, the chat open and one message
/// already answered. After the fault the engine must have settled (nothing left running, so
/// no hang), the earlier messages must still be there, the chat still open with only the
/// assistant's lock held, and the outcome must be the documented one. A Gravity call or a
/// tracking `GET` is tried again within its deadline (DL1) and, if kept, after the queue's
/// pause (DL3): the test moves the engine's manual clock through both before it looks.
@Suite(.timeLimit(.minutes(2)))
struct FaultMatrixTests {
    // MARK: - The faults

    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case connectionRefused, lostAfterSend, transportTimeout
        case badRequest400, unauthorized401, ipNotAllowed403, notFound404, historyNotFound404, messageIdConflict409
        case rateLimited429, internalError500, badGateway502, serviceUnavailable503, gatewayTimeout504
        case malformedJSON, truncatedJSON, wrongFieldTypes, emptyBody, invalidUTF8, fiveMegabyteBody

        var testDescription: String { rawValue }

        /// Whether DL1 tries the call again: a transient failure (cannot connect, connection
        /// lost, timed out) or 408, 429, 5xx. Every other fault is final, or no failure at all.
        var isRetryable: Bool {
            switch self {
            case .connectionRefused, .lostAfterSend, .transportTimeout: return true
            case .rateLimited429, .internalError500, .badGateway502, .serviceUnavailable503, .gatewayTimeout504:
                return true
            default: return false
            }
        }

        /// How many attempts of a Gravity call or tracking `GET` reach the server when the fault
        /// answers every one (DL1, B13): after 1 s, 2 s and 4 s the fourth still starts inside
        /// the 10 s deadline (7 s); a 429 whose `Retry-After` (30 s) does not fit gets none more.
        var attemptsWithinDeadline: Int {
            guard isRetryable else { return 1 }
            return self == .rateLimited429 ? 1 : 4
        }

        /// The HTTP status of a status fault, as `AssistantError.httpStatus` must carry it.
        var httpStatus: Int? {
            switch self {
            case .badRequest400: return 400
            case .unauthorized401: return 401
            case .ipNotAllowed403: return 403
            case .notFound404, .historyNotFound404: return 404
            case .messageIdConflict409: return 409
            case .rateLimited429: return 429
            case .internalError500: return 500
            case .badGateway502: return 502
            case .serviceUnavailable503: return 503
            case .gatewayTimeout504: return 504
            default: return nil
            }
        }

        /// How the transport answers, given the valid answer the endpoint would have had.
        func answer(for endpoint: WireEndpoint, valid: HTTPResponse) -> RoutingTransport.Answer {
            switch self {
            case .connectionRefused: return .fail(.cannotConnect("connection refused"))
            case .lostAfterSend: return .fail(.connectionLost("connection reset by peer"))
            case .transportTimeout: return .fail(.timedOut)
            case .badRequest400: return .respond(Fixtures.errorBody(400, code: "BAD_REQUEST"))
            case .unauthorized401: return .respond(.text(401, ""))
            case .ipNotAllowed403: return .respond(Fixtures.errorBody(403, code: "IP_NOT_ALLOWED"))
            case .notFound404: return .respond(.text(404, "Not Found"))
            case .historyNotFound404: return .respond(Fixtures.errorBody(404, code: "SHOPPING_HISTORY_NOT_FOUND"))
            case .messageIdConflict409: return .respond(Fixtures.errorBody(409, code: "MESSAGE_ID_CONFLICT"))
            case .rateLimited429:
                var response = Fixtures.errorBody(429, code: "RATE_LIMITED")
                response.headers["Retry-After"] = "30"
                return .respond(response)
            case .internalError500: return .respond(.text(500, "Internal Server Error"))
            case .badGateway502: return .respond(.text(502, "<html><body>Bad Gateway</body></html>"))
            case .serviceUnavailable503: return .respond(Fixtures.errorBody(503, code: "UNAVAILABLE"))
            case .gatewayTimeout504: return .respond(.text(504, ""))
            case .malformedJSON: return .respond(.text(200, #"{"user": {"uid": 'u-8f3c',}, data: [}"#))
            case .truncatedJSON:
                return .respond(HTTPResponse(status: 200, body: valid.body.prefix(valid.body.count / 2)))
            case .wrongFieldTypes: return .respond(Self.wrongFieldTypes(endpoint))
            case .emptyBody: return .respond(HTTPResponse(status: 200))
            case .invalidUTF8: return .respond(HTTPResponse(status: 200, body: Self.invalidUTF8Body))
            case .fiveMegabyteBody: return .respond(Self.padded(valid, bytes: 5 * 1024 * 1024))
            }
        }

        /// The endpoint's envelope with its known fields in the wrong JSON types. For a reply,
        /// whose envelope is any object, the items carry the wrong types instead (PR1).
        static func wrongFieldTypes(_ endpoint: WireEndpoint) -> HTTPResponse {
            switch endpoint {
            case .choose: return .json(200, ["user": ["uid": 42, "ses": true], "data": ["selector": 7]])
            case .visit, .event: return .json(200, ["user": ["uid": 42], "campaigns": "none"])
            case .history: return .json(200, ["threadId": 5, "messages": "none"])
            case .messages:
                return .json(
                    200,
                    [
                        "assistantMessageId": "am-typed", "text": "Ответ с кривыми полями", "events": "none",
                        "products": [
                            "title": 5,
                            "items": [
                                ["itemId": ["nested": true], "name": 6],
                                ["itemId": "p-typed", "name": "Кружка", "price": [1], "sku": true, "imageUrl": 3],
                                "not an item",
                            ],
                        ],
                        "ui": ["suggests": "none", "buttons": [9, ["value": "без действия"]]],
                    ])
            case .feedback, .tracking: return .json(200, ["ok": "yes", "status": [1, 2]])
            }
        }

        /// JSON with invalid UTF-8 inside the strings every decoder reads (`user.uid`, `text`).
        static let invalidUTF8Body: Data = {
            var data = Data(#"{"user": {"uid": "u-"#.utf8)
            data.append(contentsOf: [0xFF, 0xFE, 0xC3, 0x28])
            data.append(contentsOf: Data(#"", "ses": "s-1"}, "text": ""#.utf8))
            data.append(contentsOf: [0xED, 0xA0, 0x80, 0xC0, 0xAF])
            data.append(contentsOf: Data(#"", "messages": [], "data": []}"#.utf8))
            return data
        }()

        /// A valid answer with an unknown field of `bytes` bytes in front; an empty answer
        /// becomes an object holding only that field.
        static func padded(_ response: HTTPResponse, bytes: Int) -> HTTPResponse {
            var body = Data(#"{"padding":""#.utf8)
            body.append(Data(repeating: UInt8(ascii: "x"), count: bytes))
            body.append(contentsOf: Data("\"".utf8))
            if response.body.count > 2, response.body.first == UInt8(ascii: "{") {
                body.append(contentsOf: Data(",".utf8))
                body.append(response.body.dropFirst())
            } else {
                body.append(contentsOf: Data("}".utf8))
            }
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: body)
        }
    }

    // MARK: - The documented outcomes (wire.md § Errors)

    enum Outcome: Equatable, CustomStringConvertible {
        case success
        /// `uncertain`: the request may have reached the server (D5).
        case failure(AssistantError.Code, uncertain: Bool)

        var code: AssistantError.Code? {
            if case .failure(let code, _) = self { return code }
            return nil
        }

        var isUncertain: Bool {
            if case .failure(_, true) = self { return true }
            return false
        }

        var description: String {
            switch self {
            case .success: return "success"
            case .failure(let code, let uncertain): return "\(code.rawValue)\(uncertain ? " (uncertain)" : "")"
            }
        }
    }

    /// What wire.md says a fault on an endpoint produces. Written from the spec's table, not
    /// from the engine's mapping code, so a divergence in either shows up here.
    static func documentedOutcome(_ endpoint: WireEndpoint, _ fault: Fault) -> Outcome {
        // Endpoints whose 2xx body the engine reads; feedback and tracking only need a 2xx.
        let readsBody: Set<WireEndpoint> = [.choose, .visit, .event, .messages, .history]
        // `/visit` and `/event` answers carry nothing the engine needs, so an empty 2xx is fine.
        let needsBody: Set<WireEndpoint> = [.choose, .messages, .history]
        switch fault {
        case .connectionRefused: return .failure(.network, uncertain: false)
        case .lostAfterSend: return .failure(.network, uncertain: true)
        case .transportTimeout: return .failure(.timeout, uncertain: true)
        case .badRequest400, .notFound404, .internalError500: return .failure(.server, uncertain: false)
        case .unauthorized401, .ipNotAllowed403: return .failure(.unauthorized, uncertain: false)
        case .historyNotFound404: return .failure(.historyUnavailable, uncertain: false)
        case .messageIdConflict409: return .failure(.messageConflict, uncertain: false)
        case .rateLimited429: return .failure(.rateLimited, uncertain: false)
        case .badGateway502, .serviceUnavailable503, .gatewayTimeout504: return .failure(.server, uncertain: true)
        case .malformedJSON, .truncatedJSON, .invalidUTF8:
            return readsBody.contains(endpoint) ? .failure(.invalidResponse, uncertain: false) : .success
        case .emptyBody:
            return needsBody.contains(endpoint) ? .failure(.invalidResponse, uncertain: false) : .success
        case .wrongFieldTypes:
            // A reply's envelope is any object; its malformed items are dropped (PR1).
            return readsBody.contains(endpoint) && endpoint != .messages
                ? .failure(.invalidResponse, uncertain: false) : .success
        case .fiveMegabyteBody: return .success
        }
    }

    // MARK: - Matrix size

    @Test func faultMatrixSize() {
        let endpoints = WireEndpoint.allCases.count
        let faults = Fault.allCases.count
        let cases = endpoints * faults
        print("Fault matrix: \(endpoints) endpoints × \(faults) faults = \(cases) cases")
        #expect(cases == 140)
        let outcomes = WireEndpoint.allCases.flatMap { endpoint in
            Fault.allCases.map { Self.documentedOutcome(endpoint, $0) }
        }
        #expect(outcomes.count == cases)
        // Only `/v1/messages` acts on uncertainty, but every endpoint classifies it the same way.
        #expect(Fault.allCases.filter { Self.documentedOutcome(.messages, $0).isUncertain }.count == 5)
    }

    // MARK: - Gravity /choose

    // The fault answers every attempt: a retryable one is tried four times within the 10 s
    // deadline, with the same bytes, before the documented error; a final one once.
    // covers: P6, S6, DL1, B13
    @Test(arguments: Fault.allCases)
    func prepareAssistantReportsTheDocumentedErrorAndKeepsTheOpenDialog(_ fault: Fault) async throws {
        let scene = try await Scene.start()
        let expected = Self.documentedOutcome(.choose, fault)
        let attempts = fault.attemptsWithinDeadline
        scene.h.routes.arm(fault.answer(for: .choose, valid: Fixtures.choose()), for: .choose, times: attempts)

        let call = scene.h.bed.start {
            await $0.prepareAssistant(assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.homePage)
        }
        await scene.h.settle()
        if attempts > 1 { #expect(call.returnedValue == nil, "the second attempt waits a second on the clock") }
        await scene.passRetrySteps(attempts)
        let result = try #require(call.returnedValue, "prepareAssistant never returned")

        switch expected {
        case .success:
            #expect(result == .ready)
        case .failure(let code, _):
            guard case .failure(let error) = result else {
                Issue.record("expected failure(\(code.rawValue)), got \(result)")
                return
            }
            #expect(error.code == code)
            #expect(error.httpStatus == fault.httpStatus)
            if code == .rateLimited { #expect(error.message.contains("Retry-After: 30")) }
            #expect(await scene.h.engine.preparationState == .failed)
        }
        let chooses = scene.h.routes.requests(to: .choose)
        #expect(chooses.count == 1 + attempts, "the scene's own and \(attempts) attempt(s)")
        let bodies = chooses.dropFirst().map(\.body)
        #expect(bodies.allSatisfy { $0 == bodies.first }, "every attempt sends the same bytes")
        await scene.expectIntact()
    }

    // covers: B5, DL1
    @Test(arguments: Fault.allCases)
    func getContentBySelectorReturnsNilAndLogsTheFailure(_ fault: Fault) async throws {
        let scene = try await Scene.start()
        let expected = Self.documentedOutcome(.choose, fault)
        let attempts = fault.attemptsWithinDeadline
        scene.h.routes.arm(
            fault.answer(for: .choose, valid: Fixtures.choose(selector: "assistant-entry")), for: .choose,
            times: attempts)
        let logsBefore = scene.h.logs.messages.count

        let call = scene.h.bed.start {
            await $0.getContentBySelector(selector: "assistant-entry", pageContext: Fixtures.homePage)
        }
        await scene.h.settle()
        await scene.passRetrySteps(attempts)
        let content = try #require(call.returnedValue, "getContentBySelector never returned")

        let logged = scene.h.logs.messages.dropFirst(logsBefore).filter { $0.contains("/choose") }
        switch expected {
        case .success:
            #expect(content != nil)
            #expect(content?.variations.first?.contents.first?.custom?.json == Fixtures.configurationJSON)
            #expect(logged.isEmpty)
        case .failure(let code, _):
            #expect(content == nil)
            #expect(logged.count == 1, "one logged failure, after the last attempt: \(logged)")
            #expect(Self.mentions(logged, code), "\(logged) should name \(code.rawValue)")
        }
        #expect(scene.h.routes.requests(to: .choose).count == 1 + attempts, "retried per DL1, never more")
        #expect(await scene.h.engine.preparationState == .ready)
        #expect(await scene.h.engine.canonicalUserId == "u-8f3c")
        await scene.expectIntact()
    }

    // MARK: - Gravity /visit

    // A failed `/visit` is logged once; one that still fails transiently or with a server
    // status after its attempts within the deadline is kept and sent again after the queue's
    // first pause, a final one is dropped; nothing else changes.
    // covers: B5, DL1, DL2, DL3
    @Test(arguments: Fault.allCases)
    func trackViewFailureIsLoggedAndOnlyTheQueueChanges(_ fault: Fault) async throws {
        let scene = try await Scene.start()
        let expected = Self.documentedOutcome(.visit, fault)
        let attempts = fault.attemptsWithinDeadline
        let kept = expected != .success && fault.isRetryable
        scene.h.routes.arm(fault.answer(for: .visit, valid: Fixtures.eventResponse()), for: .visit, times: attempts)
        let logsBefore = scene.h.logs.messages.count

        let call = scene.h.bed.start {
            await $0.trackView(pageContext: Fixtures.homePage)
            return true
        }
        await scene.h.settle()
        await scene.passRetrySteps(attempts)
        #expect(call.returnedValue == true, "trackView never returned")
        #expect(scene.h.routes.requests(to: .visit).count == attempts, "tried per DL1 within its deadline")
        #expect(await scene.h.engine.pendingDeliveries == (kept ? 1 : 0))

        let logged = Array(scene.h.logs.messages.dropFirst(logsBefore))
        let keptLines = logged.filter { $0.contains("delivery: visit screenview not delivered yet") }
        let dropped = logged.filter { $0.contains("delivery: visit screenview dropped (rejected)") }
        switch expected {
        case .success:
            #expect(logged.isEmpty)
        case .failure(let code, _):
            let failure = logged.filter { $0.contains("/visit") || $0.contains("undecodable event response") }
            #expect(failure.count == 1, "one logged failure: \(logged)")
            #expect(Self.mentions(failure, code), "\(failure) should name \(code.rawValue)")
            #expect(keptLines.count == (kept ? 1 : 0), "\(logged)")
            #expect(dropped.count == (!kept && fault.httpStatus != nil ? 1 : 0), "\(logged)")
        }

        // The queue's first pause (5 s ±20 %) ends: a kept visit is sent once more and delivered.
        await scene.passFirstPause()
        let visits = scene.h.routes.requests(to: .visit)
        #expect(visits.count == attempts + (kept ? 1 : 0))
        #expect(visits.allSatisfy { $0.body == visits.first?.body }, "the queue sends the bytes first written")
        #expect(await scene.h.engine.pendingDeliveries == 0)
        await scene.passLongAfter()
        #expect(scene.h.routes.requests(to: .visit).count == visits.count, "never more")
        #expect(await scene.h.engine.canonicalUserId == "u-8f3c")
        #expect(await scene.h.engine.preparationState == .ready)
        await scene.expectIntact()
    }

    // MARK: - Gravity /event (lifecycle events)

    // The message lands at once; its `chat_message_send` is tried per DL1 within its deadline
    // (one record), and one still failing transiently or with a server status is kept and
    // delivered after the queue's first pause (a second, deferred record), never more.
    // covers: DL1, DL2, DL3, DL6
    @Test(arguments: Fault.allCases)
    func lifecycleEventFailureIsRetriedThenKeptAndTheMessageStillLands(_ fault: Fault) async throws {
        let scene = try await Scene.start()
        let expected = Self.documentedOutcome(.event, fault)
        let attempts = fault.attemptsWithinDeadline
        let kept = expected != .success && fault.isRetryable
        // The next lifecycle event is the second message's chat_message_send.
        scene.h.routes.arm(
            fault.answer(for: .event, valid: Fixtures.eventResponse()), for: .event, times: attempts)

        let messageId = try await scene.send("Второе сообщение").get()
        let snapshot = await scene.h.engine.chatSnapshot
        #expect(snapshot.messages.map(\.id).dropFirst(scene.earlier.count).first == messageId)
        #expect(snapshot.messages.last?.role == .assistant)
        #expect(snapshot.messages.dropFirst(scene.earlier.count).first?.status == .sent)

        await scene.passRetrySteps(attempts)
        func sendEvents() async -> [TrackingRecord] {
            await scene.h.engine.trackingLog.filter {
                $0.kind == .event && $0.name == "chat_message_send" && $0.properties["messageId"] == messageId
            }
        }
        func sent() -> [HTTPRequest] {
            scene.h.routes.requests(to: .event).filter {
                PrepFixtures.bodyText($0).contains(messageId) && PrepFixtures.bodyText($0).contains("chat_message_send")
            }
        }
        let first = await sendEvents().prefix(1)
        let network = [.connectionRefused, .lostAfterSend, .transportTimeout].contains(fault)
        if network {
            // The lifecycle events behind it succeed at once, which ends a pause that followed
            // a network failure (DL3): the kept event is delivered then, deferred.
            let records = await sendEvents()
            #expect(records.count == 2, "\(records)")
            #expect(records.last?.deferred == true && records.last?.failure == nil)
        } else {
            #expect(await sendEvents().count == 1, "one record for the attempts within the deadline")
        }
        #expect(first.first?.failure == expected.code?.rawValue)
        #expect(first.first?.deferred == false)
        #expect(first.first?.properties["attempt"] == "1")
        #expect(first.first?.eventTime != nil, "every event carries its eventTime")
        #expect(sent().count == attempts + (network ? 1 : 0), "tried per DL1 within its deadline")
        #expect(await scene.h.engine.pendingDeliveries == (kept && !network ? 1 : 0))

        await scene.passFirstPause()
        await scene.passLongAfter()
        let records = await sendEvents()
        expectDeliveredFromTheQueueOnce(records, kept: kept)
        if kept { #expect(records.last?.eventTime == first.first?.eventTime, "the time it was raised stays") }
        let bodies = sent().map(\.body)
        #expect(bodies.count == attempts + (kept ? 1 : 0))
        #expect(bodies.allSatisfy { $0 == bodies.first }, "the same bytes every time")
        #expect(bodies.first.map { String(decoding: $0 ?? Data(), as: UTF8.self).contains("\"eventTime\"") } == true)
        #expect(await scene.h.engine.pendingDeliveries == 0)
        await scene.expectIntact()
    }

    // MARK: - Shopping POST /v1/messages

    // covers: D4, D5, D8, D9, D10, S6, PR1
    @Test(arguments: Fault.allCases)
    func messageFaultKeepsTheTextAndReadsHistoryOnlyWhenTheOutcomeIsUncertain(_ fault: Fault) async throws {
        let scene = try await Scene.start()
        let expected = Self.documentedOutcome(.messages, fault)
        let valid = Fixtures.reply(to: "m", assistantMessageId: "am-2")
        scene.h.routes.arm(fault.answer(for: .messages, valid: valid), for: .messages)
        let text = "Второе сообщение"

        let messageId = try await scene.send(text).get()

        let snapshot = await scene.h.engine.chatSnapshot
        let new = Array(snapshot.messages.dropFirst(scene.earlier.count))
        let user = try #require(new.first)
        #expect(user.id == messageId)
        #expect(user.role == .user)
        #expect(user.text == text)
        #expect(!snapshot.isSending)
        #expect(await scene.h.engine.dialogState == .active)
        #expect(snapshot.canSend)
        #expect(scene.h.routes.requests(to: .messages).count == 2, "never resent automatically")
        #expect(
            scene.h.routes.requests(to: .history).count == (expected.isUncertain ? 1 : 0),
            "history is read exactly when the outcome is uncertain")
        switch expected {
        case .success:
            #expect(user.status == .sent)
            #expect(new.count == 2)
            let reply = try #require(new.last)
            #expect(reply.role == .assistant)
            if fault == .wrongFieldTypes {
                #expect(reply.id == "am-typed")
                #expect(reply.text == "Ответ с кривыми полями")
                // The item whose optional fields have the wrong types is kept without them.
                #expect(reply.productBlock?.products.map(\.itemId) == ["p-typed"])
                #expect(reply.productBlock?.products.first?.price == nil)
                #expect(reply.buttons.isEmpty)
                #expect(scene.h.logs.messages.filter { $0.contains("dialog: dropped") }.count == 4)
            } else {
                #expect(reply.id == "am-2")
                #expect(reply.productBlock?.products.map(\.itemId) == ["p-1"])
            }
        case .failure(let code, _):
            #expect(new.count == 1, "no reply appears: \(new.map(\.id))")
            guard case .failed(let error) = user.status else {
                Issue.record("the message did not fail: \(user.status)")
                return
            }
            #expect(error.code == code)
            #expect(error.httpStatus == fault.httpStatus)
            if code == .rateLimited { #expect(error.message.contains("Retry-After: 30")) }
            #expect(user.canRetry == (code != .messageConflict))
        }
        await scene.expectIntact()
    }

    // MARK: - Shopping GET /v1/threads/{id}/messages

    // covers: D5, D9, D10
    @Test(arguments: Fault.allCases)
    func historyFaultFailsTheMessageWithItsOwnErrorAndErasesNothing(_ fault: Fault) async throws {
        let scene = try await Scene.start()
        let expected = Self.documentedOutcome(.history, fault)
        let text = "Второе сообщение"
        scene.h.routes.arm(.hold, for: .messages)
        let sent = try #require(await scene.h.settle { await $0.sendMessage(text) })
        let messageId = try sent.get()
        let threadId = try #require(await scene.h.engine.currentThreadId)
        let post = try #require(scene.h.routes.held.first { $0.endpoint == .messages })
        let valid = Fixtures.history(threadId: threadId, messageId: messageId, replyId: "am-h")
        scene.h.routes.arm(fault.answer(for: .history, valid: valid), for: .history)

        // A 503 may have reached the server: the engine reads the history (D5).
        scene.h.routes.release(post.id, with: .success(Fixtures.errorBody(503, code: "UNAVAILABLE")))
        await scene.h.settle()

        let snapshot = await scene.h.engine.chatSnapshot
        let new = Array(snapshot.messages.dropFirst(scene.earlier.count))
        let user = try #require(new.first)
        #expect(user.id == messageId)
        #expect(user.text == text)
        #expect(!snapshot.isSending)
        #expect(scene.h.routes.requests(to: .history).count == 1, "history is read once, never again")
        #expect(scene.h.routes.requests(to: .messages).count == 2, "never resent automatically")
        #expect(await scene.h.engine.currentThreadId == threadId)
        switch expected {
        case .success:
            // The padded history holds the reply: it is adopted.
            #expect(user.status == .sent)
            #expect(new.map(\.id) == [messageId, "am-h"])
        case .failure(let code, _):
            #expect(new.count == 1)
            guard case .failed(let error) = user.status else {
                Issue.record("the message did not fail: \(user.status)")
                return
            }
            // The user sees the send's own error; the history failure is part of it, in one log line.
            #expect(error.code == .server)
            #expect(error.httpStatus == 503)
            #expect(error.message.contains("history could not be read: \(code.rawValue)"))
            #expect(user.canRetry)
            #expect(
                scene.h.logs.messages.filter { $0.contains("history could not be read: \(code.rawValue)") }.count == 1)
        }
        await scene.expectIntact()
    }

    // MARK: - Shopping POST /v1/feedback

    // covers: D11
    @Test(arguments: Fault.allCases)
    func feedbackFailureIsLoggedSentOnceAndTheRatingOfferedAgain(_ fault: Fault) async throws {
        let scene = try await Scene.start()
        let expected = Self.documentedOutcome(.feedback, fault)
        scene.h.routes.arm(fault.answer(for: .feedback, valid: ProductFixtures.ok), for: .feedback)
        let logsBefore = scene.h.logs.messages.count
        let errorsBefore = scene.h.logs.errors.count
        let replyId = try #require(scene.earlier.last?.id)

        let rated = await scene.h.settle { await $0.rateReply(assistantMessageId: replyId, rating: .like) }
        #expect(rated == .sent)

        #expect(scene.h.routes.requests(to: .feedback).count == 1, "one rating request, never retried")
        let reply = await scene.h.engine.chatSnapshot.messages.first { $0.id == replyId }
        let logged = scene.h.logs.messages.dropFirst(logsBefore).filter { $0.contains("/v1/feedback") }
        switch expected {
        case .success:
            #expect(reply?.rating == .like)
            #expect(reply?.canRate == false)
            #expect(logged.isEmpty)
        case .failure(let code, _):
            #expect(reply?.rating == nil)
            #expect(reply?.canRate == true)
            #expect(logged.count == 1, "one logged failure: \(logged)")
            #expect(Self.mentions(logged, code), "\(logged) should name \(code.rawValue)")
            // The rating is offered again: a handled failure is a note, not an error (B2).
            #expect(scene.h.logs.errors.dropFirst(errorsBefore).isEmpty)
        }
        await scene.expectIntact(comparingRatings: false)
    }

    // MARK: - Tracking URL GET

    // A tracking GET is tried per DL1 within its deadline (one record); one still failing
    // transiently or with a server status is kept and sent again after the queue's first
    // pause (a second, deferred record), never more; a final failure is dropped.
    // covers: AN5, DL1, DL2, DL3
    @Test(arguments: Fault.allCases)
    func trackingURLFailureIsRetriedWithinItsDeadlineThenKeptForTheQueue(_ fault: Fault) async throws {
        let scene = try await Scene.start()
        let expected = Self.documentedOutcome(.tracking, fault)
        let attempts = fault.attemptsWithinDeadline
        let kept = expected != .success && fault.isRetryable
        scene.h.routes.arm(fault.answer(for: .tracking, valid: ProductFixtures.ok), for: .tracking, times: attempts)
        let product = try #require(scene.earlier.last?.productBlock?.products.first)

        let result = await scene.h.settle {
            await $0.performAssistantProductAction(product: product.ref, action: .visibleImpression)
        }
        #expect(result == .accepted)
        await scene.passRetrySteps(attempts)

        let url = "https://t.example/vi?i=p-1"
        func records() async -> [TrackingRecord] {
            await scene.h.engine.trackingLog.filter { $0.kind == .url && $0.name == url }
        }
        func requests() -> Int { scene.h.routes.requests(to: .tracking).filter { $0.url.absoluteString == url }.count }
        let first = await records()
        #expect(first.count == 1, "one record for the attempts within the deadline: \(first)")
        #expect(first.first?.failure == expected.code?.rawValue)
        #expect(first.first?.deferred == false)
        #expect(first.first?.uid == "u-8f3c")
        #expect(requests() == attempts, "tried per DL1 within its deadline")
        #expect(await scene.h.engine.pendingDeliveries == (kept ? 1 : 0))

        await scene.passFirstPause()
        await scene.passLongAfter()
        let all = await records()
        expectDeliveredFromTheQueueOnce(all, kept: kept)
        if kept { #expect(all.last?.uid == "u-8f3c") }
        #expect(requests() == attempts + (kept ? 1 : 0))
        #expect(await scene.h.engine.pendingDeliveries == 0)
        await scene.expectIntact()
    }

    // MARK: - Helpers

    /// Whether a log line names the error code. An undecodable 2xx is logged as "undecodable".
    static func mentions(_ lines: some Collection<String>, _ code: AssistantError.Code) -> Bool {
        lines.contains { line in
            let named = line.contains(code.rawValue) || (code == .invalidResponse && line.contains("undecodable"))
            return named && (code != .rateLimited || line.contains("Retry-After: 30"))
        }
    }

    /// The common starting point: ready, open, one message answered.
    struct Scene {
        let h: EngineHarness
        let earlier: [AssistantChatMessage]
        let threadId: String

        static func start(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Scene {
            let h = await EngineHarness(responder: Self.validAnswer)
            let prepared = await h.settle {
                await $0.prepareAssistant(
                    assistantSelector: Fixtures.assistantSelector, pageContext: Fixtures.productPage)
            }
            try #require(prepared == .ready, sourceLocation: sourceLocation)
            let presenter = h.presenter
            let opened = await h.settle { await $0.openAssistant(presenter: presenter) }
            try #require(opened == .opened, sourceLocation: sourceLocation)
            let sent = await h.settle { await $0.sendMessage("Первое сообщение") }
            let messageId = try #require(try sent?.get(), sourceLocation: sourceLocation)
            let snapshot = await h.engine.chatSnapshot
            try #require(snapshot.messages.map(\.id) == [messageId, "am-1"], sourceLocation: sourceLocation)
            let threadId = try #require(await h.engine.currentThreadId, sourceLocation: sourceLocation)
            return Scene(h: h, earlier: Array(snapshot.messages), threadId: threadId)
        }

        /// Every endpoint's valid answer; each reply gets the next assistant message ID.
        static let validAnswer: RoutingTransport.Responder = { endpoint, request in
            switch endpoint {
            case .choose: return .respond(Fixtures.choose())
            case .visit, .event: return .respond(Fixtures.eventResponse())
            case .messages:
                // Sequential message IDs end in their number: the reply to message 1 is am-1.
                let messageId = Fixtures.body(request)["messageId"] as? String ?? "?"
                return .respond(
                    Fixtures.reply(to: messageId, assistantMessageId: "am-\(Int(messageId.suffix(12)) ?? 0)"))
            case .history:
                return .respond(.json(200, ["threadId": "t", "messages": [] as [Any]]))
            case .feedback, .tracking: return .respond(ProductFixtures.ok)
            }
        }

        /// Moves the engine's clock through DL1's pauses before the second, third and fourth
        /// attempts (1 s, 2 s, 4 s), as many as `attempts` calls for, settling after each: a call
        /// that meets the fault every time has then made its last attempt.
        func passRetrySteps(_ attempts: Int) async {
            for step in [1, 2, 4].prefix(attempts - 1) {
                h.clock.advance(by: .seconds(step))
                await h.settle()
            }
        }

        /// Moves the clock past the queue's first pause (5 s ±20 %, DL3).
        func passFirstPause() async {
            h.clock.advance(by: .seconds(6))
            await h.settle()
        }

        /// Moves the clock an hour on, past every later pause.
        func passLongAfter() async {
            h.clock.advance(by: .seconds(3600))
            await h.settle()
        }

        /// Sends `text` and waits until the engine settled.
        func send(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Result<
            String, AssistantSendRefusal
        > {
            try #require(await h.settle { await $0.sendMessage(text) }, sourceLocation: sourceLocation)
        }

        /// The earlier messages are still there, in the same dialog, and the chat is open with
        /// only the assistant's lock held; nothing is left running or in flight.
        func expectIntact(comparingRatings: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async {
            let snapshot = await h.engine.chatSnapshot
            let now = Array(snapshot.messages.prefix(earlier.count))
            func key(_ message: AssistantChatMessage) -> String {
                "\(message.id)|\(message.role)|\(message.text)|\(message.status)"
                    + (comparingRatings ? "|\(String(describing: message.rating))" : "")
            }
            #expect(now.map(key) == earlier.map(key), "earlier messages intact", sourceLocation: sourceLocation)
            #expect(await h.engine.currentThreadId == threadId, sourceLocation: sourceLocation)
            #expect(await h.engine.isAssistantOpen, sourceLocation: sourceLocation)
            #expect(
                await h.engine.presentationLocks == PresentationLocks(app: false, assistant: true),
                sourceLocation: sourceLocation)
            #expect(h.presenter.count(.dismiss) == 0, sourceLocation: sourceLocation)
            #expect(await h.engine.dialogState != .sending, sourceLocation: sourceLocation)
            #expect(h.routes.held.isEmpty, sourceLocation: sourceLocation)
            #expect(h.clock.sleeperCount == 0, "no timer left running", sourceLocation: sourceLocation)
            #expect(h.activity.busy == 0, sourceLocation: sourceLocation)
        }
    }
}
