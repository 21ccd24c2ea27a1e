import DemoStore
import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport
import Testing

/// Both services played by a `DemoStore` behind real HTTP servers, so the REPL runs against
/// "live services" over sockets and real time: Gravity under `/gravity` on a port of its own
/// (another origin, as the real services are, so tracking GETs carry no key), the Shopping API
/// at the root of the other, and the tracking URLs of every answer rewritten to `/t/…` and
/// `/t2/…` on the Shopping API's host — tracking that shares that host, which a transcript
/// must still file as tracking.
final class LoopbackDemoServer: Sendable {
    let server: LoopbackHTTPServer
    private let gravityServer: LoopbackHTTPServer
    let store: DemoStore
    /// Wire faults armed for the next request whose path ends with the key, played once.
    private let wireFaults = Locked<[String: LoopbackHTTPServer.Reply]>([:])

    /// A header block cut short (a dying proxy): status line, one header, half a name, close.
    static let headerBlockCutShort = LoopbackHTTPServer.Reply.script([
        .send(Data("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Le".utf8)), .close,
    ])

    var gravityURL: URL { gravityServer.baseURL.appendingPathComponent("gravity") }
    var shoppingURL: URL { server.baseURL }

    private static let trackingHosts = [
        ("https://\(DemoStore.trackingHost)/", "/t/"), ("https://\(DemoStore.secondaryTrackingHost)/", "/t2/"),
    ]

    init() throws {
        let server = try LoopbackHTTPServer()
        let gravityServer = try LoopbackHTTPServer()
        let store = DemoStore()
        self.server = server
        self.gravityServer = gravityServer
        self.store = store
        let base = server.baseURL.absoluteString
        let wireFaults = self.wireFaults
        let responder: LoopbackHTTPServer.Responder = { head in
            let armed = wireFaults.withLock { faults -> LoopbackHTTPServer.Reply? in
                guard let key = faults.keys.first(where: { head.path.hasSuffix($0) }) else { return nil }
                return faults.removeValue(forKey: key)
            }
            return armed ?? .respond { request in Self.answer(request, store: store, base: base) }
        }
        server.setResponder(responder)
        gravityServer.setResponder(responder)
    }

    func stop() {
        server.stop()
        gravityServer.stop()
    }

    /// Plays `reply` on the next request whose path ends with `pathSuffix`, instead of the store.
    func arm(_ reply: LoopbackHTTPServer.Reply, forPathEndingWith pathSuffix: String) {
        wireFaults.withLock { $0[pathSuffix] = reply }
    }

    /// The demo store's answer to `request`, its tracking URLs moved onto this server.
    private static func answer(_ request: LoopbackHTTPServer.ReceivedRequest, store: DemoStore, base: String)
        -> LoopbackHTTPServer.Reply
    {
        var target = request.target
        var host = "https://services.demo.example"
        for (original, path) in trackingHosts where target.hasPrefix(path) {
            host = String(original.dropLast())
            target = "/" + target.dropFirst(path.count)
        }
        guard let url = URL(string: host + target), let method = HTTPRequest.Method(rawValue: request.method) else {
            return .answer(status: 400, text: "bad request")
        }
        let forwarded = HTTPRequest(
            method: method, url: url, headers: request.headers, body: request.body.isEmpty ? nil : request.body)
        // The server thread waits for the store's answer; 60 s only guards against a hang.
        let answer = Locked<HTTPResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let response = try? await store.send(forwarded)
            answer.withLock { $0 = response }
            done.signal()
        }
        guard done.wait(timeout: .now() + 60) == .success, let response = answer.withLock({ $0 }) else {
            return .drop
        }
        var text = String(decoding: response.body, as: UTF8.self)
        for (original, path) in trackingHosts {
            text = text.replacingOccurrences(of: original, with: base + path)
            text = text.replacingOccurrences(
                of: original.replacingOccurrences(of: "/", with: "\\/"),
                with: (base + path).replacingOccurrences(of: "/", with: "\\/"))
        }
        var headers = response.headers.filter { $0.key.caseInsensitiveCompare("Content-Length") != .orderedSame }
        if headers.isEmpty { headers["Content-Type"] = "application/json" }
        return .answer(status: response.status, headers: headers, text: text)
    }
}

/// Serves a `LoopbackDemoServer` until standard input ends, for trying a live session by hand:
///
/// ```
/// SHOPPING_ASSISTANT_CHILD_ROLE=loopback-demo-server \
///   .build/debug/ShoppingAssistantPackageTests.xctest --testing-library swift-testing \
///   --filter LoopbackDemoServerRole
/// ```
///
/// prints the `--gravity-url` and `--shopping-url` to pass to `assistant`. A line naming a
/// demo fault (`rate-limited`, `bad-gateway`, …) arms it once, as `:fault` does on the demo
/// store; `cut-headers` cuts the next `/v1/messages` answer short in its header block.
@Suite(.timeLimit(.minutes(60))) struct LoopbackDemoServerRole {
    @Test func serveUntilStandardInputEnds() async throws {
        guard ChildProcess.role == "loopback-demo-server" else { return }
        let server = try LoopbackDemoServer()
        defer { server.stop() }
        let urls =
            "--gravity-url \(server.gravityURL.absoluteString) --shopping-url \(server.shoppingURL.absoluteString)"
        FileHandle.standardOutput.write(Data((urls + "\n").utf8))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                while let line = readLine() {
                    if line.trimmingCharacters(in: .whitespaces) == "cut-headers" {
                        server.arm(LoopbackDemoServer.headerBlockCutShort, forPathEndingWith: "/v1/messages")
                        FileHandle.standardOutput.write(Data("(next /v1/messages answer cut short)\n".utf8))
                        continue
                    }
                    guard let fault = DemoFault(rawValue: line.trimmingCharacters(in: .whitespaces)) else { continue }
                    server.store.inject(fault)
                    FileHandle.standardOutput.write(Data("(fault \(fault.rawValue) armed, once)\n".utf8))
                }
                continuation.resume()
            }.start()
        }
    }
}
