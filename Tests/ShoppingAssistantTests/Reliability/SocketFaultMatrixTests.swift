import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The fault matrix again, end to end: every endpoint the engine calls × every way the
/// loopback server misbehaves, through each real transport (`URLSessionTransport`,
/// `CurlTransport`) and real sockets. Each case
/// asserts the outcome wire.md § Errors documents, that the user's text is kept, that the
/// earlier dialog is intact, and that the engine settles: nothing sending or preparing, no
/// timer on the engine's clock, no deadline on the transport's, no connection left open.
///
/// A stalled answer is ended by the engine's own timeout (10 s preparation, 120 s reply, 30 s
/// history check) where the call has one, else by the transport's 130 s deadline; both run on
/// manual clocks that the test moves once the server reports the stall, and the cancellation
/// must close the connection. Cases run at most three at a time (`AsyncLimiter`).
@Suite(.timeLimit(.minutes(15)))
struct SocketFaultMatrixTests {
    static let limiter = AsyncLimiter(width: 3)
    typealias FaultCase = LoopbackFaultTransportTests.FaultCase
    static let faults = FaultCase.all

    // MARK: - The documented outcomes (wire.md § Errors)

    enum Outcome: Equatable, CustomStringConvertible {
        case success
        /// `uncertain`: the request may have reached the server (D5).
        case failure(AssistantError.Code, uncertain: Bool, httpStatus: Int?)

        var code: AssistantError.Code? {
            if case .failure(let code, _, _) = self { return code }
            return nil
        }

        var isUncertain: Bool {
            if case .failure(_, true, _) = self { return true }
            return false
        }

        var httpStatus: Int? {
            if case .failure(_, _, let status) = self { return status }
            return nil
        }

        var description: String {
            switch self {
            case .success: "success"
            case .failure(let code, let uncertain, let status):
                "\(code.rawValue)\(status.map { " (HTTP \($0))" } ?? "")\(uncertain ? " uncertain" : "")"
            }
        }
    }

    /// What wire.md says a fault on an endpoint produces, from what the transport makes of
    /// the fault (`LoopbackFault.transportOutcome`, checked by `LoopbackFaultTransportTests`).
    static func documentedOutcome(_ endpoint: SocketEndpoint, _ faultCase: FaultCase) -> Outcome {
        let valid = endpoint == .tracking ? 0 : 100
        let fault = faultCase.fault
        let transport = fault.transportOutcome(
            method: endpoint.method, policy: endpoint.redirectPolicy, limit: endpoint.maximumResponseBytes,
            validBytes: valid, transport: faultCase.transport)
        switch transport {
        case .cannotConnect: return .failure(.network, uncertain: false, httpStatus: nil)
        case .connectionLost: return .failure(.network, uncertain: true, httpStatus: nil)
        case .stall: return .failure(.timeout, uncertain: true, httpStatus: nil)
        case .tooLarge(let status):
            return (200..<300).contains(status)
                ? .failure(.invalidResponse, uncertain: false, httpStatus: nil) : statusOutcome(status, fault)
        case .response(let status, let body):
            guard (200..<300).contains(status) else { return statusOutcome(status, fault) }
            // Endpoints whose 2xx body the engine reads; `/visit` and `/event` accept an empty one.
            let readsBody: Set<SocketEndpoint> = [.chooseAssistant, .chooseEntry, .visit, .event, .messages, .history]
            let needsBody: Set<SocketEndpoint> = [.chooseAssistant, .chooseEntry, .messages, .history]
            let invalid = Outcome.failure(.invalidResponse, uncertain: false, httpStatus: nil)
            switch body {
            case .valid, .errorBody: return .success
            case .empty: return needsBody.contains(endpoint) ? invalid : .success
            case .undecodable: return readsBody.contains(endpoint) ? invalid : .success
            // A reply's envelope is any object; its malformed items are dropped (PR1).
            case .wrongTypes: return readsBody.contains(endpoint) && endpoint != .messages ? invalid : .success
            }
        }
    }

