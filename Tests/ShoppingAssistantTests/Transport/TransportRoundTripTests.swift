import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport
import ShoppingAssistantTesting
import Testing

/// End-to-end tests of both real transports (`URLSessionTransport`, `CurlTransport`) against a
/// loopback server: bodies and headers travel intact both ways, statuses are answers, refused
/// and dropped connections are told apart, and cancellation closes the connection.
///
/// The time limit is only a safety net for a broken transport that would otherwise hang a
/// test; every test finishes in milliseconds and none waits on wall time.
@Suite(.timeLimit(.minutes(2)))
struct TransportRoundTripTests {
    typealias Kind = URLSessionTransportTests.Kind

    // MARK: - Responses

    // covers: B5
    @Test(arguments: TransportKind.allCases)
    func postDeliversBodyAndHeadersIntactAndReturnsStatusHeadersAndBody(_ kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let replyBody = #"{"user":{"uid":"u-8f3c","ses":"s-1"}}"#
        server.enqueue(
            .answer(
                status: 200,
                headers: ["Content-Type": "application/json", "X-Request-Id": "req-42"],
                text: replyBody
            )
        )
        // Bytes beyond ASCII and JSON escapes, to show the body travels untouched.
        let requestBody = Data(#"{"sec":"home","ctx":{"data":["SKU-ÄB 1"],"q":"a\"b"}}"#.utf8)
        let request = HTTPRequest(
            method: .post,
            url: server.baseURL.appendingPathComponent("v2/visit"),
            headers: ["Content-Type": "application/json", "Authorization": "Bearer key-123"],
            body: requestBody
        )

        let response = try await kind.make().send(request)

        #expect(response.status == 200)
        #expect(response.header("content-type") == "application/json")
        #expect(response.header("x-request-id") == "req-42")
        #expect(response.body == Data(replyBody.utf8))
        let received = try #require(server.receivedRequests.first)
        #expect(server.receivedRequests.count == 1)
        #expect(received.method == "POST")
        #expect(received.target == "/v2/visit")
        #expect(received.header("Content-Type") == "application/json")
        #expect(received.header("Authorization") == "Bearer key-123")
        #expect(received.header("Content-Length") == String(requestBody.count))
        #expect(received.body == requestBody)
    }

    @Test(arguments: TransportKind.allCases)
    func largeBodyArrivesIntactInBothDirections(_ kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        // Far beyond one socket read and beyond the size at which libcurl would otherwise
        // ask for `Expect: 100-continue`.
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        server.enqueue(.answer(status: 200, body: payload))

        let response = try await kind.make().send(
            HTTPRequest(
                method: .post,
                url: server.baseURL.appendingPathComponent("v1/messages"),
                headers: ["Content-Type": "application/octet-stream"],
                body: payload
            )
        )

        #expect(response.body == payload)
        #expect(server.receivedRequests.first?.body == payload)
    }

    @Test(arguments: TransportKind.allCases)
    func nonSuccessStatusIsReturnedAsAResponseNotThrown(_ kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let errorBody = #"{"error":{"code":"SERVICE_DOWN","message":"try later"}}"#
        server.enqueue(.answer(status: 503, headers: ["Retry-After": "7"], text: errorBody))

        let response = try await kind.make().send(
            HTTPRequest(
                method: .post,
                url: server.baseURL.appendingPathComponent("v1/messages"),
                body: Data("{}".utf8)
            )
        )

        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "7")
        #expect(response.body == Data(errorBody.utf8))
    }

