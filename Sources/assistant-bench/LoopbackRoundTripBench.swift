import Foundation
import ShoppingAssistant
import ShoppingAssistantCurl
import ShoppingAssistantTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Figure 2: one message round trip through the engine over real HTTP on the loopback
/// interface, over each of the package's transports, against two floors: a bare `URLSession`
/// POST of the same bytes to the same server followed by `JSONDecoder` decoding the reply, and
/// the same with bare libcurl (`curl_easy_perform` on the calling thread, one reused handle).
///
/// The engines use `URLSessionTransport` or `CurlTransport` for the Shopping API on the
/// loopback server; their Gravity events and tracking URLs go to an instant in-memory
/// transport, as there is no Gravity server here. The sides alternate iteration by iteration,
/// each against the same server, so drift and background load hit all alike; each engine's
/// tracking is flushed before the next side runs. Two more sides (2a, 2b), the same POST
/// through each transport alone and the engine's reply decoder, split the overhead between
/// transport and engine; two more (2e, 2f) split each engine's round trip at its transport:
/// what the engine does before the request reaches the transport and after its answer leaves.
///
/// Goals: the engine over `URLSessionTransport` within 1.15× of bare URLSession (2); over
/// `CurlTransport`, at most 0.8× of bare URLSession (2c) and within 1.3× of bare libcurl (2d).
enum LoopbackRoundTripBench {
    static let goal = 1.15
    static let curlVersusURLSessionGoal = 0.8
    static let curlVersusLibcurlGoal = 1.3

    /// One side of the figure: what it measures and its samples.
    private final class Side {
        let label: String
        var samples = Samples()
        /// An engine side's round trips split at the transport: from `sendMessage` to the
        /// request entering it, in it, and from its answer to the presenter's snapshot.
        var beforeTransport = Samples()
        var inTransport = Samples()
        var afterTransport = Samples()
        init(_ label: String) { self.label = label }
    }

