import DemoStore
import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

/// Outcomes read in plain words with their code kept for search; a failure that would only
/// repeat itself offers no `:retry`; a rate limit's `Retry-After` holds a retry back and says
/// how long is left.
@Suite(.timeLimit(.minutes(2))) struct OutcomeWordingTests {
    private func failedMessage(_ fault: DemoFault) async throws -> (DemoREPL, [String]) {
        let repl = try await DemoREPL(width: 200)
        await repl.run(lines: [":product KIT-1001", ":open", ":fault \(fault.rawValue)"])
        return (repl, await repl.run("подарок").printed)
    }

    @Test func aRateLimitSaysWhenToTryAndHoldsARetryBackUntilThen() async throws {
        let (repl, printed) = try await failedMessage(.rateLimited)
        #expect(printed.contains("✗ not delivered: rate limited — try again in 30 s (rate_limited), then :retry"))
        #expect(await repl.run(":retry").printed == ["rate limited — try again in 30 s (rate_limited)"])
        await repl.run(":wait 20s")
        #expect(await repl.run(":retry").printed == ["rate limited — try again in 10 s (rate_limited)"])
        await repl.run(":wait 9500ms")
        #expect(await repl.run(":retry").printed == ["rate limited — try again in 1 s (rate_limited)"])
        await repl.run(":wait 500ms")
        let sent = await repl.run(":retry").printed
        #expect(sent.first == "you › подарок", "sent once the wait is over")
        #expect(sent.contains { $0.hasPrefix("assistant › ") })
        let posts = repl.demoStore?.requestLog.filter { $0.path.hasSuffix("/v1/messages") } ?? []
        #expect(posts.count == 2, "the held-back retries sent nothing")
    }

    /// In a session whose time passes in steps only, the wait counts from the end of the step
    /// that showed the failure: whatever the rest of that step took (its tracking over a slow
    /// network), a `:retry` right after it says 30 s, live and in the recording's replay alike.
    /// In a terminal on real time it counts from when the failure was drawn.
    @Test func aRateLimitsWaitCountsFromTheEndOfTheStepThatShowedIt() async {
        let now = Locked(Duration.zero)
        let presenter = ChatPresenter(
            output: REPLOutput(sink: { _ in }), width: { 80 }, elapsed: { now.withLock { $0 } },
            render: { _ in ([], []) },
            onVisibleCardsChanged: { _ in })
        let limited = AssistantError(code: .rateLimited, message: "HTTP 429", httpStatus: 429, retryAfter: .seconds(30))
        let message = AssistantChatMessage(
            id: "m-1", role: .user, text: "подарок", status: .failed(limited), canRetry: true)
        let snapshot = AssistantChatSnapshot(
            title: "Помощник", subtitle: nil, messages: [message], suggests: [], isSending: false, canSend: true)
        await presenter.presentAssistant(snapshot)
        now.withLock { $0 = .milliseconds(1_500) }  // the rest of the step: tracking, say

        #expect(presenter.retryWait(for: message) == .milliseconds(28_500), "counted from when it was drawn")
        presenter.stepEnded()
        #expect(presenter.retryWait(for: message) == .seconds(30), "counted from the end of its step")

        now.withLock { $0 = .milliseconds(21_500) }
        presenter.stepEnded()  // a later step's end changes nothing
        #expect(presenter.retryWait(for: message) == .seconds(10))

        // Shown while time passed between lines (a transcript's `%wait`): from when drawn.
        let later = AssistantChatMessage(
            id: "m-2", role: .user, text: "ещё", status: .failed(limited), canRetry: true)
        await presenter.updateAssistant(
            AssistantChatSnapshot(
                title: "Помощник", subtitle: nil, messages: [message, later], suggests: [], isSending: false,
                canSend: true))
        now.withLock { $0 = .milliseconds(25_500) }
        presenter.stepEnded(restartingCountdowns: false)
        presenter.stepEnded()
        #expect(presenter.retryWait(for: later) == .seconds(26), "4 s of the wait passed with the time")
    }

    @Test func aRefusedNetworkOffersNoRetryAndARetrySaysWhy() async throws {
        let (repl, printed) = try await failedMessage(.ipNotAllowed)
        #expect(
            printed.contains("✗ not delivered: this network is not allowed to use the service, HTTP 403 (unauthorized)")
        )
        #expect(!printed.contains { $0.contains(":retry") })
        #expect(
            await repl.run(":retry").printed == [
                "not sent again: this network is not allowed to use the service, HTTP 403 (unauthorized) would fail "
                    + "the same way; once that is fixed, send the text as a new message"
            ])
        let posts = repl.demoStore?.requestLog.filter { $0.path.hasSuffix("/v1/messages") } ?? []
        #expect(posts.count == 1, "nothing sent again")
    }

    @Test func aServerFailureSaysSoWithItsStatusAndOffersARetry() async throws {
        let (_, printed) = try await failedMessage(.serviceUnavailable)
        #expect(
            printed.contains("✗ not delivered: the server failed, HTTP 503 (server) — :retry to send it again"),
            "\(printed)")
    }

    @Test func everyCodeReadsInWordsWithTheCodeAfterThem() {
        let cases: [(AssistantError, String)] = [
            (.init(code: .rateLimited, message: "HTTP 429", httpStatus: 429), "rate limited"),
            (
                .init(code: .rateLimited, message: "HTTP 429", httpStatus: 429, retryAfter: .seconds(30)),
                "rate limited — try again in 30 s"
            ),
            (
                .init(code: .unauthorized, message: "HTTP 401", httpStatus: 401),
                "not authorized: check the API key, HTTP 401"
            ),
            (
                .init(code: .unauthorized, message: "HTTP 403 IP_NOT_ALLOWED: no", httpStatus: 403),
                "this network is not allowed to use the service, HTTP 403"
            ),
            (.init(code: .timeout, message: "the transport timed out"), "no answer in time"),
            (.init(code: .network, message: "cannot connect: refused"), "the service could not be reached"),
            (.init(code: .network, message: "connection lost: reset"), "the connection broke before the answer came"),
            (.init(code: .server, message: "HTTP 500", httpStatus: 500), "the server failed, HTTP 500"),
            (.init(code: .invalidResponse, message: "not JSON"), "the server's answer could not be read"),
            (
                .init(code: .messageConflict, message: "HTTP 409", httpStatus: 409),
                "the server has another message with this ID"
            ),
            (
                .init(code: .historyUnavailable, message: "HTTP 404", httpStatus: 404),
                "the chat's history is gone on the server (the messages here are kept)"
            ),
            (.init(code: .invalidConfiguration, message: "no builder"), "the assistant is not set up correctly"),
        ]
        for (error, words) in cases {
            #expect(OutcomeWording.failure(error) == "\(words) (\(error.code.rawValue))")
        }
        let refused: Set<AssistantError.Code> = [.unauthorized, .invalidConfiguration, .messageConflict]
        for code in AssistantError.Code.allCases {
            #expect(OutcomeWording.offersRetry(AssistantError(code: code, message: "")) == !refused.contains(code))
        }
        #expect(OutcomeWording.seconds(.milliseconds(200)) == 1)
        #expect(OutcomeWording.seconds(.seconds(30)) == 30)
    }

    @Test func ignoredTapsAndButtonsSayWhyWithTheirResult() {
        #expect(
            OutcomeWording.ignored(.duplicate, what: "tap #2")
                == "tap #2 ignored: it is being handled already (duplicate)")
        #expect(
            OutcomeWording.ignored(.staleReference, what: "button")
                == "button ignored: it is from a chat that is gone (staleReference)")
        #expect(OutcomeWording.open(.notReady) == "the chat cannot open: the assistant is not prepared (notReady)")
        #expect(OutcomeWording.prepare(.unavailable(.notFound)) == "no such assistant (notFound)")
    }
}