    static func statusOutcome(_ status: Int, _ fault: LoopbackFault) -> Outcome {
        let code: AssistantError.Code
        switch (status, fault) {
        case (401, _), (403, _): code = .unauthorized
        case (404, .status404HistoryNotFound): code = .historyUnavailable
        case (409, .status409Conflict): code = .messageConflict
        case (429, _): code = .rateLimited
        default: code = .server
        }
        return .failure(code, uncertain: [502, 503, 504].contains(status), httpStatus: status)
    }

    @Test func matrixSize() {
        let cases = SocketEndpoint.allCases.count * Self.faults.count
        print(
            "Socket fault matrix: \(SocketEndpoint.allCases.count) endpoints × \(Self.faults.count) faults "
                + "(\(LoopbackFault.allCases.count) on each transport, less what URLSession cannot survive) = \(cases) cases"
        )
        #expect(cases >= 1_000)
    }

    // MARK: - The scene every case starts from: ready, open, one message answered

    struct Scene {
        let s: SocketScene
        let earlier: [AssistantChatMessage]
        let threadId: String

        static func start(_ kind: TransportKind, sourceLocation: SourceLocation = #_sourceLocation) async throws
            -> Scene
        {
            let s = try await SocketScene(kind)
            let prepared = await s.settle {
                await $0.prepareAssistant(
                    assistantSelector: SocketEndpoint.assistantSelector, pageContext: SocketScene.productPage)
            }
            try #require(prepared == .ready, sourceLocation: sourceLocation)
            let presenter = s.presenter
            let opened = await s.settle { await $0.openAssistant(presenter: presenter) }
            try #require(opened == .opened, sourceLocation: sourceLocation)
            let sent = await s.settle { await $0.sendMessage("Первое сообщение") }
            let messageId = try #require(try sent?.get(), sourceLocation: sourceLocation)
            let snapshot = await s.engine.chatSnapshot
            try #require(
                snapshot.messages.map(\.id) == [messageId, LoopbackBackend.assistantAnswerID(messageId)],
                sourceLocation: sourceLocation)
            let threadId = try #require(await s.engine.currentThreadId, sourceLocation: sourceLocation)
            return Scene(s: s, earlier: Array(snapshot.messages), threadId: threadId)
        }

        /// Runs the engine call that meets the fault, ends a stall if the fault stalls, and
        /// waits until the engine has settled.
        func run<Value: Sendable>(
            _ fault: LoopbackFault, on endpoint: SocketEndpoint, sourceLocation: SourceLocation = #_sourceLocation,
            _ body: @escaping @Sendable (AssistantEngine) async -> Value
        ) async -> Value? {
            let call = s.start(body)
            if fault.stalls { await s.endStall(of: endpoint, sourceLocation: sourceLocation) }
            return await s.finish(call, sourceLocation: sourceLocation)
        }

        /// The earlier messages are there, in the same dialog, the chat open, and nothing is
        /// left running or open.
        func expectIntact(comparingRatings: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async {
            let snapshot = await s.engine.chatSnapshot
            func key(_ message: AssistantChatMessage) -> String {
                "\(message.id)|\(message.role)|\(message.text)|\(message.status)"
                    + (comparingRatings ? "|\(String(describing: message.rating))" : "")
            }
            #expect(
                snapshot.messages.prefix(earlier.count).map(key) == earlier.map(key), "earlier messages intact",
                sourceLocation: sourceLocation)
            #expect(await s.engine.currentThreadId == threadId, sourceLocation: sourceLocation)
            #expect(await s.engine.isAssistantOpen, sourceLocation: sourceLocation)
            #expect(s.presenter.dismissals == 0, sourceLocation: sourceLocation)
            await s.expectSettled(sourceLocation: sourceLocation)
        }

        /// Log lines since `start` that name the failure.
        func logged(since start: Int, containing part: String) -> [String] {
            s.logLines.dropFirst(start).filter { $0.contains(part) }
        }
    }

    /// Whether a log line names the error code (the transport-seam matrix's reading).
    static func mentions(_ lines: some Collection<String>, _ code: AssistantError.Code) -> Bool {
        FaultMatrixTests.mentions(lines, code)
    }

