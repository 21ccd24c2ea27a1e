import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct ImpressionTimerTests {
    typealias Machine = ImpressionTimer<String>

    /// A machine with the chat open, the app in the foreground and `visible` on screen; the
    /// timers that started are returned with their generations.
    private func opened(showing visible: [String]) -> (Machine, [String: UInt64]) {
        var machine = Machine()
        _ = machine.chatOpened()
        var generations: [String: UInt64] = [:]
        for action in machine.visibleChanged(visible) {
            if case .startTimer(let key, let generation, _) = action { generations[key] = generation }
        }
        return (machine, generations)
    }

    // covers: PR5
    @Test func cardVisibleForOneSecondWithChatOpenIsReported() {
        var machine = Machine()
        #expect(machine.chatOpened() == [])
        #expect(
            machine.visibleChanged(["a", "b"]) == [
                .startTimer("a", generation: 1, after: .seconds(1)),
                .startTimer("b", generation: 2, after: .seconds(1)),
            ])
        #expect(machine.timerFired("b", generation: 2) == [.reportImpression("b")])
        #expect(machine.timerFired("a", generation: 1) == [.reportImpression("a")])
        #expect(machine.timing.isEmpty)
    }

    // covers: PR5
    @Test func nothingStartsWhileTheChatIsClosed() {
        var machine = Machine()
        #expect(machine.visibleChanged(["a"]) == [])
        #expect(machine.chatOpened() == [.startTimer("a", generation: 1, after: .seconds(1))])
    }

    // covers: PR5
    @Test func scrollingACardOutResetsItsTimer() {
        var (machine, generations) = opened(showing: ["a", "b", "c"])
        #expect(
            machine.visibleChanged(["b", "c", "d"]) == [
                .cancelTimer("a"), .startTimer("d", generation: 4, after: .seconds(1)),
            ])
        #expect(machine.timerFired("a", generation: generations["a"]!) == [])
        // Back into view: a fresh timer, and the old one's late firing is ignored.
        #expect(
            machine.visibleChanged(["a", "b", "c"]) == [
                .cancelTimer("d"), .startTimer("a", generation: 5, after: .seconds(1)),
            ])
        #expect(machine.timerFired("a", generation: generations["a"]!) == [])
        #expect(machine.timerFired("a", generation: 5) == [.reportImpression("a")])
    }

    // covers: PR5
    @Test func cardStillVisibleAfterARedrawKeepsItsRunningTimer() {
        var (machine, generations) = opened(showing: ["a", "b"])
        #expect(machine.visibleChanged(["a", "b"]) == [])
        #expect(machine.visibleChanged(["b", "a", "c"]) == [.startTimer("c", generation: 3, after: .seconds(1))])
        #expect(machine.timerFired("a", generation: generations["a"]!) == [.reportImpression("a")])
    }

    // covers: PR5
    @Test func backgroundCancelsAndForegroundStartsAgainFromZero() {
        var (machine, generations) = opened(showing: ["a"])
        #expect(machine.enteredBackground() == [.cancelTimer("a")])
        #expect(machine.timerFired("a", generation: generations["a"]!) == [])
        #expect(machine.visibleChanged(["a", "b"]) == [])
        #expect(
            machine.enteredForeground() == [
                .startTimer("a", generation: 2, after: .seconds(1)),
                .startTimer("b", generation: 3, after: .seconds(1)),
            ])
    }

    // covers: PR5
    @Test func closingTheChatCancelsEveryTimer() {
        var (machine, generations) = opened(showing: ["a", "b"])
        #expect(machine.chatClosed() == [.cancelTimer("a"), .cancelTimer("b")])
        #expect(machine.timerFired("b", generation: generations["b"]!) == [])
        #expect(machine.reported.isEmpty)
    }

    // covers: PR6
    @Test func eachKeyIsReportedAtMostOnce() {
        var (machine, generations) = opened(showing: ["a"])
        #expect(machine.timerFired("a", generation: generations["a"]!) == [.reportImpression("a")])
        #expect(machine.timerFired("a", generation: generations["a"]!) == [])
        #expect(machine.visibleChanged([]) == [])
        #expect(machine.visibleChanged(["a"]) == [])
        #expect(machine.chatClosed() == [])
        #expect(machine.chatOpened() == [])
        #expect(machine.reported == ["a"])
    }

    @Test func unknownTimerIsIgnored() {
        var (machine, _) = opened(showing: ["a"])
        #expect(machine.timerFired("zzz", generation: 1) == [])
        #expect(machine.timerFired("a", generation: 99) == [])
        #expect(machine.timing == ["a"])
    }

    @Test func duplicateKeysInOneViewportStartOneTimer() {
        var machine = Machine()
        _ = machine.chatOpened()
        #expect(machine.visibleChanged(["a", "a"]) == [.startTimer("a", generation: 1, after: .seconds(1))])
    }

    @Test func dwellIsConfigurable() {
        var machine = ImpressionTimer<Int>(dwell: .milliseconds(500))
        _ = machine.chatOpened()
        #expect(machine.visibleChanged([7]) == [.startTimer(7, generation: 1, after: .milliseconds(500))])
    }
}
