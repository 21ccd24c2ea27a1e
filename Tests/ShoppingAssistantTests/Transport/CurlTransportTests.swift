import Foundation
import ShoppingAssistant
import ShoppingAssistantCurl
import ShoppingAssistantTestSupport
import Testing

/// What `CurlTransport` does beyond what both transports share (`TransportRoundTripTests`,
/// the socket matrices): connection reuse, the protocols it speaks, the request it puts on the
/// wire, proxies, TLS verification, and what it refuses to send.
@Suite(.timeLimit(.minutes(2)))
struct CurlTransportTests {
    // MARK: - Connections

    @Test func consecutiveRequestsToOneHostShareOneConnectionThatClosesWithTheTransport() async throws {
        let server = try LoopbackHTTPServer(keepsConnectionsAlive: true)
        defer { server.stop() }
        server.setResponder { _ in .answer(status: 200, text: "ok") }
        var transport: CurlTransport? = CurlTransport(proxy: .none)
        for _ in 0..<3 {
            let response = try await transport?.send(HTTPRequest(method: .get, url: server.baseURL))
            #expect(response?.status == 200)
        }
        #expect(server.acceptedConnections == 1, "one connection for three requests")
        #expect(server.openConnections == 1, "kept for the next request")

        transport = nil

        let closed = await withinHangGuard("the transport's connection closes") { await server.allConnectionsClosed() }
        #expect(closed == true)
    }

    /// libcurl's own retry, documented rather than wished away: a request written to a kept
    /// connection that the server closes without a byte of answer is sent once more on a new
    /// connection (the server most likely closed an idle connection as the request arrived).
    /// The same bytes, with the same message ID (D6): the server can tell (D7).
    @Test func aKeptConnectionClosedUnansweredIsRetriedOnceOnANewConnection() async throws {
        let server = try LoopbackHTTPServer(keepsConnectionsAlive: true)
        defer { server.stop() }
        server.enqueue(.answer(status: 200, text: "first"))
        server.enqueue(.drop)
        server.enqueue(.answer(status: 200, text: "second"))
        let transport = CurlTransport(proxy: .none)
        let body = Data(#"{"messageId":"m-2"}"#.utf8)
        _ = try await transport.send(HTTPRequest(method: .get, url: server.baseURL))

        let response = try await transport.send(HTTPRequest(method: .post, url: server.baseURL, body: body))

        #expect(response.body == Data("second".utf8))
        #expect(server.acceptedConnections == 2)
        #expect(server.receivedRequests.map(\.method) == ["GET", "POST", "POST"])
        #expect(server.receivedRequests.dropFirst().allSatisfy { $0.body == body })
    }

    // MARK: - What is sent

    @Test func theRequestCarriesItsHeadersAndNoneLibcurlWouldAddOfItsOwn() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.enqueue(.answer(status: 200, text: "ok"))
        let body = Data(repeating: UInt8(ascii: "x"), count: 2 * 1024 * 1024)
        let request = HTTPRequest(
            method: .post, url: server.baseURL.appendingPathComponent("v1/messages"),
            headers: ["User-Agent": "ShoppingAssistant/1", "X-Empty": "", "Content-Length": "5"], body: body)

        _ = try await CurlTransport(proxy: .none).send(request)

        let received = try #require(server.receivedRequests.first)
        #expect(received.body == body, "the body as given, its length computed by the transport")
        #expect(received.header("Content-Length") == String(body.count))
        #expect(received.header("User-Agent") == "ShoppingAssistant/1")
        #expect(received.header("X-Empty") == "")
        // Not libcurl's form encoding, no `Expect: 100-continue` wait on the wall clock.
        #expect(received.header("Content-Type") == nil)
        #expect(received.header("Expect") == nil)
        // The one content coding offered, decoded under the body bound.
        #expect(received.header("Accept-Encoding") == "gzip")
    }