    /// The cross-host redirect reached the second host only where the policy allows it.
    static func expectSecondHost(
        _ scene: Scene, _ fault: LoopbackFault, _ endpoint: SocketEndpoint, attempts: Int = 1,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let crossed = scene.s.backend.otherHost.receivedRequests
        let expected =
            (fault == .redirect302OtherHost || fault == .redirect307OtherHost)
                && fault.redirectIsFollowed(method: endpoint.method, policy: endpoint.redirectPolicy) ? attempts : 0
        #expect(crossed.count == expected, "second host reached \(crossed.count) times", sourceLocation: sourceLocation)
        #expect(crossed.allSatisfy { $0.header("Authorization") == nil }, sourceLocation: sourceLocation)
    }

    // MARK: - Gravity /choose (assistant configuration)

    @Test(arguments: faults)
    func prepareAssistantReportsTheDocumentedOutcomeAndKeepsTheDialog(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let documented = Self.documentedOutcome(.chooseAssistant, faultCase)
            let plan = Self.retryPlan(.chooseAssistant, faultCase, documented)
            let expected = plan.clean > 0 ? Outcome.success : documented

            let call = await scene.runRetrying(fault, on: .chooseAssistant, plan) {
                await $0.prepareAssistant(
                    assistantSelector: SocketEndpoint.assistantSelector, pageContext: SocketScene.productPage)
            }
            let result = try #require(call.result.withLock { $0.value }, "prepareAssistant never returned")

            switch expected {
            case .success:
                #expect(result == .ready, "\(fault): \(result)")
            case .failure(let code, _, let status):
                guard case .failure(let error) = result else {
                    Issue.record("\(fault): expected \(expected), got \(result)")
                    return
                }
                #expect(error.code == code, "\(fault): \(error)")
                #expect(error.httpStatus == status, "\(fault): \(error)")
                if code == .rateLimited { #expect(error.message.contains("Retry-After: 30")) }
                #expect(await scene.s.engine.preparationState == .failed)
            }
            let chooses = scene.s.transport.requests(to: .chooseAssistant)
            #expect(chooses.count == 1 + plan.attempts, "\(fault): the scene's own and \(plan.attempts) attempt(s)")
            let bodies = chooses.dropFirst().map(\.body)
            #expect(bodies.allSatisfy { $0 == bodies.first }, "every attempt sends the same bytes")
            Self.expectSecondHost(scene, fault, .chooseAssistant, attempts: plan.faulted)
            await scene.expectIntact()
        }
    }

    // MARK: - Gravity /choose (entry campaign)

