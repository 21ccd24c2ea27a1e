import DemoStore
import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@Suite(.timeLimit(.minutes(2))) struct DemoFaultTests {
    private let message = Wire.message(Wire.messageBody(message: "m-1", text: "подарок"))

    @Test func everyFaultHasAUniqueNameAndASummary() {
        let help = DemoStore.faultHelp
        #expect(help.count == DemoFault.allCases.count)
        #expect(Set(help.map(\.name)).count == help.count)
        #expect(help.allSatisfy { !$0.summary.isEmpty && !$0.name.contains(" ") })
        #expect(DemoFault(rawValue: "lost-after-send") == .lostAfterSend)
    }

    // The demo backend's side of D5 (a slow reply is already in history while the response is held back)
    @Test func slowReplyStoresTheReplyAndAnswersAfterTheLatency() async throws {
        let clock = ManualClock()
        let store = DemoStore(clock: clock)
        store.updateConfiguration { $0.slowReplyLatency = .seconds(30) }
        store.inject(.slowReply)
        let request = message
        let task = Task { try await store.send(request) }
        await clock.waitForSleepers(1)
        #expect(store.pendingRequestCount == 1)
        #expect(store.requestLog.last?.outcome == .pending)
        let history = Wire.object(await send(store, Wire.history()))
        #expect((history["messages"] as? [Any])?.count == 2, "stored before the response is sent")

        clock.advance(by: .seconds(29))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        let response = try await task.valueUnlessCancelled
        #expect(response.status == 200)
        #expect(store.requestLog.first?.status == 200)
        #expect(store.activeFaults.isEmpty, "a one-shot fault is consumed")
    }

    @Test func slowReplyHonoursCancellation() async {
        let clock = ManualClock()
        let store = DemoStore(clock: clock)
        store.inject(.slowReply)
        let request = message
        let task = Task { try await store.send(request) }
        await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.valueUnlessCancelled }
        #expect(store.requestLog.last?.outcome == .failed("cancelled"))
        #expect(clock.sleeperCount == 0)
    }

    // The demo backend's side of P3 (a slow /choose outlasts the preparation timeout)
    @Test func slowChooseHoldsTheChooseResponse() async throws {
        let clock = ManualClock()
        let store = DemoStore(clock: clock)
        store.inject(.slowChoose)
        let task = Task { try await store.send(Wire.choose(["assistant-entry"])) }
        await clock.waitForSleepers(1)
        clock.advance(by: store.configuration.slowChooseLatency)
        #expect(try await task.valueUnlessCancelled.status == 200)
        #expect(store.configuration.slowChooseLatency > .seconds(10))
    }

    // The demo backend's side of D3 (the store never answers; only cancellation ends the request)
    @Test func replyTimeoutNeverAnswersUntilCancelled() async {
        let clock = ManualClock()
        let store = DemoStore(clock: clock)
        store.inject(.replyTimeout)
        let request = message
        let task = Task { try await store.send(request) }
        await store.waitUntilPending()
        clock.advance(by: .seconds(3600))
        #expect(store.requestLog.last?.outcome == .pending, "time passing does not answer it")
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.valueUnlessCancelled }
        #expect(store.requestLog.last?.outcome == .failed("cancelled"))
        #expect(store.pendingRequestCount == 0)
        let history = await send(store, Wire.history())
        #expect(history.status == 404, "nothing was stored")
    }

    // The demo backend's side of D5
    @Test func lostAfterSendStoresTheReplyThenLosesTheConnection() async throws {
        let store = DemoStore(clock: ManualClock())
        store.inject(.lostAfterSend)
        await #expect(throws: HTTPTransportError.self) { try await store.send(message) }
        let history = Wire.object(await send(store, Wire.history()))
        let messages = try #require(history["messages"] as? [[String: Any]])
        #expect(messages.last?["replyTo"] as? String == "m-1")
        #expect(store.requestLog.first?.outcome == .failed("connection lost"))

        let retry = Wire.object(await send(store, message))
        #expect(retry["assistantMessageId"] as? String == messages.last?["id"] as? String)
    }

    @Test func lostAfterSendThrowsConnectionLost() async {
        let store = DemoStore(clock: ManualClock())
        store.inject(.lostAfterSend)
        do {
            _ = try await store.send(message)
            Issue.record("expected a transport error")
        } catch let error as HTTPTransportError {
            guard case .connectionLost = error else {
                Issue.record("expected connectionLost, got \(error)")
                return
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    // The demo backend's side of D8
    @Test func conflictFaultAnswers409Once() async {
        let store = DemoStore(clock: ManualClock())
        store.inject(.messageConflict)
        let conflict = await send(store, message)
        #expect(conflict.status == 409)
        #expect(Wire.errorCode(conflict) == "MESSAGE_ID_CONFLICT")
        #expect(await send(store, message).status == 200, "one-shot: the next message goes through")
    }

    // The demo backend's side of D9
    @Test func historyNotFoundFaultAnswers404() async {
        let store = DemoStore(clock: ManualClock())
        _ = await send(store, message)
        store.inject(.historyNotFound)
        let missing = await send(store, Wire.history())
        #expect(missing.status == 404)
        #expect(Wire.errorCode(missing) == "SHOPPING_HISTORY_NOT_FOUND")
        #expect(await send(store, Wire.history()).status == 200)
    }

    // The demo backend's side of S6
    @Test func stickyIpNotAllowedRefusesEveryShoppingCallUntilCleared() async {
        let store = DemoStore(clock: ManualClock())
        store.inject(.ipNotAllowed, mode: .sticky)
        for request in [message, Wire.history(), Wire.feedback(message: "am-1", rating: "like")] {
            let response = await send(store, request)
            #expect(response.status == 403)
            #expect(Wire.errorCode(response) == "IP_NOT_ALLOWED")
        }
        #expect(await send(store, Wire.choose(["assistant-entry"])).status == 200, "Gravity is not affected")
        #expect(store.activeFaults == [DemoActiveFault(fault: .ipNotAllowed, mode: .sticky)])
        store.clear(.ipNotAllowed)
        #expect(await send(store, message).status == 200)
    }

    @Test(arguments: [(DemoFault.badGateway, 502), (.serviceUnavailable, 503), (.rateLimited, 429)])
    func serverErrorFaultsAnswerWithTheirStatusAndStoreNothing(fault: DemoFault, status: Int) async {
        let store = DemoStore(clock: ManualClock())
        store.inject(fault)
        let response = await send(store, message)
        #expect(response.status == status)
        #expect(Wire.errorCode(response) != nil)
        #expect(await send(store, Wire.history()).status == 404)
        if fault == .rateLimited {
            #expect(response.header("retry-after") == "30")
        }
    }

    @Test func invalidReplyAnswers200WithABodyThatIsNotJSON() async {
        let store = DemoStore(clock: ManualClock())
        store.inject(.invalidReply)
        let response = await send(store, message)
        #expect(response.status == 200)
        #expect((try? JSONSerialization.jsonObject(with: response.body)) == nil)
    }

    @Test func gravityRefusedFailsGravityCallsOnly() async {
        let store = DemoStore(clock: ManualClock())
        store.inject(.gravityRefused, mode: .sticky)
        for endpoint in ["choose", "visit", "event"] {
            do {
                _ = try await store.send(Wire.gravity(endpoint, ["user": [:]]))
                Issue.record("\(endpoint) should fail")
            } catch let error as HTTPTransportError {
                guard case .cannotConnect = error else {
                    Issue.record("expected cannotConnect, got \(error)")
                    continue
                }
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        #expect(await send(store, message).status == 200)
        #expect(store.requestLog.first?.outcome == .failed("connection refused"))
        store.clearFaults()
        #expect(store.activeFaults.isEmpty)
    }

    @Test func faultsDoNotApplyToOtherEndpoints() async {
        let store = DemoStore(clock: ManualClock())
        store.inject(.messageConflict)
        #expect(await send(store, Wire.history()).status == 404, "history is not a message")
        #expect(store.activeFaults.count == 1, "not consumed by another endpoint")
    }

    @Test func waitUntilPendingHonoursCancellation() async {
        let store = DemoStore(clock: ManualClock())
        let waiter = Task { await store.waitUntilPending() }
        waiter.cancel()
        await waiter.valueUnlessCancelled
        #expect(store.pendingRequestCount == 0)
    }
}