    /// A finished (or cancelled) transfer's handle is reset and reused by the next one: nothing
    /// of an earlier request reaches a later one — not its key header, its body or method, nor
    /// its bound.
    @Test func aReusedHandleCarriesNothingOfTheRequestBefore() async throws {
        let server = try LoopbackHTTPServer(keepsConnectionsAlive: true)
        defer { server.stop() }
        let transport = CurlTransport(proxy: .none)
        let secret = HTTPRequest(
            method: .post, url: server.baseURL.appendingPathComponent("v2/event"),
            headers: ["X-Gravity-Key": "key-for-gravity-only", "Content-Type": "application/json"],
            body: Data(#"{"sec":"key-for-gravity-only"}"#.utf8), maximumResponseBytes: 4)
        server.enqueue(.answer(status: 200, text: "much longer than four bytes"))
        await #expect(throws: HTTPResponseTooLarge.self) { try await transport.send(secret) }
        server.enqueue(.answer(status: 200, text: "ok"))
        _ = try await transport.send(secret)
        // One more, cancelled while the server holds its answer: its handle is taken back too.
        server.enqueue(.script([.waitForHangUp]))
        let cancelled = Task { try await transport.send(secret) }
        _ = await server.request(2)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(await server.clientHungUp(onRequest: 2))

        for round in 0..<3 {
            server.enqueue(.answer(status: 200, text: "plain \(round)"))
            let response = try await transport.send(
                HTTPRequest(method: .get, url: server.baseURL.appendingPathComponent("products/\(round)")))
            #expect(response.body == Data("plain \(round)".utf8), "no bound of the request before")
        }

        let plain = server.receivedRequests.suffix(3)
        #expect(plain.count == 3)
        for request in plain {
            #expect(request.method == "GET")
            #expect(request.body.isEmpty)
            #expect(request.header("X-Gravity-Key") == nil, "the key went to \(request.path)")
            #expect(request.header("Content-Type") == nil)
        }
    }

    /// A request cancelled just as its answer lands hands its handle back once: the handle,
    /// reused at once by the next request, is never taken from that request by the late
    /// cancellation (which would leave the next request waiting for ever).
    @Test func aCancellationAsTheAnswerLandsNeverTakesTheHandleFromTheNextRequest() async throws {
        let server = try LoopbackHTTPServer(keepsConnectionsAlive: true)
        defer { server.stop() }
        server.setResponder { _ in .answer(status: 200, text: "ok") }
        let transport = CurlTransport(proxy: .none)
        let request = HTTPRequest(method: .get, url: server.baseURL)
        let rounds = 2_000
        var answered = 0
        // Each round has its own guard: the rounds take 30–100 s in all under the thread
        // sanitizer on a loaded machine, and only a round that never ends is a hang.
        for round in 0..<rounds {
            let outcome = await withinHangGuard("round \(round): the request after a cancelled one is answered") {
                let doomed = Task { try? await transport.send(request) }
                // Cancelled before, while and after its answer arrives: a little later each
                // round, up to about a round trip, whatever the machine's speed.
                let cancelAt = ContinuousClock.now + .microseconds(round % 50 * 4)
                while ContinuousClock.now < cancelAt { await Task.yield() }
                doomed.cancel()
                let status = (try? await transport.send(request))?.status
                _ = await doomed.value
                return status == 200
            }
            guard let outcome else { break }  // the guard reported the hang
            if outcome { answered += 1 }
        }
        #expect(answered == rounds)
    }

    @Test(arguments: [
        ["X-Injected": "a\r\nAuthorization: Bearer stolen"], ["X-Injected": "a\nb"], ["X-Nul": "a\u{0}b"],
        ["Bad Name": "v"], ["": "v"],
    ])
    func aHeaderThatWouldBreakTheFramingIsNotSent(_ headers: [String: String]) async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let request = HTTPRequest(method: .get, url: server.baseURL, headers: headers)

        let error = await Self.failure(sending: request)

        #expect(error.isCannotConnect, "nothing sent: \(error)")
        #expect(server.acceptedConnections == 0, "nothing reached the server")
    }

    @Test(arguments: ["file:///etc/hostname", "ftp://127.0.0.1:1/x", "dict://127.0.0.1:1/x", "gopher://127.0.0.1:1/"])
    func onlyHTTPAndHTTPSAreSpoken(_ address: String) async throws {
        let url = try #require(URL(string: address))

        let error = await Self.failure(sending: HTTPRequest(method: .get, url: url))

        #expect(error.isCannotConnect, "\(error)")
        #expect(error.message.contains("libcurl 1)"), "CURLE_UNSUPPORTED_PROTOCOL: \(error)")
    }

    /// libcurl 7.88 bounds each header line (100 KiB) and, with Debian's fix for CVE-2023-38039,
    /// the whole block (300 KiB); the transport's own bound (256 KiB) holds whatever the build.
    @Test func aHeaderBlockOverTheTransportsBoundIsConnectionLost() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        // About 285 KiB of short headers: under libcurl's bound, over the transport's.
        let flood = (0..<2_800).map { ("X-Flood-\($0)", String(repeating: "f", count: 88)) }
        server.enqueue(
            .script([.send(LoopbackHTTPServer.head(status: 200, headers: flood + [("Content-Length", "0")])), .close]))

        let error = await Self.failure(sending: HTTPRequest(method: .get, url: server.baseURL))

        guard case .connectionLost(let message)? = error.transportError else {
            Issue.record("expected connectionLost, got \(error)")
            return
        }
        #expect(message.contains("256 KiB"), "\(message)")
    }

