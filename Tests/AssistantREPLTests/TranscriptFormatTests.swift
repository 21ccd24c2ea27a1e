import AssistantREPL
import Testing

@Suite(.timeLimit(.minutes(2))) struct TranscriptFormatTests {
    @Test func parsesEveryLineKindAndRendersItBack() throws {
        let text = """
            # Shows a slow reply.
            # covers: D3
            %width 60
            %uid u-1
            > hello
            → POST shopping /v1/messages {"text":"hello"}
            ← 200 after 12s {"text":"hi"}
              assistant › hi
            %wait 1.5s
            > :retry
            → POST shopping /v1/messages {"text":"hello"}
            ← timeout

            """
        let transcript = try TranscriptFormat.parse(text)
        #expect(transcript.comments == ["Shows a slow reply.", "covers: D3"])
        #expect(transcript.settings.width == 60)
        #expect(transcript.settings.uid == "u-1")
        #expect(transcript.segments.count == 3)
        try #require(transcript.segments.count > 2)
        #expect(
            transcript.segments[0].exchanges.first?.outcome
                == .response(status: 200, latency: .seconds(12), body: #"{"text":"hi"}"#))
        #expect(transcript.segments[0].output == ["assistant › hi"])
        #expect(transcript.segments[1].step == .wait(.milliseconds(1500)))
        #expect(transcript.segments[2].exchanges.first?.outcome == .timeout)
        #expect(
            try TranscriptFormat.parse(TranscriptFormat.render(transcript)).withoutLineNumbers()
                == transcript.withoutLineNumbers())
    }

    /// Found by fuzzing: a huge duration used to trap converting to Int64.
    @Test func absurdDurationsAreRejectedNotTrapped() {
        #expect(TranscriptFormat.parseDuration("9e300s") == nil)
        #expect(TranscriptFormat.parseDuration("-1s") == nil)
        #expect(TranscriptFormat.parseDuration("nan") == nil)
        #expect(TranscriptFormat.parseDuration("250ms") == .milliseconds(250))
        #expect(throws: TranscriptError.self) { try TranscriptFormat.parse("> x\n%wait 1e300m\n") }
    }

    @Test func malformedLinesNameTheirLine() {
        #expect(throws: TranscriptError(line: 2, message: "an answer without a request")) {
            try TranscriptFormat.parse("> x\n← 200 {}\n")
        }
        #expect(throws: TranscriptError.self) { try TranscriptFormat.parse("> x\n→ POST gravity /visit {}\n  out\n") }
        #expect(throws: TranscriptError.self) { try TranscriptFormat.parse("garbage\n") }
    }
}

extension Transcript {
    /// The same transcript with source line numbers cleared, for comparing a re-parse.
    fileprivate func withoutLineNumbers() -> Transcript {
        var copy = self
        for index in copy.segments.indices {
            copy.segments[index].line = 0
            for exchange in copy.segments[index].exchanges.indices { copy.segments[index].exchanges[exchange].line = 0 }
        }
        return copy
    }
}
