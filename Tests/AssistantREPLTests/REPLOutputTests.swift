import Foundation
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

    // The observer and the layout width are called for every line: kept as bare closures in a
    // `Locked`, each call ran two frames deeper than the last, so a long session slowed down
    // line by line and would in the end overflow the stack.
    @Test func theObserverRunsAtTheSameDepthOnTheLastLineAsOnTheFirst() {
        let output = REPLOutput(sink: { _ in })
        output.fitLines { 80 }
        let depths = Locked<[Int]>([])
        output.setObserver { _ in
            let depth = Thread.callStackReturnAddresses.count
            depths.withLock { $0.append(depth) }
        }
        for index in 0..<500 { output.line("line \(index)") }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 500)
        #expect((seen.max() ?? 0) - (seen.first ?? 0) < 10, "first at \(seen.first ?? 0), deepest \(seen.max() ?? 0)")
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

    @Test func aTerminalsSinkGetsEachItemWholeAndAChatRedrawAtOnce() async {
        let calls = Locked<[[String]]>([])
        let observed = Locked<[String]>([])
        let output = REPLOutput(style: .plain) { (lines: [String]) in calls.withLock { $0.append(lines) } }
        output.fitLines { 20 }
        output.setObserver { line in observed.withLock { $0.append(line) } }
        output.untrusted("a reply long enough to wrap onto three rows", prefix: "assistant › ")
        #expect(calls.withLock { $0 }.count == 1, "one wrapped text, one call")
        #expect(calls.withLock { $0 }[0].count > 2)
        await output.grouped {
            output.line("Подарки (1–3 of 6)")
            output.line("┌─ 1 ─┐")
            output.line("└─────┘")
            // The observer (a recording) sees each line as it is printed, grouped or not.
            #expect(observed.withLock { $0 }.suffix(3) == ["Подарки (1–3 of 6)", "┌─ 1 ─┐", "└─────┘"])
        }
        #expect(calls.withLock { $0 }.last == ["Подарки (1–3 of 6)", "┌─ 1 ─┐", "└─────┘"])
        #expect(calls.withLock { $0 }.count == 2)
        // A group inside a group is part of it: its lines keep their place.
        await output.grouped {
            output.line("(width 80)")
            await output.grouped { output.line("Подарки (1–3 of 6)") }
        }
        #expect(calls.withLock { $0 }.last == ["(width 80)", "Подарки (1–3 of 6)"])
        // A line sink (pipes, replays, tests) sees every line alone, groups or not.
        let lines = Locked<[String]>([])
        let piped = REPLOutput { line in lines.withLock { $0.append(line) } }
        await piped.grouped {
            piped.line("one")
            #expect(lines.withLock { $0 } == ["one"], "printed at once, not held for the group")
        }
    }

    @Test func aLogLineWrapsUnderItsPrefixInsteadOfBeingCut() {
        let output = REPLOutput.capturing()
        output.fitLines { 40 }
        let cause =
            "gravity POST /visit (trackView) failed: network: cannot connect: Failed to connect to 127.0.0.1 port 9"
        output.log(.error, cause)
        let lines = output.lines
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 40 })
        #expect(lines[0].hasPrefix("[error] "))
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("        ") }, "continuations under the text")
        let joined = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(joined == "[error] " + cause, "every word of the cause is on screen")
        for width in [20, 80, 200] {
            let narrow = REPLOutput.capturing()
            narrow.fitLines { width }
            narrow.log(.info, cause)
            #expect(narrow.lines.allSatisfy { DisplayWidth.of($0) <= width })
            #expect(narrow.lines.joined().contains("port"))
            #expect(narrow.lines.joined(separator: " ").contains("9"), "width \(width)")
        }
    }

    @Test func aDebugBodyIsWholeSanitisedAndCappedOnlyPastALargeLimit() {
        let output = REPLOutput.capturing()
        output.fitLines { 80 }
        let body = "{\"text\":\"" + String(repeating: "Ж", count: 3_000) + "\u{1b}[2J\"}"
        output.log(.debug, "shopping ← 200 /v1/messages " + body)
        let text = output.lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined()
        #expect(text.filter { $0 == "Ж" }.count == 3_000, "the whole body")
        #expect(!text.contains("\u{1b}"))
        #expect(!text.contains("more bytes not shown"))

        let huge = String(repeating: "a", count: REPLOutput.logLimit + 5_000)
        let capped = REPLOutput.capped(huge, limit: REPLOutput.logLimit)
        #expect(capped.hasSuffix(" … (5000 more bytes not shown)"))
        #expect(capped.utf8.count < REPLOutput.logLimit + 100)
        // A cut never splits a character: "Ж" is two bytes.
        #expect(REPLOutput.capped("ЖЖЖ", limit: 3) == "Ж … (4 more bytes not shown)")
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
