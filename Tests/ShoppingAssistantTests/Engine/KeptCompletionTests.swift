import Testing

@testable import ShoppingAssistant

/// A `triggerEvent` returns once its events are kept, resumed from the store's queue: the
/// first completion is its result, whoever completes it, and nothing of it outlives the call.
@Suite struct KeptCompletionTests {
    // covers: DL5
    @Test func theFirstCompletionIsTheResultWhetherTheCallerWaitsAlreadyOrComesLater() async {
        let early = KeptCompletion(activity: nil)
        early.complete(.done)
        early.complete(.content(nil))  // the machine's, after the store's: changes nothing
        #expect(await early.result() == .done)

        let late = KeptCompletion(activity: nil)
        let caller = Task { await late.result() }
        for _ in 0..<100 { await Task.yield() }  // most likely parked by now; either way it must end
        late.complete(.content(nil))
        late.complete(.done)
        let result = await withinHangGuard("the parked caller's resumption") { await caller.value }
        #expect(result == .content(nil))
    }

    // covers: DL5
    @Test func aCallerParkedOnAKeptCompletionCountsAsRunnableOnlyOnceResumed() async {
        let activity = ActivityMonitor()
        let completion = KeptCompletion(activity: activity)
        activity.begin()  // the caller, running
        let caller = Task { () -> CallResult in
            let result = await completion.result()
            activity.end()
            return result
        }
        _ = await withinHangGuard("the caller parks") {
            while activity.busy > 0 { await Task.yield() }
        }
        completion.complete(.done)
        #expect(await withinHangGuard("the caller's resumption") { await caller.value } == .done)
        #expect(activity.busy == 0)
    }

    // covers: DL5
    @Test func aKeptCallIsForgottenOnceBothItsCallerAndTheMachineAreDoneWithIt() {
        var calls = CallsInProgress()
        // The store keeps the event before the caller looks: the caller takes it, then the
        // machine completes it (its answer came).
        let first = calls.begin(insideHostCallback: false, offering: nil)
        let kept = calls.completeWhenKept(first, activity: nil)
        kept.complete(.done)
        #expect(calls.takeCompleted(first) == nil)
        #expect(calls.takeKeptCompletion(first) === kept)
        #expect(calls.keptCompletionCount == 1)
        #expect(calls.complete(first, with: .done) == nil)
        #expect(calls.keptCompletionCount == 0)
        #expect(calls.takeCompleted(first) == nil, "the machine's completion is not kept for anyone")

        // The machine completes it before the caller looks (a failure answered at once).
        let second = calls.begin(insideHostCallback: false, offering: nil)
        let other = calls.completeWhenKept(second, activity: nil)
        #expect(calls.complete(second, with: .done) == nil)
        #expect(calls.keptCompletionCount == 1)
        #expect(calls.takeKeptCompletion(second) === other)
        #expect(calls.keptCompletionCount == 0)
        #expect(calls.takeCompleted(second) == nil)
    }
}