    /// A body's end is where its framing says: a declared `Content-Length` is the end of an
    /// unencoded body (the answer is complete the moment its last byte is in, whatever the
    /// connection does next), but a chunked body's end is its last chunk, whatever
    /// `Content-Length` also says (RFC 9112, 6.3). (`CurlTransport` answers its caller at that
    /// last byte, before libcurl reports the transfer done; libcurl stops reading there too, in
    /// the same call, so only the bench's figure 2 can see the difference in time.)
    @Test(arguments: TransportKind.allCases)
    func aBodyEndsWhereItsFramingSaysNotBefore(_ kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let body = Data("hello, chunked world".utf8)
        server.enqueue(
            .script([
                .send(
                    LoopbackHTTPServer.head(
                        status: 200, headers: [("Transfer-Encoding", "chunked"), ("Content-Length", "3")])),
                .send(LoopbackHTTPServer.chunked(body, chunkSize: 3)), .close,
            ]))
        server.enqueue(
            .script([
                // `close`: the connection, kept open, is not one to send the next request on.
                .send(
                    LoopbackHTTPServer.head(status: 200, headers: [("Content-Length", "5"), ("Connection", "close")])),
                .send(Data("exact".utf8)), .waitForHangUp,
            ]))
        server.enqueue(
            .script([
                .send(
                    LoopbackHTTPServer.head(status: 200, headers: [("Content-Length", "0"), ("Connection", "close")])),
                .waitForHangUp,
            ]))
        let transport = kind.make()

        let chunked = try await transport.send(HTTPRequest(method: .get, url: server.baseURL))
        let exact = try await transport.send(HTTPRequest(method: .get, url: server.baseURL))
        let empty = try await transport.send(HTTPRequest(method: .get, url: server.baseURL))

        #expect(chunked.body == body)
        #expect(exact.body == Data("exact".utf8), "complete while the server keeps the connection open")
        #expect(empty.status == 200 && empty.body.isEmpty)
    }

    @Test(arguments: TransportKind.allCases)
    func getSendsNoBodyAndKeepsTheQuery(_ kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.enqueue(.answer(status: 204))
        let url = try #require(URL(string: "\(server.baseURL.absoluteString)/t/pixel?e=imp&id=7"))

        let response = try await kind.make().send(HTTPRequest(method: .get, url: url))

        #expect(response.status == 204)
        #expect(response.body.isEmpty)
        let received = try #require(server.receivedRequests.first)
        #expect(received.method == "GET")
        #expect(received.target == "/t/pixel?e=imp&id=7")
        #expect(received.body.isEmpty)
        #expect((received.header("Content-Length") ?? "0") == "0")
    }

    // MARK: - Failures

    @Test(arguments: TransportKind.allCases)
    func refusedConnectionIsCannotConnect(_ kind: TransportKind) async throws {
        let refusing = try LoopbackHTTPServer.RefusingPort()
        let request = HTTPRequest(
            method: .post,
            url: refusing.baseURL.appendingPathComponent("v2/choose"),
            body: Data("{}".utf8)
        )

        let error = await #expect(throws: HTTPTransportError.self) {
            try await kind.make().send(request)
        }

        #expect(Kind(error) == .cannotConnect, "got \(String(describing: error))")
    }

    // Whether a failure is certain or uncertain drives history reconciliation (D5): a request
    // the server has read must never be reported as "nothing reached the server".
    @Test(arguments: TransportKind.allCases)
    func connectionDroppedAfterTheRequestArrivedIsConnectionLost(_ kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.enqueue(.drop)

        let error = await #expect(throws: HTTPTransportError.self) {
            try await kind.make().send(
                HTTPRequest(
                    method: .post,
                    url: server.baseURL.appendingPathComponent("v1/messages"),
                    body: Data(#"{"messageId":"um-1"}"#.utf8)
                )
            )
        }

        #expect(server.receivedRequests.count == 1)
        #expect(Kind(error) == .connectionLost, "got \(String(describing: error))")
    }

    // MARK: - Cancellation

    @Test(arguments: TransportKind.allCases)
    func cancellingWhileAnswerIsHeldThrowsCancellationAndClosesConnection(_ kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let gate = LoopbackHTTPServer.Gate()
        defer { gate.open() }
        server.enqueue(.hold(gate, then: .answer(status: 200, text: "too late")))
        let transport = kind.make()
        let request = HTTPRequest(
            method: .post,
            url: server.baseURL.appendingPathComponent("v1/messages"),
            body: Data("{}".utf8)
        )

        let call = Task { try await transport.send(request) }
        // Cancel only once the request is really on the server, so the test is about
        // cancelling an exchange in flight and not about a race with the connect.
        _ = try #require(await server.request(0))
        call.cancel()

        await #expect(throws: CancellationError.self) { try await call.valueUnlessCancelled }
        // The data task itself was cancelled, not merely abandoned: the socket is closed.
        let hungUp = await withinHangGuard("the client hangs up") { await server.clientHungUp(onRequest: 0) }
        #expect(hungUp == true)
    }

    @Test(arguments: TransportKind.allCases)
    func callerCancelledBeforeSendingThrowsCancellation(_ kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let transport = kind.make()
        let request = HTTPRequest(method: .get, url: server.baseURL.appendingPathComponent("x"))

        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(request)
        }

        await #expect(throws: CancellationError.self) { try await call.valueUnlessCancelled }
    }
}
