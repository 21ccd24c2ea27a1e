import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

/// The one cancellable wait of the package (`ParkedCallers` inside a `Locked` state): a waiter
/// returns when resumed or when its task is cancelled, whichever comes first, and neither
/// order leaves anything behind.
@Suite(.timeLimit(.minutes(2)))
struct WaitersTests {
    struct Gate: WaitingState {
        var open = false
        var waiters = ParkedCallers<Bool, Void>()
    }

    static func opened(_ gate: Locked<Gate>) {
        let ready = gate.withLock { state -> [ParkedCallers<Bool, Void>.Waiter] in
            state.open = true
            return state.waiters.takeAll()
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    @Test func aWaiterReturnsWhenResumedAndOnCancellationWithNothingLeft() async {
        let gate = Locked(Gate())
        let resumed = Task { await gate.wait(cancelled: false) { $0.open ? .proceed(true) : .park(()) } }
        while gate.withLock({ $0.waiters.count }) == 0 { await Task.yield() }
        Self.opened(gate)
        #expect(await resumed.value == true)
        resumed.cancel()  // a cancellation after the resumption: nothing to remember

        let closed = Locked(Gate())
        let cancelled = Task { await closed.wait(cancelled: false) { $0.open ? .proceed(true) : .park(()) } }
        while closed.withLock({ $0.waiters.count }) == 0 { await Task.yield() }
        cancelled.cancel()
        #expect(await cancelled.value == false)
        #expect(gate.withLock { $0.waiters.unsettledTickets } == 0)
        #expect(closed.withLock { $0.waiters.unsettledTickets } == 0 && closed.withLock { $0.waiters.count } == 0)
    }

    // A task cancelled before it parks returns at once, and a thousand cancellations that
    // race resumptions leave no ticket behind (the old waits kept a set of "cancelled early"
    // marks that a cancellation after a resumption grew forever).
    @Test func cancellationsRacingResumptionsLeaveNoTicketBehind() async {
        let gate = Locked(Gate())
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await gate.wait(cancelled: false) { $0.open ? .proceed(true) : .park(()) }
        }
        #expect(await early.value == false)
        for _ in 0..<1_000 {
            let round = Locked(Gate())
            let waiter = Task { await round.wait(cancelled: false) { $0.open ? .proceed(true) : .park(()) } }
            await Task.yield()
            Self.opened(round)
            waiter.cancel()
            _ = await waiter.value
            #expect(round.withLock { $0.waiters.unsettledTickets } == 0)
        }
        #expect(gate.withLock { $0.waiters.unsettledTickets } == 0)
    }

    @Test func aFlushWaitsForWhatWasQueuedBeforeItNotForWhatCameAfter() async throws {
        let bed = await EngineTestBed(configuration: ShutdownTests.configuration)
        let first = bed.transport.expect(.get("https://t.example/first"), .deferred)
        let later = bed.transport.expect(.get("https://t.example/later"), .deferred)
        await bed.engine.track([.url("https://t.example/first", user: GravityUser(uid: "u"))])
        let flush = bed.start { engine -> Bool in
            await engine.flushTracking()
            return true
        }
        try await bed.runUntilIdle()
        await bed.engine.track([.url("https://t.example/later", user: GravityUser(uid: "u"))])
        #expect(flush.returnedValue == nil)
        bed.transport.complete(first, with: HTTPResponse(status: 204))
        try await bed.runUntilIdle()
        #expect(flush.returnedValue == true, "the later URL, still on its way, does not hold the flush")
        bed.transport.complete(later, with: HTTPResponse(status: 204))
        try await bed.runUntilIdle()
    }
}