    /// HTTP's optional whitespace around a header value is spaces and tabs (RFC 9110, 5.6.3),
    /// nothing else: a value's own characters, a trailing no-break space among them, are kept.
    @Test func aHeaderValueLosesTheSpacesAndTabsAroundItAndNothingElse() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let head =
            "HTTP/1.1 200 OK\r\nX-Padded: \t value with  inner spaces \t\r\nX-Name:  Привет\u{00A0}\r\n"
            + "X-Folded: first\r\n \t second \r\nX-Blank: \t \r\nContent-Length: 0\r\n\r\n"
        server.enqueue(.script([.send(Data(head.utf8)), .close]))

        let response = try await CurlTransport(proxy: .none).send(HTTPRequest(method: .get, url: server.baseURL))

        #expect(response.header("X-Padded") == "value with  inner spaces")
        #expect(response.header("X-Name") == "Привет\u{00A0}")
        #expect(response.header("X-Folded") == "first second")
        #expect(response.header("X-Blank") == "")
    }

    /// The answer's headers are its final block's: an interim `1xx` block is forgotten, a
    /// repeated header is one entry joined with commas under the name as first received, and
    /// trailers after the body are not headers. (A line without a colon libcurl refuses itself.)
    @Test func theAnswersHeadersAreItsFinalBlockWithRepeatsJoined() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let head =
            "HTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\nX-Interim: yes\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nX-Repeated: one\r\nx-REPEATED: two\r\n"
            + "Transfer-Encoding: chunked\r\nTrailer: X-Late\r\n\r\n2\r\nok\r\n0\r\nX-Late: after\r\n\r\n"
        server.enqueue(.script([.send(Data(head.utf8)), .close]))

        let response = try await CurlTransport(proxy: .none).send(HTTPRequest(method: .get, url: server.baseURL))

        #expect(response.status == 200)
        #expect(response.body == Data("ok".utf8))
        #expect(response.headers["X-Repeated"] == "one, two")
        #expect(response.header("x-repeated") == "one, two")
        #expect(response.header("Link") == nil, "the 1xx block is not the answer's")
        #expect(response.header("X-Interim") == nil)
        #expect(response.header("X-Late") == nil, "a trailer is not a header")
        #expect(Set(response.headers.keys) == ["X-Repeated", "Transfer-Encoding", "Trailer"])
    }

    // MARK: - The deadline on the system's clock

    /// On the system's clocks the deadline is libcurl's own total timeout, with no timer task
    /// beside the exchange (the manual-clock deadline is `LoopbackFaultTransportTests`'): a
    /// stalled answer still ends as `timedOut`, and its connection is closed.
    @Test func onTheSystemClockLibcurlEndsAStalledExchangeAtTheDeadline() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.enqueue(
            .script([
                .send(LoopbackHTTPServer.head(status: 200, headers: [("Content-Length", "10")])),
                .waitForHangUp,
            ]))
        let transport = CurlTransport(proxy: .none, deadline: .milliseconds(200))

        let error = await Self.failure(sending: HTTPRequest(method: .get, url: server.baseURL), through: transport)

        #expect(error.transportError == .timedOut, "\(error)")
        let hungUp = await withinHangGuard("the client hangs up") { await server.clientHungUp(onRequest: 0) }
        #expect(hungUp == true, "the connection is closed")
    }

    /// Also before the request is sent: a proxy that never opens its tunnel is a deadline
    /// passed, as on any other clock, not a connection that could not be made.
    @Test func onTheSystemClockADeadlinePassedBeforeSendingIsTimedOutToo() async throws {
        let proxy = try LoopbackHTTPServer()
        defer { proxy.stop() }
        proxy.enqueue(.script([.waitForHangUp]))
        let transport = CurlTransport(proxy: .url(proxy.baseURL), deadline: .milliseconds(200))
        let request = HTTPRequest(method: .get, url: try #require(URL(string: "https://shop.example/")))

        let error = await Self.failure(sending: request, through: transport)

        #expect(error.transportError == .timedOut, "\(error)")
        #expect(proxy.receivedRequests.first?.method == "CONNECT", "it waited for the tunnel")
    }

    /// The deadline covers the whole exchange: a redirect's hop has only what is left of it.
    @Test func onTheSystemClockTheDeadlineCoversEveryRedirect() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        let redirect = LoopbackHTTPServer.head(status: 307, headers: [("Location", "/next"), ("Content-Length", "0")])
        // Each hop answers after a tenth of a second: alone within the deadline, not together.
        for _ in 0..<5 {
            server.enqueue(.script([.trickle(redirect, interval: .milliseconds(100) / redirect.count), .close]))
        }
        let transport = CurlTransport(proxy: .none, deadline: .milliseconds(250))
        var request = HTTPRequest(method: .get, url: server.baseURL)
        request.redirectPolicy = .sameOrigin(limit: 5)

        let error = await Self.failure(sending: request, through: transport)

        #expect(error.transportError == .timedOut, "\(error)")
        #expect(server.receivedRequests.count < 5, "the deadline ended the chain, not the redirects running out")
    }

    // MARK: - Proxies

    @Test func anExplicitProxyCarriesEveryRequest() async throws {
        let proxy = try LoopbackHTTPServer()
        defer { proxy.stop() }
        proxy.enqueue(.answer(status: 200, text: "via proxy"))
        let transport = CurlTransport(proxy: .url(proxy.baseURL))
        let url = try #require(URL(string: "http://shop.example.invalid/v1/messages?x=1"))

        let response = try await transport.send(HTTPRequest(method: .get, url: url))

        #expect(response.body == Data("via proxy".utf8))
        #expect(proxy.receivedRequests.first?.target == url.absoluteString, "an absolute target, as to a proxy")
    }

    @Test func aBypassedHostIsReachedDirectly() async throws {
        let server = try LoopbackHTTPServer()
        defer { server.stop() }
        server.enqueue(.answer(status: 200, text: "direct"))
        let deadProxy = try LoopbackHTTPServer.RefusingPort()
        let transport = CurlTransport(proxy: .url(deadProxy.baseURL, bypass: ["127.0.0.1"]))

        let response = try await transport.send(HTTPRequest(method: .get, url: server.baseURL))

        #expect(response.body == Data("direct".utf8))
        #expect(server.receivedRequests.first?.target == "/")
    }

    /// The environment is the process's: a child process with `http_proxy` set sends one
    /// request with each policy to a port that refuses. Only `.environment` reaches the proxy.
    @Test func theEnvironmentsProxyIsUsedUnlessTheTransportSaysNone() async throws {
        let proxy = try LoopbackHTTPServer()
        defer { proxy.stop() }
        proxy.setResponder { _ in .answer(status: 200, text: "via proxy") }
        let target = try LoopbackHTTPServer.RefusingPort()
        let child = try ChildProcess(
            role: "curl-proxy", filter: "ChildProcessRoles",
            environment: [
                "http_proxy": proxy.baseURL.absoluteString, "HTTP_PROXY": nil, "all_proxy": nil, "ALL_PROXY": nil,
                "no_proxy": nil, "NO_PROXY": nil, "CURL_PROXY_TARGET": target.baseURL.absoluteString,
            ])
        let done = await withinHangGuard("the child makes its requests", seconds: childProcessGuardSeconds) {
            await child.line(containing: "done")
        }
        _ = await withinHangGuard("the child ends", seconds: childProcessGuardSeconds) { await child.exit() }

        #expect(done != nil)
        #expect(child.lines.contains("environment 200"), "\(child.lines)")
        #expect(child.lines.contains("none cannotConnect"), "\(child.lines)")
        #expect(proxy.receivedRequests.count == 1)
    }

    /// The child's part of `theEnvironmentsProxyIsUsedUnlessTheTransportSaysNone`.
    static func proxyChildRun() async {
        guard let string = ProcessInfo.processInfo.environment["CURL_PROXY_TARGET"], let url = URL(string: string)
        else { return }
        for (name, proxy) in [("environment", CurlTransport.Proxy.environment), ("none", .none)] {
            do {
                let response = try await CurlTransport(proxy: proxy).send(HTTPRequest(method: .get, url: url))
                ChildProcess.report("\(name) \(response.status)")
            } catch HTTPTransportError.cannotConnect {
                ChildProcess.report("\(name) cannotConnect")
            } catch {
                ChildProcess.report("\(name) \(error)")
            }
        }
        ChildProcess.report("done")
    }

    // MARK: - TLS

    /// A TLS server with a certificate no CA signed (`openssl s_server`, made for the test):
    /// the handshake fails verification, which is certain (nothing was sent), and the server
    /// never sees a request. Needs the `openssl` command; skipped where there is none.
    @Test(.enabled(if: TLSServer.isAvailable))
    func anUntrustedCertificateIsRefusedBeforeAnythingIsSent() async throws {
        let server = try await TLSServer.start()
        defer { server.stop() }
        let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/v1/messages"))

        let error = await Self.failure(sending: HTTPRequest(method: .post, url: url, body: Data("{}".utf8)))

        #expect(error.isCannotConnect, "\(error)")
        #expect(error.message.contains("certificate"), "\(error)")
        #expect(!server.output.contains("POST /v1/messages"), "the request never reached the server")
    }
}

