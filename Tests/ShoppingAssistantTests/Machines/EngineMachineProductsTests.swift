import Foundation
import Testing

@testable import ShoppingAssistant

@Suite struct EngineMachineProductsTests {
    private typealias F = MachineFixtures
    private static let one = F.opening(1)
    private static let user = GravityUser(uid: "uid-1")

    /// Ready, open, and a reply with one product and two buttons on screen.
    private static func openWithReply(
        products: [JSONValue] = [F.product()], canHandle: @escaping (AssistantAction) -> Bool = { _ in true }
    ) throws -> EngineMachine {
        var machine = F.machine(canHandle: canHandle)
        F.prepareReady(&machine)
        try F.open(&machine)
        let tag = try F.send(&machine)
        _ = machine.shoppingAnswered(
            .message(tag), .reply(.success(try F.reply(to: "m-1", products: products))), canHandle: canHandle)
        F.finishHostCalls(&machine)  // the presenter has the reply
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
        let dismiss = F.nextHostCall(machine)
        #expect(
            F.withoutLogs(machine.productActionCalled(F.call(1), ref: product.ref, action: .tap)) == [
                .track([.url("https://t.example/c1", user: Self.user)]), .callHost(dismiss, .dismiss(Self.one)),
            ])
        let handOver = F.nextHostCall(machine)
        #expect(
            F.withoutLogs(machine.hostCallFinished(dismiss)) == [
                .notifyLocks(PresentationLocks()), F.event("chat_dialog_close", ["threadId": "thread-1"]),
                .callHost(handOver, .handOver(.openProduct(product))),
            ])
        #expect(machine.hostCallFinished(handOver) == [.complete(F.call(1), .interaction(.accepted))])
    }

    // covers: PR9
    @Test func aSecondTapWhileClosingIsADuplicateAndHandsNothingOver() throws {
        var machine = try Self.openWithReply()
        let product = try Self.product(machine)
        _ = machine.productActionCalled(F.call(1), ref: product.ref, action: .tap)
        #expect(
            F.withoutLogs(machine.productActionCalled(F.call(2), ref: product.ref, action: .tap))
                == [.complete(F.call(2), .interaction(.duplicate))])
        let closed = try F.finish(&machine, .dismiss(Self.one))
        #expect(F.hostCallKinds(closed) == [.handOver(.openProduct(product))])
    }

    // A tap made from inside a host callback (an update that taps for the user) is answered at
    // once: the close and hand-over it starts follow once the callback has returned.
    // covers: H1, PR10
    @Test func aTapFromInsideAHostCallbackIsAcceptedAtOnce() throws {
        var machine = try Self.openWithReply()
        let product = try Self.product(machine)
        let call = F.callFromInsideAHostCallback(1)
        let actions = machine.productActionCalled(call, ref: product.ref, action: .tap)
        #expect(F.completions(actions) == [.complete(call, .interaction(.accepted))])
        let closed = try F.finish(&machine, .dismiss(Self.one))
        #expect(F.hostCallKinds(closed) == [.handOver(.openProduct(product))])
        #expect(F.completions(try F.finish(&machine, .handOver)) == [])
    }

    // A tap whose caller is cancelled while the hand-over is under way returns `.accepted`
    // at once; the hand-over goes on.
    // covers: H1, PR10
    @Test func aCancelledTapReturnsAcceptedAndTheHandOverGoesOn() throws {
        var machine = try Self.openWithReply()
        let product = try Self.product(machine)
        _ = machine.productActionCalled(F.call(1), ref: product.ref, action: .tap)
        _ = try F.finish(&machine, .dismiss(Self.one))
        #expect(machine.callCancelled(F.call(1)) == [.complete(F.call(1), .interaction(.accepted))])
        #expect(F.completions(try F.finish(&machine, .handOver)) == [])
    }

    // The caller of a tap returns once its own hand-over is done, even if the handler opened the
    // chat again meanwhile.
    // covers: PR10, H1
    @Test func aTapReturnsOnceHandedOverEvenIfTheChatIsOpenAgain() throws {
        var machine = try Self.openWithReply()
        let product = try Self.product(machine)
        _ = machine.productActionCalled(F.call(1), ref: product.ref, action: .tap)
        _ = try F.finish(&machine, .dismiss(Self.one))
        _ = machine.openCalled(F.callFromInsideAHostCallback(2), presenter: .available, presenterAlive: true)
        #expect(F.completions(try F.finish(&machine, .handOver)) == [.complete(F.call(1), .interaction(.accepted))])
    }

    // covers: PR8
    @Test func aRefFromBeforeTheCloseIsStaleWithNoTrackingAndNoNavigation() throws {
        var machine = try Self.openWithReply()
        let product = try Self.product(machine)
        _ = machine.closeCalled(F.call(1))
        _ = try F.finish(&machine, .dismiss(Self.one))
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

    // An impression's one decision, over fresh refs, duplicates, a stale ref, a missing
    // product, repeated URLs and a product with none: its note, its tracking (identical URLs
    // once), then its completion.
    // covers: PR6, PR8, AN5
    @Test func anImpressionIsDecidedAtOnceWithItsNoteTrackingAndCompletion() throws {
        var machine = try Self.openWithReply(products: [
            F.product(itemId: "p-1"),
            F.product(
                itemId: "p-2", impressions: ["https://t.example/a", "https://t.example/a", "https://t.example/b"]),
            F.product(itemId: "p-3", impressions: []),
        ])
        let refs = try #require(machine.snapshot().messages.last?.productBlock?.products.map(\.ref))
        try #require(refs.count == 3)
        let first = refs[0]
        let otherOpening = AssistantProductRef(
            opening: first.opening + 1, dialog: first.dialog, identity: first.identity, reply: first.reply, item: 0)
        let missing = AssistantProductRef(
            opening: first.opening, dialog: first.dialog, identity: first.identity, reply: first.reply, item: 9)
        let steps: [(AssistantProductRef, AssistantInteractionResult, [String])] = [
            (refs[0], .accepted, ["https://t.example/vi1"]),
            (refs[1], .accepted, ["https://t.example/a", "https://t.example/b"]),  // AN5: identical URLs once
            (refs[2], .accepted, []),
            (refs[0], .duplicate, []),  // PR6
            (otherOpening, .staleReference, []),  // PR8
            (missing, .staleReference, []),  // PR8
            (refs[1], .duplicate, []),
        ]
        for (index, (ref, expected, urls)) in steps.enumerated() {
            let call = F.call(UInt64(index + 1))
            let actions = machine.productActionCalled(call, ref: ref, action: .visibleImpression)
            #expect(actions.first == .log(.info, .productAction(.visibleImpression, ref, expected)), "step \(index)")
            #expect(F.trackedURLs(actions) == urls, "step \(index)")
            #expect(actions.last == .complete(call, .interaction(expected)), "step \(index)")
            #expect(actions.count == (urls.isEmpty ? 2 : 3), "step \(index): \(actions)")
        }
    }

    // Tracking held for the presenter's snapshot leaves before a later impression's (AN5, in
    // the order they happened), and a shut-down engine refuses the impression (H2).
    // covers: H2, AN5
    @Test func anImpressionLeavesBehindHeldTrackingAndIsRefusedOnceShutDown() throws {
        var machine = try Self.openWithReply()
        let ref = try Self.product(machine).ref
        let tag = try F.send(&machine, messageId: "m-2")
        F.finishHostCalls(&machine)  // the presenter shows the message: the reply's update starts at once
        let reply = try F.reply(to: "m-2", assistantMessageId: "am-2")
        _ = machine.receive { $0.shoppingAnswered(.message(tag), .reply(.success(reply)), canHandle: { _ in true }) }
        let held = try #require(TrackingJobs(machine.trackingAfterPresenter), "nothing held for the update")
        let actions = machine.receive(call: F.call(1), refusal: .interaction(.staleReference)) {
            $0.productActionCalled($1, ref: ref, action: .visibleImpression)
        }
        #expect(F.withoutLogs(actions).first == .track(held))
        #expect(F.trackedURLs(actions).last == "https://t.example/vi1")
        #expect(F.completions(actions) == [.complete(F.call(1), .interaction(.accepted))])

        _ = machine.shutdownCalled(F.call(2))
        #expect(
            machine.receive(call: F.call(3), refusal: .interaction(.staleReference)) {
                $0.productActionCalled($1, ref: ref, action: .visibleImpression)
            }.last == .complete(F.call(3), .interaction(.staleReference)))
    }

    // covers: AC5, AC6, AN1
    @Test func aReplyButtonClosesTheChatThenHandsItsActionOverWithoutProductTracking() throws {
        var machine = try Self.openWithReply()
        let button = try #require(machine.snapshot().messages.last?.buttons.first)
        let dismiss = F.nextHostCall(machine)
        let pressed = machine.replyButtonPressed(F.call(1), assistantMessageId: "am-1", index: 0)
        #expect(
            F.withoutLogs(pressed) == [
                F.event(
                    "chat_action",
                    ["threadId": "thread-1", "assistantMessageId": "am-1", "action": "open_support_chat"]),
                .callHost(dismiss, .dismiss(Self.one)),
            ])
        let closed = machine.hostCallFinished(dismiss)
        #expect(F.hostCallKinds(closed) == [.handOver(button.action)])
        #expect(F.trackedURLs(pressed + closed) == [])
        #expect(F.completions(closed) == [])
        #expect(try F.finish(&machine, .handOver) == [.complete(F.call(1), .interaction(.accepted))])
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
