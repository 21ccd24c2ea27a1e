import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// What a long-lived engine must not accumulate: a callback it keeps and calls again and again
/// costs the same on its thousandth call as on its first.
@Suite(.timeLimit(.minutes(2)))
struct LongLivedEngineTests {
    // The identity listener the tracker calls with every lifecycle event's answer (B9) sat in a
    // `Locked` as a bare closure: each read through the generic `withLock` wrapped it in two
    // more reabstraction thunks, so every call ran one frame deeper than the last — a message
    // cost grew with the dialog (half the CPU of a 5,000-message dialog) and a long enough
    // session would overflow the stack. The depth at which the listener runs must not grow.
    // covers: B9
    @Test func theIdentityListenerRunsAtTheSameDepthOnItsLastCallAsOnItsFirst() async throws {
        let h = await EngineHarness()
        let depths = Locked<[Int]>([])
        let engine = h.engine
        let outbox = await engine.outbox
        outbox.setIdentityListener { _, _, _ in
            let depth = Thread.callStackReturnAddresses.count
            depths.withLock { $0.append(depth) }
        }
        let count = 400
        h.expectEvents(count)
        let user = GravityUser(uid: "u-8f3c")
        let envelope = GravityClient.Envelope(user: user, context: Fixtures.homePage, options: GravityOptions())
        let event = GravityCustomEvent(type: "chat_dialog_open", name: "chat dialog open", customProps: [:])
        for _ in 0..<count {
            await engine.track([.event(event, envelope: envelope, identityEpoch: 1)])
        }
        try await h.bed.runUntilIdle()
        await h.engine.flushTracking()
        let seen = depths.withLock { $0 }
        #expect(seen.count == count, "every answer reached the listener")
        let (first, deepest) = (seen.first ?? 0, seen.max() ?? 0)
        // The worker that calls it may sit a few frames deeper or shallower from call to call;
        // growth of two frames per call would be 800 here.
        #expect(deepest - first < 40, "first call at depth \(first), deepest \(deepest)")
        await h.verify()
    }
}