    static func run(_ options: BenchOptions) async -> Verdict {
        let warmup = options.size(quick: 5, full: 20)
        let iterations = options.size(quick: 25, full: 150)
        let replyBody = BenchFixtures.reply(products: 3)
        Report.heading(
            2, "Message round trip over loopback HTTP: engine over each transport vs bare URLSession and bare libcurl")
        Report.line(
            "inputs: reply with text and 3 products (\(Format.bytes(Double(replyBody.count)))), \(iterations) "
                + "iterations per side after \(warmup) warm-up, alternating, new chat before each engine message")

        let server: LoopbackHTTPServer
        do {
            server = try LoopbackHTTPServer()
        } catch {
            Report.line("skipped: cannot start the loopback server: \(error)")
            return Verdict(figure: 2, name: "loopback round trip", value: "skipped", goal: nil, met: nil)
        }
        defer { server.stop() }
        let answer = LoopbackHTTPServer.Reply.answer(
            status: 200, headers: ["Content-Type": "application/json"], body: replyBody)
        let host = server.baseURL.host ?? "127.0.0.1"
        let messagesURL = server.baseURL.appendingPathComponent("v1/messages")

        let urlSessionPresenter = BenchPresenter()
        let urlSessionRoutes = RoutingTransport(
            networkHost: host, network: URLSessionTransport(), local: InstantTransport())
        let urlSessionEngine = await BenchEngine.openChat(
            transport: urlSessionRoutes, presenter: urlSessionPresenter, shoppingBaseURL: server.baseURL)
        let curlPresenter = BenchPresenter()
        let curlRoutes = RoutingTransport(
            networkHost: host, network: CurlTransport(proxy: .none), local: InstantTransport())
        let curlEngine = await BenchEngine.openChat(
            transport: curlRoutes, presenter: curlPresenter, shoppingBaseURL: server.baseURL)
        let bareURLSession = BareClient(url: messagesURL)
        let bareCurl = CurlBareClient(url: messagesURL)
        let urlSessionTransport = URLSessionTransport()
        let curlTransport = CurlTransport(proxy: .none)

        let engineOverURLSession = Side("engine over URLSessionTransport")
        let engineOverCurl = Side("engine over CurlTransport")
        let bareURLSessionSide = Side("bare URLSession POST + JSONDecoder")
        let bareCurlSide = Side("bare libcurl POST + JSONDecoder")
        let urlSessionAlone = Side("2a. URLSessionTransport alone + reply decoder")
        let curlAlone = Side("2b. CurlTransport alone + reply decoder")

        var requestBody = Data()
        for iteration in 0..<(warmup + iterations) {
            let measured = iteration >= warmup
            for (engine, presenter, routes, side) in [
                (urlSessionEngine, urlSessionPresenter, urlSessionRoutes, engineOverURLSession),
                (curlEngine, curlPresenter, curlRoutes, engineOverCurl),
            ] {
                await engine.startNewChat()
                await engine.flushTracking()
                server.enqueue(answer)
                presenter.expectReply(messages: 2)
                let start = Timing.now
                await BenchEngine.send(engine, "Подарок для мамы до 3000 ₽")
                let observed = await presenter.replyObserved()
                if measured {
                    side.samples.append(start.duration(to: observed))
                    if let call = routes.latestNetworkCall {
                        side.beforeTransport.append(start.duration(to: call.entered))
                        side.inTransport.append(call.entered.duration(to: call.left))
                        side.afterTransport.append(call.left.duration(to: observed))
                    }
                }
                if requestBody.isEmpty { requestBody = server.receivedRequests.last?.body ?? Data() }
                // The message's lifecycle events and impressions finish before the next side
                // runs, or they would slow it down and flatter the ratio.
                await engine.flushTracking()
            }
            let body = requestBody
            let bareSides: [(Side, () async throws -> Void)] = [
                (
                    bareURLSessionSide,
                    {
                        let reply = try await bareURLSession.post(body)
                        Sink.consume(reply.products?.items.count ?? -1)
                    }
                ),
                (
                    bareCurlSide,
                    {
                        guard let (status, data) = bareCurl.post(body), status == 200 else {
                            throw BenchFailure.bareCurl
                        }
                        let reply = try JSONDecoder().decode(WireReply.self, from: data)
                        Sink.consume(reply.products?.items.count ?? -1)
                    }
                ),
                // 2a, 2b: the same POST through a transport alone (its deadline, body bound and
                // redirect policy) and the engine's reply decoder, to split the engine's overhead.
                (urlSessionAlone, { try await Self.transportOnly(urlSessionTransport, messagesURL, body) }),
                (curlAlone, { try await Self.transportOnly(curlTransport, messagesURL, body) }),
            ]
            for (side, post) in bareSides {
                server.enqueue(answer)
                do {
                    let time = try await Timing.measure { try await post() }
                    if measured { side.samples.append(time) }
                } catch {
                    Report.line("stopped: \(side.label) failed: \(error)")
                    return Verdict(figure: 2, name: "loopback round trip", value: "failed", goal: nil, met: nil)
                }
            }
        }
        await urlSessionEngine.flushTracking()
        await curlEngine.flushTracking()
        urlSessionPresenter.reportStaleDeliveries(messages: warmup + iterations)
        curlPresenter.reportStaleDeliveries(messages: warmup + iterations)

        let bare = bareURLSessionSide.samples.median
        let floor = bareCurlSide.samples.median
        for side in [engineOverURLSession, engineOverCurl, bareURLSessionSide, bareCurlSide] {
            Report.line("\(side.label): \(side.samples.summary)")
        }
        for (side, engine) in [(urlSessionAlone, engineOverURLSession), (curlAlone, engineOverCurl)] {
            Report.line(
                "\(side.label): \(side.samples.summary) (\(Format.ratio(side.samples.median / bare)) of bare "
                    + "URLSession, \(Format.ratio(side.samples.median / floor)) of bare libcurl; the engine adds "
                    + "\(Format.seconds(engine.samples.median - side.samples.median)) to it)")
        }
        for (name, side) in [
            ("2e. engine over URLSessionTransport", engineOverURLSession),
            ("2f. engine over CurlTransport", engineOverCurl),
        ] {
            Report.line(
                "\(name), split at the transport (medians): sendMessage → request in the transport "
                    + "\(Format.seconds(side.beforeTransport.median)), in the transport "
                    + "\(Format.seconds(side.inTransport.median)), answer → presenter's snapshot "
                    + "\(Format.seconds(side.afterTransport.median))")
        }
        let ratio = engineOverURLSession.samples.median / bare
        let curlRatio = engineOverCurl.samples.median / bare
        let floorRatio = engineOverCurl.samples.median / floor
        Report.line(
            "ratio engine over URLSessionTransport / bare URLSession: \(Format.ratio(ratio)); engine overhead "
                + "\(Format.seconds(engineOverURLSession.samples.median - bare)) per message")
        Report.line(
            "ratio engine over CurlTransport / bare URLSession: \(Format.ratio(curlRatio)); / bare libcurl: "
                + "\(Format.ratio(floorRatio)) (\(Format.seconds(engineOverCurl.samples.median - floor)) above the floor)"
        )
        Report.verdict(
            Verdict(
                figure: 2, name: "loopback round trip, engine over CurlTransport vs bare URLSession (2c)",
                value: Format.ratio(curlRatio), goal: "≤ \(Format.ratio(curlVersusURLSessionGoal))",
                met: curlRatio <= curlVersusURLSessionGoal))
        Report.verdict(
            Verdict(
                figure: 2, name: "loopback round trip, engine over CurlTransport vs bare libcurl (2d)",
                value: Format.ratio(floorRatio), goal: "≤ \(Format.ratio(curlVersusLibcurlGoal))",
                met: floorRatio <= curlVersusLibcurlGoal))
        let verdict = Verdict(
            figure: 2, name: "loopback round trip, engine over URLSessionTransport vs bare URLSession",
            value: Format.ratio(ratio), goal: "≤ \(Format.ratio(goal))", met: ratio <= goal)
        Report.verdict(verdict)
        return verdict
    }

    /// One POST through `transport` and the engine's reply decoder.
    private static func transportOnly(_ transport: any HTTPTransport, _ url: URL, _ body: Data) async throws {
        let response = try await transport.send(
            HTTPRequest(
                method: .post, url: url, headers: ["Content-Type": "application/json", "Accept": "application/json"],
                body: body))
        Sink.consume(WireBenchmarks.decodeReply(response.body))
    }

    private enum BenchFailure: Error {
        case bareCurl
    }
}

/// What an app without the engine would do: POST the bytes, decode the reply.
private final class BareClient: Sendable {
    private let session: URLSession
    private let url: URL

    init(url: URL) {
        self.url = url
        // The same settings `URLSessionTransport` uses, so the sessions do the same work.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = URLSessionTransport.defaultRequestTimeout
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    func post(_ body: Data) async throws -> WireReply {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = body
        let data: Data = try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let status = (response as? HTTPURLResponse)?.statusCode, status != 200 {
                    continuation.resume(throwing: URLError(.badServerResponse))
                } else {
                    continuation.resume(returning: data ?? Data())
                }
            }.resume()
        }
        return try JSONDecoder().decode(WireReply.self, from: data)
    }
}
