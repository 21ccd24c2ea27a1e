import Foundation
import Testing

@testable import ShoppingAssistant

@Suite(.timeLimit(.minutes(2))) struct PreparationMachineTests {
    private let page = PageContext(type: .product, data: ["SKU-1"], location: "app://product/SKU-1")
    private let otherPage = PageContext(type: .category, data: ["Cups"], location: "app://category/cups")
    private let selector = "shopping-assistant"

    private func id(_ value: UInt64) -> PreparationID { PreparationID(value: value) }

    private func response(_ json: String?, campaignId: String = "c-1") -> ContentResponse {
        PrepFixtures.content([(campaignId, [json])])
    }

    private var configuration: AssistantConfiguration {
        AssistantConfiguration(
            enabled: true, title: "Помощник магазина", subtitle: "Помогу выбрать подходящий товар.",
            suggests: ["Помогите выбрать подарок"])
    }

    /// A machine whose preparation 1 is in flight.
    private func preparing(timeout: Duration = .seconds(10)) -> PreparationMachine {
        var machine = PreparationMachine()
        _ = machine.prepare(id(1), selector: selector, pageContext: page, timeout: timeout, hostRegistered: true)
        return machine
    }

    // MARK: - Starting

    // covers: P1, P3
    @Test func prepareStartsTheDeadlineAndFetchesTheConfiguration() {
        var machine = PreparationMachine()
        #expect(machine.publicState == .idle)
        let actions = machine.prepare(
            id(1), selector: selector, pageContext: page, timeout: .seconds(10), hostRegistered: true)
        #expect(
            actions == [
                .startTimeout(id(1), .seconds(10)), .fetchConfiguration(id(1), selector: selector, pageContext: page),
            ])
        #expect(machine.publicState == .preparing)
        #expect(machine.ready == nil)
    }

    // covers: G1
    @Test func missingBuilderOrHandlerFailsWithoutARequest() {
        var machine = PreparationMachine()
        let actions = machine.prepare(
            id(1), selector: selector, pageContext: page, timeout: .seconds(10), hostRegistered: false)
        guard case .finish(let finished, .failure(let error))? = actions.first, actions.count == 1 else {
            Issue.record("expected one failure, got \(actions)")
            return
        }
        #expect(finished == id(1))
        #expect(error.code == .invalidConfiguration)
        #expect(machine.publicState == .failed)
    }

    // covers: C5
    @Test func emptySelectorFailsWithoutARequest() {
        var machine = PreparationMachine()
        let actions = machine.prepare(
            id(1), selector: "", pageContext: page, timeout: .seconds(10), hostRegistered: true)
        #expect(actions.count == 1)
        guard case .finish(_, .failure(let error))? = actions.first else {
            Issue.record("expected a failure, got \(actions)")
            return
        }
        #expect(error.code == .invalidConfiguration)
        #expect(!actions.contains { if case .fetchConfiguration = $0 { return true } else { return false } })
    }

    // MARK: - Latest call wins (P2)

    // covers: P2
    @Test func newPrepareSupersedesTheOneInFlight() {
        var machine = preparing()
        let actions = machine.prepare(
            id(2), selector: selector, pageContext: page, timeout: .seconds(10), hostRegistered: true)
        #expect(
            actions == [
                .stopWork(id(1)), .finish(id(1), .superseded), .startTimeout(id(2), .seconds(10)),
                .fetchConfiguration(id(2), selector: selector, pageContext: page),
            ])
    }

    // covers: P2, G1
    @Test func unregisteredPrepareStillSupersedesTheOneInFlight() {
        var machine = preparing()
        let actions = machine.prepare(
            id(2), selector: selector, pageContext: page, timeout: .seconds(10), hostRegistered: false)
        #expect(actions.prefix(2) == [.stopWork(id(1)), .finish(id(1), .superseded)])
        #expect(!actions.contains { if case .fetchConfiguration = $0 { return true } else { return false } })
    }

    // covers: P2
    @Test func newPrepareInvalidatesTheReadyStartScreenAtOnce() {
        var machine = preparing()
        _ = machine.configurationFetched(id(1), .success(response(Fixtures.configurationJSON)), uidKnown: true)
        #expect(machine.ready != nil)
        _ = machine.prepare(
            id(2), selector: selector, pageContext: otherPage, timeout: .seconds(10), hostRegistered: true)
        #expect(machine.ready == nil)
        #expect(machine.publicState == .preparing)
    }

    // covers: P2
    @Test func lateAnswerTimeoutAndCancellationOfAnOlderCallAreIgnored() {
        var machine = preparing()
        _ = machine.prepare(
            id(2), selector: selector, pageContext: otherPage, timeout: .seconds(10), hostRegistered: true)
        let stateBefore = machine.state
        let disabled = #"{"enabled":false}"#
        #expect(machine.configurationFetched(id(1), .success(response(disabled)), uidKnown: true) == [])
        #expect(machine.timeoutFired(id(1)) == [])
        #expect(machine.cancelled(id(1)) == [])
        #expect(machine.state == stateBefore)

        // The newer call completes with its own answer.
        let actions = machine.configurationFetched(
            id(2), .success(response(Fixtures.configurationJSON)), uidKnown: true)
        #expect(actions == [.stopWork(id(2)), .finish(id(2), .ready)])
        #expect(machine.ready?.id == id(2))
        #expect(machine.ready?.pageContext == otherPage)

        // And a late answer after that changes nothing either.
        #expect(machine.configurationFetched(id(1), .success(response(disabled)), uidKnown: true) == [])
        #expect(machine.timeoutFired(id(1)) == [])
        #expect(machine.ready?.id == id(2))
    }

    // MARK: - Outcomes

    // covers: P1, P5, C1, O9
    @Test func readyKeepsTheStartScreenOfThisPreparation() {
        var machine = preparing()
        let actions = machine.configurationFetched(
            id(1), .success(response(Fixtures.configurationJSON, campaignId: "c-7")), uidKnown: true)
        #expect(actions == [.stopWork(id(1)), .finish(id(1), .ready)])
        #expect(machine.publicState == .ready)
        #expect(
            machine.ready
                == PreparedAssistant(
                    id: id(1), selector: selector, pageContext: page, configuration: configuration, campaignId: "c-7"))
    }

    // covers: C2
    @Test func disabledConfigurationIsUnavailable() {
        var machine = preparing()
        let actions = machine.configurationFetched(id(1), .success(response(#"{"enabled":false}"#)), uidKnown: true)
        #expect(actions == [.stopWork(id(1)), .finish(id(1), .unavailable(.disabled))])
        #expect(machine.publicState == .unavailable)
        #expect(machine.ready == nil)
    }

    // covers: C5
    @Test func emptyAnswerIsNotFound() {
        var machine = preparing()
        let actions = machine.configurationFetched(id(1), .success(ContentResponse(data: [])), uidKnown: true)
        #expect(actions == [.stopWork(id(1)), .finish(id(1), .unavailable(.notFound))])
    }

    // covers: C6
    @Test func unparsableConfigurationFails() {
        var machine = preparing()
        let actions = machine.configurationFetched(id(1), .success(response("{not json")), uidKnown: true)
        guard case .finish(_, .failure(let error))? = actions.last else {
            Issue.record("expected a failure, got \(actions)")
            return
        }
        #expect(actions.first == .stopWork(id(1)))
        #expect(error.code == .invalidConfiguration)
        #expect(machine.publicState == .failed)
    }

    // covers: P1
    @Test func requestFailureIsReportedWithItsCode() {
        var machine = preparing()
        let error = AssistantError(code: .unauthorized, message: "HTTP 403", httpStatus: 403)
        let actions = machine.configurationFetched(id(1), .failure(.failed(error, uncertain: false)), uidKnown: true)
        #expect(actions == [.stopWork(id(1)), .finish(id(1), .failure(error))])
        #expect(machine.publicState == .failed)
    }

    // MARK: - Timeout and identity (P3, S4)

    // covers: P3
    @Test func deadlineFailsWithTimeoutWhileWaitingForChoose() {
        var machine = preparing()
        let actions = machine.timeoutFired(id(1))
        guard case .finish(let finished, .failure(let error))? = actions.last else {
            Issue.record("expected a failure, got \(actions)")
            return
        }
        #expect(actions.first == .stopWork(id(1)))
        #expect(finished == id(1))
        #expect(error.code == .timeout)
        #expect(machine.publicState == .failed)
    }

    // covers: P3, S4
    @Test func configurationWithoutCanonicalUIDWaitsAndTimesOut() {
        var machine = preparing()
        #expect(
            machine.configurationFetched(id(1), .success(response(Fixtures.configurationJSON)), uidKnown: false) == [])
        #expect(machine.publicState == .preparing)
        #expect(machine.ready == nil)
        let actions = machine.timeoutFired(id(1))
        guard case .finish(_, .failure(let error))? = actions.last else {
            Issue.record("expected a timeout, got \(actions)")
            return
        }
        #expect(error.code == .timeout)
        #expect(machine.ready == nil)
    }

    // covers: S4
    @Test func configurationWithoutCanonicalUIDBecomesReadyWhenTheUIDArrives() {
        var machine = preparing()
        _ = machine.configurationFetched(id(1), .success(response(Fixtures.configurationJSON)), uidKnown: false)
        #expect(machine.identityResolved() == [.stopWork(id(1)), .finish(id(1), .ready)])
        #expect(machine.ready?.configuration == configuration)
        #expect(machine.identityResolved() == [])
    }

    // covers: P3
    @Test func identityBeforeTheConfigurationDoesNotFinishEarly() {
        var machine = preparing()
        #expect(machine.identityResolved() == [])
        #expect(machine.publicState == .preparing)
    }

    // MARK: - Cancellation (P4)

    // covers: P4
    @Test func cancellingTheCallerReturnsCancelled() {
        var machine = preparing()
        #expect(machine.cancelled(id(1)) == [.stopWork(id(1)), .finish(id(1), .cancelled)])
        #expect(machine.publicState == .idle)
        // The request, cancelled with it, changes nothing afterwards.
        #expect(machine.configurationFetched(id(1), .failure(.cancelled), uidKnown: true) == [])
        #expect(machine.timeoutFired(id(1)) == [])
    }

    // covers: P4
    @Test func cancelledRequestIsCancelledNotANetworkError() {
        var machine = preparing()
        #expect(
            machine.configurationFetched(id(1), .failure(.cancelled), uidKnown: true)
                == [.stopWork(id(1)), .finish(id(1), .cancelled)])
    }

    // covers: P4, S4
    @Test func cancellingWhileWaitingForTheUIDReturnsCancelled() {
        var machine = preparing()
        _ = machine.configurationFetched(id(1), .success(response(Fixtures.configurationJSON)), uidKnown: false)
        #expect(machine.cancelled(id(1)) == [.stopWork(id(1)), .finish(id(1), .cancelled)])
        #expect(machine.identityResolved() == [])
    }
}
