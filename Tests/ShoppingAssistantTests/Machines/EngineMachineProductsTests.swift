import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct EngineMachineProductsTests {
    private typealias F = MachineFixtures
    private static let one = F.opening(1)
    private static let user = GravityUser(uid: "uid-1")

    /// Ready, open, and a reply with one product and two buttons on screen.
    private static func openWithReply(canHandle: @escaping (AssistantAction) -> Bool = { _ in true }) throws
        -> EngineMachine
    {
        var machine = F.machine(canHandle: canHandle)
        F.prepareReady(&machine)
        try F.open(&machine)
        let tag = try F.send(&machine)
        _ = machine.shoppingAnswered(.message(tag), .reply(.success(try F.reply(to: "m-1"))), canHandle: canHandle)
        return machine
    }

    private static func product(_ machine: EngineMachine) throws -> AssistantProduct {
        let reply = try #require(machine.snapshot().messages.last)
        return try #require(reply.productBlock?.products.first)
    }

    // covers: PR10, AN5, AN8
    @Test func anAcceptedTapQueuesTheClickClosesAndHandsTheProductOverAfterTheClose() throws {
        var machine = try Self.openWithReply()
        let product = try Self.product(machine)
        #expect(
            F.withoutLogs(machine.productActionCalled(F.call(1), ref: product.ref, action: .tap)) == [
                .track([.url("https://t.example/c1", user: Self.user)]), .callHost(.dismiss(Self.one)),
            ])
        #expect(
            F.withoutLogs(machine.hostCallFinished(.dismiss(Self.one))) == [
                .notifyLocks(PresentationLocks()), F.event("chat_dialog_close", ["threadId": "thread-1"]),
                .callHost(.handOver(.openProduct(product))),
            ])
        #expect(
            machine.hostCallFinished(.handOver(.openProduct(product))) == [
                .complete(F.call(1), .interaction(.accepted))
            ])
    }

    // covers: PR9
    @Test func aSecondTapWhileClosingIsADuplicateAndHandsNothingOver() throws {
        var machine = try Self.openWithReply()
        let product = try Self.product(machine)
        _ = machine.productActionCalled(F.call(1), ref: product.ref, action: .tap)
        #expect(
            F.withoutLogs(machine.productActionCalled(F.call(2), ref: product.ref, action: .tap))
                == [.complete(F.call(2), .interaction(.duplicate))])
        let closed = machine.hostCallFinished(.dismiss(Self.one))
        #expect(F.hostCalls(closed) == [.handOver(.openProduct(product))])
    }

    // covers: PR8
    @Test func aRefFromBeforeTheCloseIsStaleWithNoTrackingAndNoNavigation() throws {
        var machine = try Self.openWithReply()
        let product = try Self.product(machine)
        _ = machine.closeCalled(F.call(1))
        _ = machine.hostCallFinished(.dismiss(Self.one))
        try F.open(&machine, call: F.call(2))
        #expect(
            F.withoutLogs(machine.productActionCalled(F.call(3), ref: product.ref, action: .tap))
                == [.complete(F.call(3), .interaction(.staleReference))])
    }

    // covers: PR6
    @Test func aVisibleImpressionIsTrackedOncePerOpening() throws {
        var machine = try Self.openWithReply()
        let product = try Self.product(machine)
        #expect(
            F.withoutLogs(machine.productActionCalled(F.call(1), ref: product.ref, action: .visibleImpression)) == [
                .track([.url("https://t.example/vi1", user: Self.user)]),
                .complete(F.call(1), .interaction(.accepted)),
            ])
        #expect(
            F.withoutLogs(machine.productActionCalled(F.call(2), ref: product.ref, action: .visibleImpression))
                == [.complete(F.call(2), .interaction(.duplicate))])
    }

    // covers: AC5, AC6, AN1
    @Test func aReplyButtonClosesTheChatThenHandsItsActionOverWithoutProductTracking() throws {
        var machine = try Self.openWithReply()
        let button = try #require(machine.snapshot().messages.last?.buttons.first)
        let pressed = machine.replyButtonPressed(F.call(1), assistantMessageId: "am-1", index: 0)
        #expect(
            F.withoutLogs(pressed) == [
                F.event(
                    "chat_action",
                    ["threadId": "thread-1", "assistantMessageId": "am-1", "action": "open_support_chat"]),
                .callHost(.dismiss(Self.one)),
            ])
        let closed = machine.hostCallFinished(.dismiss(Self.one))
        #expect(F.hostCalls(closed) == [.handOver(button.action)])
        #expect(F.trackedURLs(pressed + closed) == [])
        #expect(F.completions(closed) == [])
        #expect(machine.hostCallFinished(.handOver(button.action)) == [.complete(F.call(1), .interaction(.accepted))])
    }

    // covers: AC4
    @Test func aButtonTheHandlerCannotHandleIsDisabledAndPressingItDoesNothing() throws {
        var machine = try Self.openWithReply { action in action.name != "open_support_chat" }
        let buttons = try #require(machine.snapshot().messages.last?.buttons)
        #expect(buttons.map(\.isEnabled) == [false, true])
        #expect(
            machine.replyButtonPressed(F.call(1), assistantMessageId: "am-1", index: 0)
                == [.complete(F.call(1), .interaction(.notActionable))])
        #expect(machine.isAssistantOpen)
    }

    // covers: AC4
    @Test func registeringAnotherHandlerAsksAgainWhichButtonsAreOffered() throws {
        var machine = try Self.openWithReply { _ in false }
        #expect(machine.snapshot().messages.last?.buttons.map(\.isEnabled) == [false, false])
        F.finishDeliveries(&machine, opening: Self.one)
        let actions = machine.handlerRegistered { _ in true }
        #expect(machine.snapshot().messages.last?.buttons.map(\.isEnabled) == [true, true])
        #expect(F.hostCalls(actions).count == 1)
    }

    @Test func aButtonOfAnUnknownReplyOrWithTheChatClosedIsStale() throws {
        var machine = try Self.openWithReply()
        #expect(
            machine.replyButtonPressed(F.call(1), assistantMessageId: "am-x", index: 0)
                == [.complete(F.call(1), .interaction(.staleReference))])
        #expect(
            machine.replyButtonPressed(F.call(2), assistantMessageId: "am-1", index: 7)
                == [.complete(F.call(2), .interaction(.staleReference))])
        _ = machine.closeCalled(F.call(3))
        #expect(
            machine.replyButtonPressed(F.call(4), assistantMessageId: "am-1", index: 0)
                == [.complete(F.call(4), .interaction(.staleReference))])
    }

    // covers: PR3
    @Test func onlyAPositiveFiniteBlockHeightIsAccepted() {
        #expect(!EngineMachine.acceptsBlockHeight(0))
        #expect(!EngineMachine.acceptsBlockHeight(-1))
        #expect(EngineMachine.acceptsBlockHeight(1))
        #expect(EngineMachine.acceptsBlockHeight(EngineMachine.maximumBlockHeight - 1))
        #expect(!EngineMachine.acceptsBlockHeight(EngineMachine.maximumBlockHeight))
        #expect(!EngineMachine.acceptsBlockHeight(.max))
    }
}
