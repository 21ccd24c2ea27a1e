import AssistantREPL
import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantTranscripts

/// The significant request headers are recorded and matched: a change that dropped
/// `Authorization: Bearer …` fails the corpus; `→ …` is how a file says it pins none.
@Suite(.timeLimit(.minutes(2))) struct RequestHeaderTests {
    /// Passes requests on with `change` made to their headers.
    private struct Altering: HTTPTransport {
        let inner: any HTTPTransport
        let change: @Sendable (inout [String: String], URL) -> Void

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            var request = request
            change(&request.headers, request.url)
            return try await inner.send(request)
        }
    }

    private func replay(
        _ text: String, change: @escaping @Sendable (inout [String: String], URL) -> Void
    ) async throws -> TranscriptReplay {
        await TranscriptReplayer.replay(
            try TranscriptFormat.parse(text),
            wrapTransport: REPLEnvironment.TransportWrapper { Altering(inner: $0, change: change) })
    }

    private static var handWritten: String {
        get throws { try String(contentsOfFile: SafeBlessTests.handWritten, encoding: .utf8) }
    }

    @Test func aRequestWithoutItsAuthorizationFails() async throws {
        let text = try Self.handWritten
        #expect(text.contains("→ Authorization: Bearer <key>\n"))
        #expect(try await replay(text) { _, _ in }.passed)
        let dropped = try await replay(text) { headers, _ in headers["Authorization"] = nil }
        #expect(!dropped.passed)
        #expect(
            dropped.problems.first
                == #"line 8: the request differs from the recorded one: POST gravity /visit — Authorization: "Bearer <key>" in the file, none sent"#
        )
        let other = try await replay(text) { headers, _ in
            if headers["Authorization"] != nil { headers["Authorization"] = "Bearer another-key" }
        }
        #expect(
            other.problems.first?.hasSuffix(#"Authorization: "Bearer <key>" in the file, "Bearer another-key" sent"#)
                == true)
    }

    /// `<user-agent>` binds on first sight: every request must then name the same agent.
    @Test func theUserAgentIsOneThroughoutTheFile() async throws {
        let replay = try await replay(try Self.handWritten) { headers, url in
            if url.path.hasSuffix("/v1/messages") { headers["User-Agent"] = "something-else/1.0" }
        }
        #expect(
            replay.problems.first?.contains(#"User-Agent: "<user-agent>" in the file, "something-else/1.0" sent"#)
                == true)
    }

    /// `→ …` after a request pins none of its headers; a header the file lists that is not one
    /// of the significant ones is reported.
    @Test func anEllipsisPinsNoHeaders() async throws {
        let text = try Self.handWritten
        let visit = try #require(
            text.range(
                of: "→ Authorization: Bearer <key>\n→ Content-Type: application/json\n→ User-Agent: <user-agent>\n"))
        let loose = text.replacingCharacters(in: visit, with: "→ …\n")
        let replay = try await replay(loose) { headers, url in
            if url.path.hasSuffix("/visit") { headers["Authorization"] = nil }
        }
        #expect(replay.passed, "\(replay.problems)")
        let parsed = try TranscriptFormat.parse(loose)
        #expect(parsed.segments.first?.exchanges.first?.anyRequestHeaders == true)
        #expect(TranscriptFormat.render(parsed).contains("/visit {\"ctx\":{\"type\":\"HOMEPAGE\",…},…}\n→ …\n← 200"))
    }
}