    @Test(arguments: faults)
    func getContentBySelectorReturnsNilAndLogsTheFailureOnce(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let documented = Self.documentedOutcome(.chooseEntry, faultCase)
            let plan = Self.retryPlan(.chooseEntry, faultCase, documented)
            let expected = plan.clean > 0 ? Outcome.success : documented
            let logsBefore = scene.s.logLines.count

            let call = await scene.runRetrying(fault, on: .chooseEntry, plan) {
                await $0.getContentBySelector(
                    selector: SocketEndpoint.entrySelector, pageContext: SocketScene.productPage)
            }
            let content = try #require(call.result.withLock { $0.value }, "getContentBySelector never returned")

            let logged = scene.logged(since: logsBefore, containing: "/choose")
            switch expected {
            case .success:
                #expect(content != nil, "\(fault)")
                #expect(logged.isEmpty, "\(logged)")
            case .failure(let code, _, _):
                #expect(content == nil, "\(fault)")
                #expect(logged.count == 1, "one logged failure, after the last attempt: \(logged)")
                #expect(Self.mentions(logged, code), "\(logged) should name \(code.rawValue)")
            }
            let entries = scene.s.transport.requests(to: .chooseEntry)
            #expect(entries.count == plan.attempts, "\(fault): retried per DL1, never more")
            #expect(entries.allSatisfy { $0.body == entries.first?.body }, "every attempt sends the same bytes")
            #expect(await scene.s.engine.preparationState == .ready)
            Self.expectSecondHost(scene, fault, .chooseEntry, attempts: plan.faulted)
            await scene.expectIntact()
        }
    }

    // MARK: - Gravity /visit

    // A failed `/visit` is logged once, after its attempts within the deadline (DL1); one that
    // still fails transiently or with a server status is kept and sent again after the queue's
    // first pause (DL2, DL3), a final one is dropped; nothing else changes.
    @Test(arguments: faults)
    func trackViewFailureIsLoggedOnceAndChangesNothingElse(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let documented = Self.documentedOutcome(.visit, faultCase)
            let plan = Self.retryPlan(.visit, faultCase, documented)
            let expected = plan.clean > 0 ? Outcome.success : documented
            let kept = expected != .success && plan.keptIfQueued
            let logsBefore = scene.s.logLines.count

            let call = await scene.runRetrying(fault, on: .visit, plan) {
                await $0.trackView(pageContext: SocketScene.productPage)
                return true
            }
            #expect(call.result.withLock { $0.value } == true, "trackView never returned")
            #expect(scene.s.transport.requests(to: .visit).count == plan.attempts, "\(fault): tried per DL1")
            #expect(await scene.s.engine.pendingDeliveries == (kept ? 1 : 0), "\(fault)")

            let logged = scene.s.logLines.dropFirst(logsBefore).filter {
                $0.contains("/visit") || $0.contains("undecodable event response")
            }
            switch expected {
            case .success:
                #expect(logged.isEmpty, "\(fault): \(logged)")
            case .failure(let code, _, _):
                #expect(logged.count == 1, "\(fault): one logged failure: \(logged)")
                #expect(Self.mentions(logged, code), "\(logged) should name \(code.rawValue)")
            }
            #expect(
                scene.logged(since: logsBefore, containing: "delivery: visit screenview not delivered yet").count
                    == (kept ? 1 : 0), "\(fault): \(scene.s.logLines.dropFirst(logsBefore))")

            // The queue's pauses end: a kept visit is sent once more, with its first bytes.
            await scene.passQueuePauses(call)
            let visits = scene.s.transport.requests(to: .visit)
            #expect(visits.count == plan.attempts + (kept ? 1 : 0), "\(fault): never more")
            #expect(visits.allSatisfy { $0.body == visits.first?.body }, "the same bytes every time")
            #expect(await scene.s.engine.pendingDeliveries == 0)
            #expect(await scene.s.engine.canonicalUserId == "u-8f3c")
            Self.expectSecondHost(scene, fault, .visit, attempts: plan.faulted)
            await scene.expectIntact()
        }
    }

    // MARK: - Gravity /event (lifecycle events)

    @Test(arguments: faults)
    func lifecycleEventFailureIsRetriedThenKeptAndTheMessageStillLands(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let documented = Self.documentedOutcome(.event, faultCase)
            let plan = Self.retryPlan(.event, faultCase, documented)
            let expected = plan.clean > 0 ? Outcome.success : documented
            let kept = expected != .success && plan.keptIfQueued
            // The next lifecycle event is the second message's chat_message_send.
            let call = await scene.runRetrying(fault, on: .event, plan) { await $0.sendMessage("Второе сообщение") }
            let sent = try #require(call.result.withLock { $0.value }, "sendMessage never returned")
            let messageId = try sent.get()

            func records() async -> [TrackingRecord] {
                await scene.s.engine.trackingLog.filter {
                    $0.kind == .event && $0.name == "chat_message_send" && $0.properties["messageId"] == messageId
                }
            }
            func bodies() -> [Data?] {
                scene.s.transport.requests(to: .event).filter {
                    let text = String(decoding: $0.body ?? Data(), as: UTF8.self)
                    return text.contains(messageId) && text.contains("chat_message_send")
                }.map(\.body)
            }
            let firstRecords = await records()
            let first = firstRecords.first
            #expect(first?.failure == expected.code?.rawValue, "\(fault): \(firstRecords)")
            #expect(first?.deferred == false)
            #expect(first?.eventTime != nil, "every event carries its eventTime")

            // A kept event is delivered after the queue's pause (or earlier, when a success
            // elsewhere ends a pause that followed a network failure), deferred, never more.
            await scene.passQueuePauses(call)
            let all = await records()
            expectDeliveredFromTheQueueOnce(all, kept: kept, "\(fault)")
            if kept { #expect(all.last?.eventTime == first?.eventTime, "the time it was raised stays") }
            let sentBodies = bodies()
            #expect(sentBodies.count == plan.attempts + (kept ? 1 : 0), "\(fault): tried per DL1, then the queue")
            #expect(sentBodies.allSatisfy { $0 == sentBodies.first }, "the same bytes every time")
            #expect(await scene.s.engine.pendingDeliveries == 0)
            let snapshot = await scene.s.engine.chatSnapshot
            let new = Array(snapshot.messages.dropFirst(scene.earlier.count))
            #expect(new.map(\.id) == [messageId, LoopbackBackend.assistantAnswerID(messageId)])
            #expect(new.first?.text == "Второе сообщение")
            #expect(new.first?.status == .sent)
            Self.expectSecondHost(scene, fault, .event, attempts: plan.faulted)
            await scene.expectIntact()
        }
    }

    // MARK: - Shopping POST /v1/messages

    // covers: D5
    @Test(arguments: faults)
    func messageFaultKeepsTheTextAndReadsHistoryOnlyWhenTheOutcomeIsUncertain(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let expected = Self.documentedOutcome(.messages, faultCase)
            // The history read after an uncertain outcome finds no reply: the message fails.
            scene.s.backend.setHistoryHoldsReplies(false)
            scene.s.transport.arm(fault, for: .messages)
            let text = "Второе сообщение"

            let sent = try #require(await scene.run(fault, on: .messages) { await $0.sendMessage(text) })
            let messageId = try sent.get()

            let snapshot = await scene.s.engine.chatSnapshot
            let new = Array(snapshot.messages.dropFirst(scene.earlier.count))
            let user = try #require(new.first)
            #expect(user.id == messageId)
            #expect(user.role == .user)
            #expect(user.text == text, "the user's text is kept")
            #expect(!snapshot.isSending)
            #expect(snapshot.canSend)
            #expect(scene.s.transport.requests(to: .messages).count == 2, "never resent automatically")
            #expect(
                scene.s.transport.requests(to: .history).count == (expected.isUncertain ? 1 : 0),
                "\(fault): history is read exactly when the outcome is uncertain")
            switch expected {
            case .success:
                #expect(user.status == .sent, "\(fault): \(user.status)")
                #expect(new.count == 2)
                let reply = try #require(new.last)
                #expect(reply.role == .assistant)
                if fault == .wrongFieldTypes {
                    #expect(reply.id == "am-typed")
                    #expect(reply.productBlock?.products.map(\.itemId) == ["p-typed"])
                } else {
                    #expect(reply.id == LoopbackBackend.assistantAnswerID(messageId))
                    #expect(reply.productBlock?.products.map(\.itemId) == ["p-1"])
                }
            case .failure(let code, _, let status):
                #expect(new.count == 1, "\(fault): no reply appears: \(new.map(\.id))")
                guard case .failed(let error) = user.status else {
                    Issue.record("\(fault): the message did not fail: \(user.status)")
                    return
                }
                #expect(error.code == code, "\(fault): \(error)")
                #expect(error.httpStatus == status, "\(fault): \(error)")
                if code == .rateLimited { #expect(error.message.contains("Retry-After: 30")) }
                #expect(user.canRetry == (code != .messageConflict))
            }
            Self.expectSecondHost(scene, fault, .messages)
            await scene.expectIntact()
        }
    }

    // MARK: - Shopping GET /v1/threads/{id}/messages

    @Test(arguments: faults)
    func historyFaultFailsTheMessageWithItsOwnErrorAndErasesNothing(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let expected = Self.documentedOutcome(.history, faultCase)
            // A 503 may have reached the server: the engine reads the history, which holds the
            // reply when it can be read (D5).
            scene.s.transport.arm(.status503, for: .messages)
            scene.s.transport.arm(fault, for: .history)
            let text = "Второе сообщение"

            let sent = try #require(await scene.run(fault, on: .history) { await $0.sendMessage(text) })
            let messageId = try sent.get()

            let snapshot = await scene.s.engine.chatSnapshot
            let new = Array(snapshot.messages.dropFirst(scene.earlier.count))
            let user = try #require(new.first)
            #expect(user.id == messageId)
            #expect(user.text == text, "the user's text is kept")
            #expect(!snapshot.isSending)
            #expect(scene.s.transport.requests(to: .history).count == 1, "history is read once, never again")
            #expect(scene.s.transport.requests(to: .messages).count == 2, "never resent automatically")
            switch expected {
            case .success:
                #expect(user.status == .sent, "\(fault): \(user.status)")
                #expect(new.map(\.id) == [messageId, "h-" + LoopbackBackend.assistantAnswerID(messageId)])
            case .failure(let code, _, _):
                #expect(new.count == 1, "\(fault): \(new.map(\.id))")
                guard case .failed(let error) = user.status else {
                    Issue.record("\(fault): the message did not fail: \(user.status)")
                    return
                }
                // The user sees the send's own error; the history failure is in the message.
                #expect(error.code == .server)
                #expect(error.httpStatus == 503)
                let detail = fault.stalls ? "could not be read in time" : "history could not be read: \(code.rawValue)"
                #expect(error.message.contains(detail), "\(fault): \(error.message)")
                #expect(user.canRetry)
            }
            Self.expectSecondHost(scene, fault, .history)
            await scene.expectIntact()
        }
    }

    // MARK: - Shopping POST /v1/feedback

    @Test(arguments: faults)
    func feedbackFailureIsLoggedSentOnceAndTheRatingOfferedAgain(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let expected = Self.documentedOutcome(.feedback, faultCase)
            scene.s.transport.arm(fault, for: .feedback)
            let logsBefore = scene.s.logLines.count
            let replyId = try #require(scene.earlier.last?.id)

            let rated = await scene.run(fault, on: .feedback) {
                await $0.rateReply(assistantMessageId: replyId, rating: .like)
            }
            #expect(rated == .sent)

            #expect(scene.s.transport.requests(to: .feedback).count == 1, "one rating request, never retried")
            let reply = await scene.s.engine.chatSnapshot.messages.first { $0.id == replyId }
            let logged = scene.logged(since: logsBefore, containing: "/v1/feedback")
            switch expected {
            case .success:
                #expect(reply?.rating == .like, "\(fault)")
                #expect(reply?.canRate == false)
                #expect(logged.isEmpty, "\(logged)")
            case .failure(let code, _, _):
                #expect(reply?.rating == nil, "\(fault)")
                #expect(reply?.canRate == true)
                #expect(logged.count == 1, "one logged failure: \(logged)")
                #expect(Self.mentions(logged, code), "\(logged) should name \(code.rawValue)")
            }
            Self.expectSecondHost(scene, fault, .feedback)
            await scene.expectIntact(comparingRatings: false)
        }
    }

    // MARK: - Tracking URL GET

    // A tracking GET is tried per DL1 within its deadline (one record); one still failing
    // transiently or with a server status is kept and sent again after the queue's first
    // pause (a second, deferred record), never more; a final failure is dropped.
    @Test(arguments: faults)
    func trackingURLFailureIsRetriedWithinItsDeadlineThenKeptForTheQueue(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let documented = Self.documentedOutcome(.tracking, faultCase)
            let plan = Self.retryPlan(.tracking, faultCase, documented)
            let expected = plan.clean > 0 ? Outcome.success : documented
            let kept = expected != .success && plan.keptIfQueued
            let product = try #require(scene.earlier.last?.productBlock?.products.first)

            let call = await scene.runRetrying(fault, on: .tracking, plan) { engine -> AssistantInteractionResult in
                let result = await engine.performAssistantProductAction(
                    product: product.ref, action: .visibleImpression)
                await engine.flushTracking()
                return result
            }
            #expect(call.result.withLock { $0.value } == .accepted)

            let url = scene.s.backend.trackingURL("vi", "i=p-1&m=\(scene.earlier.last?.id ?? "")")
            func records() async -> [TrackingRecord] {
                await scene.s.engine.trackingLog.filter { $0.kind == .url && $0.name == url }
            }
            func requests() -> Int {
                scene.s.transport.requests(to: .tracking).filter { $0.url.absoluteString == url }.count
            }
            let first = await records()
            #expect(first.count == 1, "one record for the attempts within the deadline: \(first)")
            #expect(first.first?.failure == expected.code?.rawValue, "\(fault): \(first)")
            #expect(first.first?.deferred == false)
            #expect(requests() == plan.attempts, "\(fault): tried per DL1 within its deadline")
            #expect(await scene.s.engine.pendingDeliveries == (kept ? 1 : 0), "\(fault)")

            await scene.passQueuePauses(call)
            let all = await records()
            expectDeliveredFromTheQueueOnce(all, kept: kept, "\(fault)")
            #expect(requests() == plan.attempts + (kept ? 1 : 0), "\(fault)")
            #expect(await scene.s.engine.pendingDeliveries == 0)
            Self.expectSecondHost(scene, fault, .tracking, attempts: plan.faulted)
            await scene.expectIntact()
        }
    }
}

