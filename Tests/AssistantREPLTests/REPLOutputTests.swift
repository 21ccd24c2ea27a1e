import ShoppingAssistant
import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct REPLOutputTests {
    @Test func linesPassThroughAndAreNotKept() {
        let sunk = Locked<[String]>([])
        let output = REPLOutput { line in sunk.withLock { $0.append(line) } }
        for index in 0..<10_000 { output.line("line \(index)") }
        #expect(sunk.withLock { $0.count } == 10_000)
        // Nothing printed so far reaches an observer that comes later: nothing was kept.
        let observed = Locked<[String]>([])
        output.setObserver { line in observed.withLock { $0.append(line) } }
        #expect(observed.withLock { $0 } == [])
        output.line("seen")
        output.echo("> typed")
        output.setObserver(nil)
        output.line("after")
        #expect(observed.withLock { $0 } == ["seen"])
        #expect(sunk.withLock { Array($0.suffix(3)) } == ["seen", "> typed", "after"])
    }

    @Test func engineLogLinesSayTheirLevelAndAreSanitised() {
        let sunk = Locked<[String]>([])
        let output = REPLOutput { line in sunk.withLock { $0.append(line) } }
        output.log(.error, "shopping POST /v1/messages: server (HTTP 502)\u{1b}[2J")
        output.log(.info, "reply button not offered")
        output.log(.debug, "gravity POST /v2/visit")
        output.log(.none, "never")
        #expect(
            sunk.withLock { $0 } == [
                "[error] shopping POST /v1/messages: server (HTTP 502)", "note: reply button not offered",
                "debug: gravity POST /v2/visit",
            ])
    }

    @Test func notesAppearOnlyAtTheInfoLevel() async throws {
        let quiet = try await DemoREPL(logLevel: .error)
        quiet.environment.engine.logger.log(.info, "handled")
        quiet.environment.engine.logger.log(.error, "failed")
        #expect(await quiet.run(":state").printed.prefix(2) == ["[error] failed", "preparation: idle"])

        let chatty = try await DemoREPL(logLevel: .info)
        chatty.environment.engine.logger.log(.info, "handled")
        chatty.environment.engine.logger.log(.debug, "details")
        #expect(await chatty.run(":state").printed.prefix(2) == ["note: handled", "preparation: idle"])
    }
}
