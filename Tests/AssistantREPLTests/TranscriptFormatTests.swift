import AssistantREPL
import AssistantTranscripts
import Testing

@Suite(.timeLimit(.minutes(2))) struct TranscriptFormatTests {
    /// A proxy's error page is text of many lines: written on the answer's line as one JSON
    /// string, so none of its lines reads as an input or an expected line and none of its
    /// control characters is in the file, and read back as the same bytes.
    @Test func aBodyOfTextWithLineBreaksOrControlsIsWrittenAsOneStringAndReadBackTheSame() throws {
        let page = "<html>\n> :quit\n  injected \u{1b}[31mred\r\n\u{202e}\u{9b}2J\u{7f}</html>"
        var transcript = Transcript()
        var segment = Transcript.Segment(step: .input(":home"))
        segment.exchanges = [
            Transcript.Exchange(
                method: "POST", service: "gravity", target: "/visit", body: "{}",
                outcome: .response(status: 502, latency: .zero, body: page))
        ]
        segment.output = ["(no assistant entry on this screen)"]
        transcript.segments = [segment]
        let text = TranscriptFormat.render(transcript)
        #expect(
            text.contains(#"← 502 text:"<html>\n> :quit\n  injected \u001b[31mred\r\n\u202e\u009b2J\u007f</html>""#))
        #expect(!text.unicodeScalars.contains { [0x1B, 0x0D, 0x202E, 0x9B, 0x7F].contains($0.value) })
        #expect(TranscriptFormat.lines(of: text).filter { $0.hasPrefix("> ") } == ["> :home"])
        let back = try TranscriptFormat.parse(text)
        #expect(back.segments.first?.exchanges.first?.outcome == .response(status: 502, latency: .zero, body: page))
        #expect(TranscriptFormat.render(back) == text)
        #expect(throws: TranscriptError.self) {
            try TranscriptFormat.parse("> x\n→ GET tracking http://t/x\n← 200 text:\"unclosed\n")
        }
        // Text that only starts like a JSON body written over lines (a truncated error) is text.
        let truncated = "{\n  \"error\": {\n    \"code\": \"BAD_GA"
        segment.exchanges[0].outcome = .response(status: 502, latency: .zero, body: truncated)
        transcript.segments = [segment]
        let written = TranscriptFormat.render(transcript)
        #expect(written.contains(#"← 502 text:"{\n  \"error\": {"#))
        #expect(
            try TranscriptFormat.parse(written).segments.first?.exchanges.first?.outcome
                == .response(status: 502, latency: .zero, body: truncated))
    }

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

@Suite(.timeLimit(.minutes(2))) struct TranscriptShortFormTests {
    static let text = """
        # Short form.
        %width 60
        %uid u-1
        %log-level info
        %unpinned POST gravity /event
        %unpinned GET tracking https://t.example/vi?*
        ← 200 {"campaigns":[]}
        > hello
        → POST shopping /v1/messages {
            "messageId": "<id>",
            "text": "a } inside a string",
            …
          }
        ← 429 {"error":{"code":"RATE_LIMITED"}}
        ← Retry-After: 30
        → POST gravity /visit {"ctx":{"type":"HOMEPAGE",…},…}
        ← 200 [
            1,
            2
          ]
          out

        """

    @Test func multiLineBodiesHeadersUnpinnedClassesAndTheLogLevelRoundTrip() throws {
        let transcript = try TranscriptFormat.parse(Self.text)
        #expect(transcript.settings.logLevel == .info)
        #expect(transcript.settings.unpinned.count == 2)
        let events = try #require(transcript.settings.unpinned.first)
        #expect(events.outcome == .response(status: 204, latency: .zero, body: ""), "204 unless an answer is given")
        #expect(
            transcript.settings.unpinned.last?.outcome
                == .response(status: 200, latency: .zero, body: #"{"campaigns":[]}"#))
        let segment = try #require(transcript.segments.first)
        try #require(segment.exchanges.count == 2)
        #expect(segment.exchanges[0].body.hasPrefix("{\n    \"messageId\""))
        #expect(segment.exchanges[0].body.hasSuffix("…\n  }"))
        #expect(segment.exchanges[0].headers == [Transcript.Header("Retry-After", "30")])
        #expect(segment.exchanges[1].line == 16)
        #expect(segment.exchanges[1].outcome == .response(status: 200, latency: .zero, body: "[\n    1,\n    2\n  ]"))
        #expect(segment.output == ["out"])
        #expect(TranscriptFormat.render(transcript) == Self.text)
    }

    @Test func aBodyThatNeverClosesOrIsNotJSONNamesItsLine() {
        #expect(throws: TranscriptError(line: 2, message: "the body opened here never closes its '{'")) {
            try TranscriptFormat.parse("> x\n→ POST gravity /visit {\n  \"a\": 1\n← 200\n")
        }
        #expect(throws: TranscriptError.self) {
            try TranscriptFormat.parse("> x\n→ POST gravity /visit {\"a\":}\n← 200\n")
        }
        #expect(throws: TranscriptError(line: 4, message: "after an answer, a '← ' line is a header: '← Name: value'"))
        {
            try TranscriptFormat.parse("> x\n→ GET tracking https://t.example/x\n← 204\n← 204\n")
        }
        #expect(throws: TranscriptError.self) { try TranscriptFormat.parse("> x\n%unpinned POST gravity /event\n") }
        #expect(throws: TranscriptError.self) { try TranscriptFormat.parse("%log-level loud\n") }
    }
}
