import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Figure 2: one message round trip through the engine over real HTTP on the loopback
/// interface, against a bare `URLSession` POST of the same bytes to the same server followed
/// by `JSONDecoder` decoding the reply.
///
/// The engine uses `URLSessionTransport` for the Shopping API on the loopback server; its
/// Gravity events and tracking URLs go to an instant in-memory transport, as there is no
/// Gravity server here. The sides alternate iteration by iteration, each against the same
/// server, so drift and background load hit both alike; the engine's tracking is flushed
/// before the baseline runs. A third side (2a), the same POST through `URLSessionTransport`
/// alone and the engine's reply decoder, splits the overhead between transport and engine.
enum LoopbackRoundTripBench {
    static let goal = 1.15

    static func run(_ options: BenchOptions) async -> Verdict {
        let warmup = options.size(quick: 5, full: 20)
        let iterations = options.size(quick: 25, full: 150)
        let replyBody = BenchFixtures.reply(products: 3)
        Report.heading(2, "Message round trip over loopback HTTP: engine vs bare URLSession + JSONDecoder")
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

        let presenter = BenchPresenter()
        let transport = RoutingTransport(
            networkHost: server.baseURL.host ?? "127.0.0.1", network: URLSessionTransport(), local: InstantTransport())
        let engine = await BenchEngine.openChat(
            transport: transport, presenter: presenter, shoppingBaseURL: server.baseURL)
        let messagesURL = server.baseURL.appendingPathComponent("v1/messages")
        let bare = BareClient(url: messagesURL)
        let transportOnly = URLSessionTransport()

        var engineTimes = Samples()
        var bareTimes = Samples()
        var transportTimes = Samples()
        var requestBody = Data()
        for iteration in 0..<(warmup + iterations) {
            await engine.startNewChat()
            await engine.flushTracking()
            server.enqueue(answer)
            presenter.expectReply(messages: 2)
            let start = Timing.now
            await BenchEngine.send(engine, "Подарок для мамы до 3000 ₽")
            let observed = await presenter.replyObserved()
            let engineTime = start.duration(to: observed)
            if requestBody.isEmpty { requestBody = server.receivedRequests.last?.body ?? Data() }
            // The message's lifecycle events and impressions finish before the baseline runs,
            // or they would slow it down and flatter the ratio.
            await engine.flushTracking()

            server.enqueue(answer)
            let bareTime: Duration
            do {
                bareTime = try await Timing.measure {
                    let reply = try await bare.post(requestBody)
                    Sink.consume(reply.products?.items.count ?? -1)
                }
            } catch {
                Report.line("stopped: the bare POST failed: \(error)")
                return Verdict(figure: 2, name: "loopback round trip", value: "failed", goal: nil, met: nil)
            }
            // 2a: the same POST through `URLSessionTransport` alone (its deadline, body bound and
            // redirect policy) and the engine's reply decoder, to split the engine's overhead.
            server.enqueue(answer)
            let transportTime: Duration
            do {
                transportTime = try await Timing.measure {
                    let response = try await transportOnly.send(
                        HTTPRequest(
                            method: .post, url: messagesURL,
                            headers: ["Content-Type": "application/json", "Accept": "application/json"],
                            body: requestBody))
                    Sink.consume(WireBenchmarks.decodeReply(response.body))
                }
            } catch {
                Report.line("stopped: the transport-only POST failed: \(error)")
                return Verdict(figure: 2, name: "loopback round trip", value: "failed", goal: nil, met: nil)
            }
            guard iteration >= warmup else { continue }
            engineTimes.append(engineTime)
            bareTimes.append(bareTime)
            transportTimes.append(transportTime)
        }
        await engine.flushTracking()
        presenter.reportStaleDeliveries(messages: warmup + iterations)

        let ratio = engineTimes.median / bareTimes.median
        Report.line("engine, send → snapshot with reply:  \(engineTimes.summary)")
        Report.line("bare URLSession POST + JSONDecoder:  \(bareTimes.summary)")
        Report.line(
            "2a. URLSessionTransport alone + reply decoder: \(transportTimes.summary) "
                + "(\(Format.ratio(transportTimes.median / bareTimes.median)) of bare; the engine adds "
                + "\(Format.seconds(engineTimes.median - transportTimes.median)) to it)")
        Report.line(
            "ratio engine / bare: \(Format.ratio(ratio)); engine overhead \(Format.seconds(engineTimes.median - bareTimes.median)) per message"
        )
        let verdict = Verdict(
            figure: 2, name: "loopback round trip vs bare URLSession", value: Format.ratio(ratio),
            goal: "≤ \(Format.ratio(goal))", met: ratio <= goal)
        Report.verdict(verdict)
        return verdict
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
