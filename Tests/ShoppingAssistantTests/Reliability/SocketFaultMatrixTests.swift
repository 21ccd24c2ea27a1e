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
        _ scene: Scene, _ fault: LoopbackFault, _ endpoint: SocketEndpoint,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let crossed = scene.s.backend.otherHost.receivedRequests
        let expected =
            (fault == .redirect302OtherHost || fault == .redirect307OtherHost)
                && fault.redirectIsFollowed(method: endpoint.method, policy: endpoint.redirectPolicy) ? 1 : 0
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
            let expected = Self.documentedOutcome(.chooseAssistant, faultCase)
            scene.s.transport.arm(fault, for: .chooseAssistant)

            let result = try #require(
                await scene.run(fault, on: .chooseAssistant) {
                    await $0.prepareAssistant(
                        assistantSelector: SocketEndpoint.assistantSelector, pageContext: SocketScene.productPage)
                })

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
            #expect(scene.s.transport.requests(to: .chooseAssistant).count == 2)
            Self.expectSecondHost(scene, fault, .chooseAssistant)
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
            let expected = Self.documentedOutcome(.chooseEntry, faultCase)
            scene.s.transport.arm(fault, for: .chooseEntry)
            let logsBefore = scene.s.logLines.count

            let content = try #require(
                await scene.run(fault, on: .chooseEntry) {
                    await $0.getContentBySelector(
                        selector: SocketEndpoint.entrySelector, pageContext: SocketScene.productPage)
                })

            let logged = scene.logged(since: logsBefore, containing: "/choose")
            switch expected {
            case .success:
                #expect(content != nil, "\(fault)")
                #expect(logged.isEmpty, "\(logged)")
            case .failure(let code, _, _):
                #expect(content == nil, "\(fault)")
                #expect(logged.count == 1, "one logged failure: \(logged)")
                #expect(Self.mentions(logged, code), "\(logged) should name \(code.rawValue)")
            }
            #expect(await scene.s.engine.preparationState == .ready)
            Self.expectSecondHost(scene, fault, .chooseEntry)
            await scene.expectIntact()
        }
    }

    // MARK: - Gravity /visit

    @Test(arguments: faults)
    func trackViewFailureIsLoggedOnceAndChangesNothingElse(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let expected = Self.documentedOutcome(.visit, faultCase)
            scene.s.transport.arm(fault, for: .visit)
            let logsBefore = scene.s.logLines.count

            let done = await scene.run(fault, on: .visit) {
                await $0.trackView(pageContext: SocketScene.productPage)
                return true
            }
            #expect(done == true)

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
            #expect(scene.s.transport.requests(to: .visit).count == 1)
            #expect(await scene.s.engine.canonicalUserId == "u-8f3c")
            Self.expectSecondHost(scene, fault, .visit)
            await scene.expectIntact()
        }
    }

    // MARK: - Gravity /event (lifecycle events)

    @Test(arguments: faults)
    func lifecycleEventFailureIsRecordedOnceAndTheMessageStillLands(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let expected = Self.documentedOutcome(.event, faultCase)
            // The next lifecycle event is the second message's chat_message_send.
            scene.s.transport.arm(fault, for: .event)

            let sent = try #require(await scene.run(fault, on: .event) { await $0.sendMessage("Второе сообщение") })
            let messageId = try sent.get()

            let records = await scene.s.engine.trackingLog.filter {
                $0.kind == .event && $0.name == "chat_message_send" && $0.properties["messageId"] == messageId
            }
            #expect(records.count == 1, "attempted once, never retried: \(records)")
            #expect(records.first?.failure == expected.code?.rawValue, "\(fault): \(records)")
            let snapshot = await scene.s.engine.chatSnapshot
            let new = Array(snapshot.messages.dropFirst(scene.earlier.count))
            #expect(new.map(\.id) == [messageId, LoopbackBackend.assistantAnswerID(messageId)])
            #expect(new.first?.text == "Второе сообщение")
            #expect(new.first?.status == .sent)
            Self.expectSecondHost(scene, fault, .event)
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

    @Test(arguments: faults)
    func trackingURLFailureIsRecordedOnceAndNeverRetried(_ faultCase: FaultCase) async throws {
        let fault = faultCase.fault
        try await Self.limiter.run {
            let scene = try await Scene.start(faultCase.transport)
            defer { scene.s.stop() }
            let expected = Self.documentedOutcome(.tracking, faultCase)
            scene.s.transport.arm(fault, for: .tracking)
            let product = try #require(scene.earlier.last?.productBlock?.products.first)

            let result = await scene.run(fault, on: .tracking) { engine -> AssistantInteractionResult in
                let result = await engine.performAssistantProductAction(
                    product: product.ref, action: .visibleImpression)
                await engine.flushTracking()
                return result
            }
            #expect(result == .accepted)

            let url = scene.s.backend.trackingURL("vi", "i=p-1&m=\(scene.earlier.last?.id ?? "")")
            let records = await scene.s.engine.trackingLog.filter { $0.kind == .url && $0.name == url }
            #expect(records.count == 1, "attempted once, never retried: \(records)")
            #expect(records.first?.failure == expected.code?.rawValue, "\(fault): \(records)")
            #expect(scene.s.transport.requests(to: .tracking).filter { $0.url.absoluteString == url }.count == 1)
            Self.expectSecondHost(scene, fault, .tracking)
            await scene.expectIntact()
        }
    }
}
