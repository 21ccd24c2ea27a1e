import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL
@testable import AssistantTranscripts

/// Partial bodies, placeholders and unpinned classes: what a hand-written transcript may
/// leave out, and that strict stays the default.
@Suite(.timeLimit(.minutes(2))) struct TranscriptMatchingTests {
    private func matches(_ pattern: String, _ actual: String) throws -> Bool {
        var bindings = TranscriptBindings()
        return bindings.match(try BodyPattern(pattern), text: actual, json: CanonicalJSON.value(actual))
    }

    @Test func anEllipsisLeavesOutMembersValuesElementsOrTheWholeBody() throws {
        let body =
            #"{"ctx":{"type":"PRODUCT","data":["KIT-1001"]},"data":[{"selector":"a"},{"selector":"b"}],"sec":"demo"}"#
        #expect(try matches(#"{"sec":"demo",…}"#, body))
        #expect(try matches(#"{"ctx":…,"data":…,"sec":"demo"}"#, body))
        #expect(try matches(#"{"data":[{"selector":"a"},…],…}"#, body))
        #expect(try !matches(#"{"sec":"other",…}"#, body), "what the file names is still pinned")
        #expect(try matches(#"{"ctx":{"type":"PRODUCT",...},...}"#, body), "three dots mean the same")
        #expect(try matches("…", body))
        #expect(try matches("…", ""), "any body includes none")
    }

    @Test func withoutAnEllipsisTheBodyIsExact() throws {
        let body = #"{"a":1,"b":[1,2]}"#
        #expect(try matches(#"{"b":[1,2],"a":1}"#, body), "key order and spacing do not matter")
        #expect(try !matches(#"{"a":1}"#, body), "a member the file does not name fails")
        #expect(try !matches(#"{"a":1,"b":[1]}"#, body), "an element the file does not name fails")
        #expect(try !matches(#"{"a":1,"b":[1,2,…],"c":…}"#, body), "a member the file names must be there")
        #expect(try !matches("", body), "no body written means no body")
    }

    @Test func aDifferenceIsNamedByItsPath() throws {
        let pattern = try JSONPattern.parse(#"{"data":[{"messageId":"<id>",…}],"sec":"demo"}"#)
        var bindings = TranscriptBindings()
        _ = bindings.match("<id>", "m-1")
        let actual = try #require(CanonicalJSON.value(#"{"data":[{"messageId":"m-2","x":1}],"sec":"demo"}"#))
        #expect(pattern.difference(from: actual, &bindings) == #"data[0].messageId: "<id>" in the file, "m-2" sent"#)
        let extra = try #require(CanonicalJSON.value(#"{"data":[{"messageId":"m-1"}],"sec":"demo","more":true}"#))
        #expect(pattern.difference(from: extra, &bindings) == "more: sent, not in the file (add … to allow it)")
    }

    @Test func patternErrorsSayWhatAndWhere() {
        do {
            _ = try JSONPattern.parse("[1,…,2]")
            Issue.record("an ellipsis inside an array parsed")
        } catch {
            #expect(error.description == "'…' must be the last element of an array (at character 5 of the body)")
        }
        #expect(throws: JSONPatternError.self) { try JSONPattern.parse(#"{"a":1,"a":2}"#) }
        #expect(throws: JSONPatternError.self) { try JSONPattern.parse(String(repeating: "[", count: 300)) }
        #expect(throws: JSONPatternError.self) { try JSONPattern.parse(#"{"a":1} trailing"#) }
    }

    @Test func aPlaceholderBoundOnceIsTheSameTextEverywhereAndTwoNamesNeverShareOne() {
        var bindings = TranscriptBindings()
        let bound = bindings.match("/v1/threads/<thread>/messages", "/v1/threads/t-1/messages")
        let other = bindings.match("<thread>", "t-2")
        let same = bindings.match("<thread>", "t-1")
        let renamed = bindings.match("<other>", "t-1")
        let twice = bindings.match("<a> <b>", "x x")
        #expect(bound)
        #expect(!other, "bound once, the same text after")
        #expect(same)
        #expect(!renamed, "another name cannot stand for t-1")
        #expect(!twice, "nor can two new names at once")
        #expect(bindings.substitute(#"{"threadId":"<thread>"}"#) == #"{"threadId":"t-1"}"#)
    }

    @Test func anUnpinnedTargetMayUseStars() {
        let tracking = Transcript.Unpinned(method: "GET", service: "tracking", target: "https://t.example/vi?*")
        #expect(tracking.covers(target: "https://t.example/vi?i=p-1"))
        #expect(!tracking.covers(target: "https://t.example/c?i=p-1"))
        let middle = Transcript.Unpinned(method: "GET", service: "shopping", target: "/v1/threads/*/messages*")
        #expect(middle.covers(target: "/v1/threads/t-1/messages?resourceId=u"))
        #expect(!middle.covers(target: "/v1/threads/t-1"))
        #expect(Transcript.Unpinned(method: "POST", service: "gravity", target: "/event").covers(target: "/event"))
    }

    // MARK: - On a replay

    /// A piped demo session's recording: product page, chat, a question, a tap.
    private func recording() async throws -> String {
        let repl = try await DemoREPL(recording: true)
        let recorder = try #require(repl.recorder)
        await repl.session.run(
            reader: ScriptLineReader(lines: [":product KIT-1001", ":open", "подарок", ":tap 1", ":quit"]),
            observer: recorder)
        return TranscriptFormat.render(recorder.transcript)
    }

    private func replay(_ text: String) async throws -> TranscriptReplay {
        await TranscriptReplayer.replay(try TranscriptFormat.parse(text))
    }

    /// `text` without the exchanges whose request line starts with `prefix`.
    private func dropping(_ prefix: String, from text: String) -> String {
        var lines: [String] = []
        var skipping = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let header = line.range(of: #"^→ [A-Za-z-]+: "#, options: .regularExpression) != nil
            if line.hasPrefix("→ ") && !header { skipping = line.hasPrefix(prefix) }
            if !line.hasPrefix("→ ") && !line.hasPrefix("← ") { skipping = false }
            if !skipping { lines.append(line) }
        }
        return lines.joined(separator: "\n")
    }

    @Test func requestsOfAnUnpinnedClassAnswerWithoutFailingAndNothingIsUnpinnedUnlessSaid() async throws {
        let recorded = try await recording()
        #expect(try await replay(recorded).passed)
        let withoutEvents = dropping("→ POST gravity /event", from: recorded)
        let strict = try await replay(withoutEvents)
        #expect(!strict.passed, "strict by default: the events are unexpected")
        #expect(strict.problems.contains { $0.hasPrefix("unexpected request: POST gravity /event") })
        let unpinned = withoutEvents.replacingOccurrences(
            of: "%uid -\n", with: "%uid -\n%unpinned POST gravity /event\n")
        let loose = try await replay(unpinned)
        #expect(loose.report(file: "x") == nil)
        #expect(!TranscriptFormat.render(loose.actual).contains("→ POST gravity /event"), "a blessing keeps them out")
        // An unpinned class answers only its own requests: the tracking GETs still fail.
        let noTracking = dropping("→ GET tracking", from: unpinned)
        #expect(try await replay(noTracking).problems.contains { $0.hasPrefix("unexpected request: GET tracking") })
    }

    @Test func anExchangeOfAnUnpinnedClassThatNoRequestMatchesStillFails() async throws {
        let recorded = try await recording()
        let unpinned = recorded.replacingOccurrences(of: "%uid -\n", with: "%uid -\n%unpinned POST gravity /event\n")
        #expect(try await replay(unpinned).passed, "pinned events are used first")
        let wrong = unpinned.replacingOccurrences(
            of: #""type":"chat_dialog_open""#, with: #""type":"chat_dialog_opened""#)
        let replay = try await replay(wrong)
        #expect(replay.problems.contains { $0.contains("recorded exchange never requested: POST gravity /event") })
    }

    @Test func aPartialBodyPinsWhatItNamesAndNothingElse() async throws {
        let recorded = try await recording()
        var lines = recorded.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let visit = try #require(lines.firstIndex { $0.hasPrefix("→ POST gravity /visit ") })
        lines[visit] = #"→ POST gravity /visit {"ctx":{"data":["KIT-1001"],"type":"PRODUCT",…},"sec":"demo",…}"#
        #expect(try await replay(lines.joined(separator: "\n")).report(file: "x") == nil)
        let blessed = try await replay(lines.joined(separator: "\n"))
        #expect(TranscriptFormat.render(blessed.actual).contains(lines[visit]), "re-blessing keeps the short form")
        lines[visit] = #"→ POST gravity /visit {"ctx":{"type":"HOMEPAGE",…},…}"#
        let wrong = try await replay(lines.joined(separator: "\n"))
        #expect(wrong.problems.contains { $0.contains(#"ctx.type: "HOMEPAGE" in the file, "PRODUCT" sent"#) })
    }

    @Test func aDiffSaysHowManyLinesItLeavesOut() async throws {
        let recorded = try await recording()
        let replay = try await replay(recorded.replacingOccurrences(of: "%width 80", with: "%width 50"))
        let whole = try #require(replay.diff.render(file: "x"))
        let cut = try #require(replay.diff.render(file: "x", limit: 10))
        let count = whole.split(separator: "\n").count
        #expect(cut.split(separator: "\n").count == 11)
        #expect(cut.hasSuffix("… \(count - 10) more lines of this diff not shown"))
    }
}
