import Foundation
import Testing

@testable import ShoppingAssistant

/// The `user` Gravity requests carry, kept by the identity rather than made per request: it
/// must say what the identity says after every change.
@Suite struct IdentityStateTests {
    private static func answer(uid: String? = nil, ses: String? = nil) -> GravityAnsweredUser {
        GravityAnsweredUser(uid: uid, ses: ses)
    }

    // covers: B3
    @Test func theManagedUserFollowsEveryAnswerOfItsOwnIdentity() {
        var identity = IdentityState(storedUID: "u-1")
        #expect(identity.wire == GravityUser(uid: "u-1"))
        _ = identity.answered(Self.answer(ses: "s-1"), epoch: 1)
        #expect(identity.wire == GravityUser(uid: "u-1", ses: "s-1"), "ses alone")
        _ = identity.answered(Self.answer(uid: "u-2", ses: "s-1"), epoch: 1)
        #expect(identity.wire == GravityUser(uid: "u-2", ses: "s-1"), "a new uid")
        _ = identity.answered(Self.answer(uid: "u-9", ses: "s-9"), epoch: 0)
        #expect(identity.wire == GravityUser(uid: "u-2", ses: "s-1"), "an older identity's answer changes nothing")
        _ = identity.answered(nil, epoch: 1)
        #expect(identity.wire == GravityUser(uid: "u-2", ses: "s-1"))
    }

    // covers: B3
    @Test func aManualUserTravelsAsCustomWithItsOwnOrGravitysSession() {
        var identity = IdentityState(storedUID: "u-1")
        _ = identity.answered(Self.answer(ses: "s-managed"), epoch: 1)
        let changed = identity.userSet(userId: "app-1", sessionId: nil)
        #expect(changed)
        #expect(identity.wire == GravityUser(custom: "app-1"), "never the managed uid or session")
        _ = identity.answered(Self.answer(uid: "u-app", ses: "s-gravity"), epoch: identity.epoch)
        #expect(identity.wire == GravityUser(custom: "app-1", ses: "s-gravity"), "the canonical uid is not sent")
        let changedAgain = identity.userSet(userId: "app-1", sessionId: "s-app")
        #expect(!changedAgain, "the same id with another session is no identity change")
        #expect(identity.wire == GravityUser(custom: "app-1", ses: "s-app"), "the app's session wins")
        identity.resetRequested()
        #expect(identity.wire == GravityUser(), "a reset sends `{}`")
    }

    @Test func aUserIsItsFieldsWhereverItWasMade() {
        let user = GravityUser(uid: "u", ses: "s")
        let same = GravityUser(uid: "u", ses: "s")
        #expect(user == same)
        #expect(user.hashValue == same.hashValue)
        #expect(user != GravityUser(uid: "u"))
        #expect(user != GravityUser(custom: "u", ses: "s"))
        #expect(String(decoding: WireJSON.encode(user), as: UTF8.self) == #"{"ses":"s","uid":"u"}"#)
        #expect(String(decoding: WireJSON.encode(GravityUser()), as: UTF8.self) == "{}")
        #expect(String(decoding: WireJSON.encode(GravityUser(custom: "c")), as: UTF8.self) == #"{"custom":"c"}"#)
        #expect(user.description == #"GravityUser(uid: "u", ses: "s")"#, "what a failing test shows")
    }
}