// MARK: - Retries within the deadline and the delivery queue (DL1, DL2, DL3)

extension SocketFaultMatrixTests {
    /// How a fault on a Gravity call or tracking `GET` plays through DL1's attempts.
    struct RetryPlan {
        /// Attempts the fault answers: it is armed again before each one.
        let faulted: Int
        /// Attempts after those that the loopback answers correctly (a stall's retry).
        let clean: Int
        /// Whether the call ends in a transient or server failure, which the queue keeps (DL2).
        let keptIfQueued: Bool

        var attempts: Int { faulted + clean }
    }

    /// A retryable fault (cannot connect, connection lost, timed out, 408, 429, 5xx) is served
    /// for every attempt: after 1 s, 2 s and 4 s the fourth still starts inside the 10 s deadline,
    /// a 429 whose `Retry-After` (30 s) does not fit gets none more. A stall the engine's own
    /// timeout ends has spent the deadline; one the transport's deadline ends is tried again a
    /// second later on the engine's clock, and that attempt is not faulted. A final fault: once.
    static func retryPlan(_ endpoint: SocketEndpoint, _ faultCase: FaultCase, _ expected: Outcome) -> RetryPlan {
        guard case .failure(let code, _, let status) = expected else {
            return RetryPlan(faulted: 1, clean: 0, keptIfQueued: false)
        }
        let retryable =
            status.map { $0 == 408 || $0 == 429 || (500...599).contains($0) } ?? (code == .network || code == .timeout)
        guard retryable else { return RetryPlan(faulted: 1, clean: 0, keptIfQueued: false) }
        if status == 429 { return RetryPlan(faulted: 1, clean: 0, keptIfQueued: true) }
        if faultCase.fault.stalls {
            return endpoint.engineTimeout != nil
                ? RetryPlan(faulted: 1, clean: 0, keptIfQueued: true)
                : RetryPlan(faulted: 1, clean: 1, keptIfQueued: false)
        }
        return RetryPlan(faulted: 4, clean: 0, keptIfQueued: true)
    }
}

