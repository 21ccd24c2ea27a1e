import Testing

@testable import ShoppingAssistant

@Suite struct EngineTimersTests {
    private static let a = TimerID.preparation(PreparationID(value: 1))
    private static let b = TimerID.reply(DialogTag(dialog: 1, messageId: "m-1", attempt: 1))
    private static let c = TimerID.preparation(PreparationID(value: 2))

    @Test func theEarliestDeadlineIsTheTickersTarget() {
        var timers = EngineTimers()
        #expect(timers.isEmpty)
        #expect(timers.earliest == nil)
        timers.set(Self.a, at: .seconds(10))
        timers.set(Self.b, at: .seconds(120))
        #expect(timers.earliest == .seconds(10))
        #expect(!timers.isEmpty)
    }

    @Test func onlyDueDeadlinesAreTakenEarliestFirstThenInTheOrderSet() {
        var timers = EngineTimers()
        timers.set(Self.b, at: .seconds(5))
        timers.set(Self.c, at: .seconds(3))
        timers.set(Self.a, at: .seconds(5))
        timers.set(TimerID.preparation(PreparationID(value: 9)), at: .seconds(6))
        #expect(timers.takeDue(at: .seconds(2)) == [])
        #expect(timers.takeDue(at: .seconds(5)) == [Self.c, Self.b, Self.a])
        #expect(timers.takeDue(at: .seconds(5)) == [])
        #expect(timers.earliest == .seconds(6))
    }

    @Test func aCancelledDeadlineNeverFiresAndAMovedOneFiresAtItsNewTime() {
        var timers = EngineTimers()
        timers.set(Self.a, at: .seconds(1))
        timers.set(Self.b, at: .seconds(2))
        timers.cancel(Self.a)
        timers.cancel(Self.c)  // not set: nothing happens
        timers.set(Self.b, at: .seconds(30))  // D5: the same tag's history bound replaces the reply deadline
        #expect(timers.takeDue(at: .seconds(10)) == [])
        #expect(timers.takeDue(at: .seconds(30)) == [Self.b])
        #expect(timers.isEmpty)
    }
}
