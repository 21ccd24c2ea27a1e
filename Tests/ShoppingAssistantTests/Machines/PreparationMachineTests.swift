import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct PreparationMachineTests {
    private typealias F = MachineFixtures
    private static let first = PreparationID(value: 1)
    private static let second = PreparationID(value: 2)

    /// What ends preparation `first` with an error.
    private static func failed(_ code: AssistantError.Code, _ message: String) -> [PreparationMachine.Action] {
        [.stopWork(first), .finish(first, .failure(AssistantError(code: code, message: message)))]
    }

    private static func started(_ id: PreparationID = first) -> PreparationMachine {
        var machine = PreparationMachine()
        _ = machine.prepareCalled(
            id, selector: F.selector, pageContext: F.page, timeout: .seconds(10), hostRegistered: true)
        return machine
    }

    @Test func aCallStartsTheDeadlineAndFetchesTheConfiguration() {
        var machine = PreparationMachine()
        #expect(
            machine.prepareCalled(
                Self.first, selector: F.selector, pageContext: F.page, timeout: .seconds(10), hostRegistered: true)
                == [
                    .startTimeout(Self.first, .seconds(10)),
                    .fetchConfiguration(Self.first, selector: F.selector, pageContext: F.page),
                ])
        #expect(machine.publicState == .preparing)
    }

    // covers: G1
    @Test func withoutABuilderAndAHandlerItFailsWithoutARequest() {
        var machine = PreparationMachine()
        let actions = machine.prepareCalled(
            Self.first, selector: F.selector, pageContext: F.page, timeout: .seconds(10), hostRegistered: false)
        #expect(
            actions == [
                .finish(
                    Self.first,
                    .failure(
                        AssistantError(
                            code: .invalidConfiguration,
                            message: "register a product block builder and an action handler before prepareAssistant")))
            ])
        #expect(machine.publicState == .failed)
    }

    // covers: C5
    @Test func anEmptySelectorFailsWithoutARequest() {
        var machine = PreparationMachine()
        let actions = machine.prepareCalled(
            Self.first, selector: "", pageContext: F.page, timeout: .seconds(10), hostRegistered: true)
        #expect(
            actions == [
                .finish(
                    Self.first,
                    .failure(AssistantError(code: .invalidConfiguration, message: "empty assistant selector")))
            ])
    }

    // covers: P2
    @Test func aNewCallSupersedesTheOneInFlightAndItsLateAnswerIsDropped() {
        var machine = Self.started()
        #expect(
            machine.prepareCalled(
                Self.second, selector: F.selector, pageContext: F.page, timeout: .seconds(10), hostRegistered: true)
                == [
                    .stopWork(Self.first), .finish(Self.first, .superseded), .startTimeout(Self.second, .seconds(10)),
                    .fetchConfiguration(Self.second, selector: F.selector, pageContext: F.page),
                ])
        #expect(machine.configurationAnswered(Self.first, .success(F.content()), uidKnown: true) == [])
        #expect(machine.deadlinePassed(Self.first) == [])
        #expect(machine.callerCancelled(Self.first) == [])
        #expect(machine.publicState == .preparing)
        #expect(
            machine.configurationAnswered(Self.second, .success(F.content()), uidKnown: true)
                == [.stopWork(Self.second), .finish(Self.second, .ready)])
    }

    // covers: P2
    @Test func aNewCallInvalidatesTheReadyStartScreenAtOnce() {
        var machine = Self.started()
        _ = machine.configurationAnswered(Self.first, .success(F.content()), uidKnown: true)
        #expect(machine.ready != nil)
        _ = machine.prepareCalled(
            Self.second, selector: F.selector, pageContext: F.page, timeout: .seconds(10), hostRegistered: true)
        #expect(machine.ready == nil)
    }

    // covers: P3
    @Test func theDeadlineFailsThePreparationWithTimeout() {
        var machine = Self.started()
        #expect(
            machine.deadlinePassed(Self.first)
                == Self.failed(.timeout, "preparation timed out waiting for /choose"))
        #expect(machine.publicState == .failed)
    }

    // covers: P4
    @Test func cancellingTheCallerEndsItCancelledNotAsANetworkError() {
        var machine = Self.started()
        #expect(machine.callerCancelled(Self.first) == [.stopWork(Self.first), .finish(Self.first, .cancelled)])
        #expect(machine.publicState == .idle)
        var other = Self.started()
        #expect(
            other.configurationAnswered(Self.first, .failure(.cancelled), uidKnown: true)
                == [.stopWork(Self.first), .finish(Self.first, .cancelled)])
    }

    // covers: S4, P3
    @Test func aConfigurationReadBeforeTheUidIsKnownWaitsForItWithinTheDeadline() {
        var machine = Self.started()
        #expect(machine.configurationAnswered(Self.first, .success(F.content()), uidKnown: false) == [])
        #expect(machine.publicState == .preparing)
        #expect(machine.identityResolved() == [.stopWork(Self.first), .finish(Self.first, .ready)])

        var stalled = Self.started()
        _ = stalled.configurationAnswered(Self.first, .success(F.content()), uidKnown: false)
        #expect(
            stalled.deadlinePassed(Self.first)
                == Self.failed(.timeout, "preparation timed out waiting for the canonical user.uid"))
    }

    // covers: C2, C4, C6
    @Test func theConfigurationDecidesReadyUnavailableOrInvalid() {
        var disabled = Self.started()
        #expect(
            disabled.configurationAnswered(Self.first, .success(F.content([#"{"enabled":false}"#])), uidKnown: true)
                == [.stopWork(Self.first), .finish(Self.first, .unavailable(.disabled))])
        var two = Self.started()
        let other = #"{"enabled":true,"title":"Other"}"#
        #expect(
            two.configurationAnswered(Self.first, .success(F.content([F.configJSON, other])), uidKnown: true)
                == Self.failed(.invalidConfiguration, "2 different configurations for one selector"))
        var same = Self.started()
        #expect(
            same.configurationAnswered(Self.first, .success(F.content([F.configJSON, F.configJSON])), uidKnown: true)
                == [.stopWork(Self.first), .finish(Self.first, .ready)])
        var broken = Self.started()
        #expect(
            broken.configurationAnswered(Self.first, .success(F.content(["{"])), uidKnown: true)
                == Self.failed(.invalidConfiguration, "the assistant configuration cannot be parsed"))
    }

    // covers: C5
    @Test func anEmptyAnswerIsNotFound() {
        var machine = Self.started()
        #expect(
            machine.configurationAnswered(Self.first, .success(ContentResponse(data: [])), uidKnown: true)
                == [.stopWork(Self.first), .finish(Self.first, .unavailable(.notFound))])
    }

    // covers: B7
    @Test func theConfigurationsLoadTrackingIsRequestedWhateverItSays() {
        var machine = Self.started()
        let urls = ["https://t.example/load"]
        #expect(
            machine.configurationAnswered(
                Self.first, .success(F.content([#"{"enabled":false}"#], loadURLs: urls)), uidKnown: true)
                == [.trackContentLoad(urls), .stopWork(Self.first), .finish(Self.first, .unavailable(.disabled))])
    }

    // covers: P6
    @Test func aFailedRePreparationKeepsTheLastReadyStartScreen() throws {
        var machine = Self.started()
        _ = machine.configurationAnswered(Self.first, .success(F.content()), uidKnown: true)
        _ = machine.prepareCalled(
            Self.second, selector: F.selector, pageContext: F.otherPage, timeout: .seconds(10), hostRegistered: true)
        _ = machine.configurationAnswered(Self.second, .failure(F.failure(.server)), uidKnown: true)
        #expect(machine.publicState == .failed)
        #expect(machine.ready == nil)
        let kept = try #require(machine.lastReady)
        #expect(kept.id == Self.first)
        #expect(kept.pageContext == F.page)
    }

    @Test func anIdentityChangeSupersedesTheCallInFlightAndForgetsTheStartScreen() {
        var ready = Self.started()
        _ = ready.configurationAnswered(Self.first, .success(F.content()), uidKnown: true)
        #expect(ready.identityChanged() == [])
        #expect(ready.lastReady == nil)
        #expect(ready.publicState == .idle)
        var inFlight = Self.started()
        #expect(inFlight.identityChanged() == [.stopWork(Self.first), .finish(Self.first, .superseded)])
    }
}
