import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// The presentation lock (B6) against the flutter SDK's lock tests. One deliberate
/// difference: the listener hears changes only, not every call (see docs/GRAVITY-CONFORMANCE.md).
@Suite(.timeLimit(.minutes(2))) struct PresentationLockConformanceTests {
    // Mirrors: flutter gravity_sdk_presentation_lock_default_test (unlocked by default).
    // covers: B6
    @Test func unlockedByDefault() async {
        let h = await EngineHarness()
        #expect(await h.engine.presentationLocks == PresentationLocks())
        #expect(await h.engine.presentationLocks.isLocked == false)
    }

    // Mirrors: flutter "lockPresentation locks, unlockPresentation unlocks" and "repeated lock
    // and unlock calls are idempotent".
    // covers: B6
    @Test func lockAndUnlockAreIdempotent() async {
        let h = await EngineHarness()
        await h.engine.lockPresentation()
        await h.engine.lockPresentation()
        #expect(await h.engine.presentationLocks.app)
        await h.engine.unlockPresentation()
        #expect(await h.engine.presentationLocks.isLocked == false, "not counted: one unlock releases it")
        await h.engine.unlockPresentation()
        #expect(await h.engine.presentationLocks.isLocked == false)
    }

    // Mirrors: flutter "receives true on lock and false on unlock" — and differs from flutter's
    // "is invoked on every call, including redundant ones": our listener reports changes, so
    // a redundant call is silent (B6: "a listener reports changes").
    // covers: B6
    @Test func listenerHearsEachChangeOnce() async {
        let h = await EngineHarness()
        let heard = CollectedValues<PresentationLocks>()
        await h.engine.setPresentationLockListener { heard.append($0) }
        await h.engine.lockPresentation()
        await h.engine.lockPresentation()
        await h.engine.unlockPresentation()
        await h.engine.unlockPresentation()
        #expect(heard.all == [PresentationLocks(app: true), PresentationLocks()])
    }

    // Mirrors: flutter "setting a new listener replaces the previous one" and "setting a null
    // listener clears the subscription".
    // covers: B6
    @Test func newListenerReplacesTheOldAndNilClearsIt() async {
        let h = await EngineHarness()
        let first = CollectedValues<PresentationLocks>()
        let second = CollectedValues<PresentationLocks>()
        await h.engine.setPresentationLockListener { first.append($0) }
        await h.engine.setPresentationLockListener { second.append($0) }
        await h.engine.lockPresentation()
        #expect(first.all.isEmpty)
        #expect(second.all == [PresentationLocks(app: true)])
        await h.engine.setPresentationLockListener(nil)
        await h.engine.unlockPresentation()
        #expect(second.all == [PresentationLocks(app: true)])
    }
}