extension CurlTransportTests {
    /// What sending a request through a new transport threw, or that it answered.
    struct Failure: CustomStringConvertible {
        var transportError: HTTPTransportError?
        var description: String

        var isCannotConnect: Bool {
            if case .cannotConnect? = transportError { true } else { false }
        }

        var message: String {
            switch transportError {
            case .cannotConnect(let message)?, .connectionLost(let message)?: message
            case .timedOut?, nil: description
            }
        }
    }

    static func failure(
        sending request: HTTPRequest, through transport: CurlTransport = CurlTransport(proxy: .none)
    ) async -> Failure {
        do {
            let response = try await transport.send(request)
            return Failure(transportError: nil, description: "an answer, HTTP \(response.status)")
        } catch let error as HTTPTransportError {
            return Failure(transportError: error, description: String(describing: error))
        } catch {
            return Failure(transportError: nil, description: String(describing: error))
        }
    }
}

/// `openssl s_server` on a loopback port with a fresh self-signed certificate.
final class TLSServer: Sendable {
    static let opensslPath = "/usr/bin/openssl"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: opensslPath) }

    let port: Int
    private let process: Process
    private let directory: String
    private let collected: Locked<String>

    var output: String { collected.withLock { $0 } }

    private init(port: Int, process: Process, directory: String, collected: Locked<String>) {
        self.port = port
        self.process = process
        self.directory = directory
        self.collected = collected
    }

    static func start() async throws -> TLSServer {
        let directory = NSTemporaryDirectory() + "tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let make = Process()
        make.executableURL = URL(fileURLWithPath: opensslPath)
        make.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem",
        ]
        make.standardOutput = FileHandle.nullDevice
        make.standardError = FileHandle.nullDevice
        let made = ProcessEnd(watching: make)
        try make.run()
        guard (await withinHangGuard("openssl makes a certificate", { await made.wait() }) ?? nil) != nil else {
            make.terminate()
            throw StartFailure(output: "openssl req did not end")
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: opensslPath)
        process.arguments = [
            "s_server", "-accept", "127.0.0.1:0", "-cert", directory + "/cert.pem", "-key", directory + "/key.pem",
            "-www", "-naccept", "1",
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        let collected = Locked("")
        let port = Locked<(value: Int?, waiter: CheckedContinuation<Int?, Never>?)>((nil, nil))
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            let text = collected.withLock { text -> String in
                text += String(decoding: data, as: UTF8.self)
                return text
            }
            // `ACCEPT 127.0.0.1:PORT` once it listens.
            let found = text.range(of: "ACCEPT 127.0.0.1:").flatMap { range in
                Int(text[range.upperBound...].prefix { $0.isNumber })
            }
            let waiter = port.withLock { state -> CheckedContinuation<Int?, Never>? in
                guard state.value == nil, found != nil || data.isEmpty else { return nil }
                state.value = found ?? -1
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: found)
            if data.isEmpty { handle.readabilityHandler = nil }
        }
        try process.run()
        let listening = await withinHangGuard("openssl s_server listens") {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                let ready = port.withLock { state -> Int?? in
                    if let value = state.value { return .some(value) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready == -1 ? nil : ready) }
            }
        }
        guard let found = listening ?? nil else {
            process.terminate()
            throw StartFailure(output: collected.withLock { $0 })
        }
        return TLSServer(port: found, process: process, directory: directory, collected: collected)
    }

    struct StartFailure: Error {
        var output: String
    }

    /// Ends the server; Foundation reaps it. Nothing waits for its end: `waitUntilExit()` off
    /// the thread that started it would spin a core (see `ProcessEnd`).
    func stop() {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