extension SocketFaultMatrixTests.Scene {
    /// Runs the engine call that meets the fault, ends a stall if the fault stalls, and moves
    /// the engine's clock through DL1's pauses (1 s, 2 s, 4 s) as the plan calls for, arming
    /// the fault again before each faulted attempt and settling after each.
    func runRetrying<Value: Sendable>(
        _ fault: LoopbackFault, on endpoint: SocketEndpoint, _ plan: SocketFaultMatrixTests.RetryPlan,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @escaping @Sendable (AssistantEngine) async -> Value
    ) async -> SocketScene.Call<Value> {
        s.transport.arm(fault, for: endpoint)
        let call = s.start(body)
        if fault.stalls { await s.endStall(of: endpoint, sourceLocation: sourceLocation) }
        _ = await s.finish(call, sourceLocation: sourceLocation)
        for (index, step) in [1, 2, 4].prefix(plan.attempts - 1).enumerated() {
            if index + 2 <= plan.faulted { s.transport.arm(fault, for: endpoint) }
            s.clock.advance(by: .seconds(step))
            _ = await s.finish(call, sourceLocation: sourceLocation)
        }
        return call
    }

    /// Moves the clock past the queue's first pause (5 s ±20 %, DL3), then an hour on, past
    /// every later one, settling after each.
    func passQueuePauses<Value: Sendable>(_ call: SocketScene.Call<Value>) async {
        s.clock.advance(by: .seconds(6))
        _ = await s.finish(call)
        s.clock.advance(by: .seconds(3600))
        _ = await s.finish(call)
    }
}
