import Foundation
import ShoppingAssistant

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 server on 127.0.0.1 and an ephemeral port, so that the real
/// `URLSessionTransport` (or any HTTP client) can be exercised end to end without leaving the
/// machine: the engine's transport tests and the `assistant-bench` loopback figure use it, and
/// embedders can point their own tests at it.
///
/// Every accepted connection carries exactly one request (answers say `Connection: close`), and
/// the test scripts what happens to each request, in arrival order, with `enqueue(_:)`. Nothing
/// here waits on wall time: a held answer waits on a `Gate` the test opens, and tests wait for
/// server-side events (`request(_:)`, `clientHungUp(onRequest:)`) instead of sleeping.
///
/// All blocking happens in `poll(2)` on background threads (one for accepting, one per
/// connection), and every poll also watches a stop pipe, so `stop()` ends every thread
/// promptly whatever it was waiting for. Call `stop()` when done: the threads keep the server
/// alive until then.
///
/// ```swift
/// let server = try LoopbackHTTPServer()
/// defer { server.stop() }
/// server.enqueue(.answer(status: 200, headers: ["Content-Type": "application/json"], text: #"{"ok":true}"#))
/// let transport = URLSessionTransport()
/// let response = try await transport.send(HTTPRequest(method: .get, url: server.baseURL))
/// let request = await server.request(0)  // what the client sent, byte for byte
/// ```
public final class LoopbackHTTPServer: Sendable {
    /// A request as it arrived on the socket.
    public struct ReceivedRequest: Sendable, Equatable {
        public var method: String
        /// The request target as sent: path plus query.
        public var target: String
        /// Header names as the client wrote them; repeated headers are joined with ", ".
        public var headers: [String: String]
        public var body: Data

        /// The path without the query.
        public var path: String { String(target.prefix { $0 != "?" }) }

        /// The value of a header, matched case-insensitively as HTTP requires.
        public func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// What the server does with one request once it has read it completely.
    public enum Reply: Sendable {
        /// Answer with this status, headers and body (`Content-Length` and `Connection: close`
        /// are added).
        case answer(status: Int, headers: [String: String] = [:], body: Data = Data())
        /// Close the connection without a single byte of answer: the request did reach the
        /// server, which is the uncertain case of D5.
        case drop
        /// Do nothing until the gate opens (or the client hangs up), then carry on with `then`.
        indirect case hold(Gate, then: Reply)

        /// An answer with a UTF-8 body.
        public static func answer(status: Int, headers: [String: String] = [:], text: String) -> Reply {
            .answer(status: status, headers: headers, body: Data(text.utf8))
        }
    }

    /// A one-way latch the test opens to release held answers. It is a pipe, so the server
    /// threads can wait on it in the same `poll(2)` that notices a client hanging up.
    public final class Gate: Sendable {
        fileprivate let readFD: Int32
        private let writeFD: Int32
        private let isOpen = Locked(false)

        public init() {
            var fds: [Int32] = [0, 0]
            precondition(pipe(&fds) == 0, "pipe() failed: errno \(errno)")
            readFD = fds[0]
            writeFD = fds[1]
        }

        deinit {
            close(readFD)
            close(writeFD)
        }

        /// Lets every answer held on this gate go. Opening twice is harmless.
        public func open() {
            let first = isOpen.withLock { isOpen in
                defer { isOpen = true }
                return !isOpen
            }
            // The byte is never read, so the pipe stays readable: the gate stays open.
            if first { Self.writeByte(to: writeFD) }
        }

        fileprivate static func writeByte(to fd: Int32) {
            var byte: UInt8 = 1
            _ = write(fd, &byte, 1)
        }
    }

    /// Why a socket call failed while setting up.
    public struct SocketError: Error, CustomStringConvertible {
        public var call: String
        public var code: Int32
        public var description: String { "\(call) failed: errno \(code)" }
    }

    /// The port the server listens on.
    public let port: UInt16

    /// The server's base URL; `127.0.0.1` and not `localhost`, so no name lookup or IPv6
    /// attempt comes first.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private enum Event: Hashable {
        case received(Int)
        case clientHungUp(Int)
    }

    private struct State {
        var replies: [Reply] = []
        var requests: [ReceivedRequest] = []
        var events: Set<Event> = []
        var waiters: [Int: (event: Event, continuation: CheckedContinuation<Bool, Never>)] = [:]
        var nextWaiterID = 0
        /// Waiters whose task was cancelled before they could register.
        var cancelledWaiters: Set<Int> = []
        var isStopped = false

        /// Notes that `event` happened and hands back the waiters to resume (outside the lock).
        mutating func insert(_ event: Event) -> [CheckedContinuation<Bool, Never>] {
            events.insert(event)
            let ready = waiters.filter { $0.value.event == event }
            for id in ready.keys { waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
    }

    private let listenFD: Int32
    private let stopReadFD: Int32
    private let stopWriteFD: Int32
    private let state = Locked(State())

    /// Starts listening at once; the accept loop runs on its own thread until `stop()`.
    public init() throws {
        let fd = try Self.makeLoopbackSocket()
        guard listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(call: "listen", code: code)
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(call: "pipe", code: code)
        }
        listenFD = fd
        stopReadFD = fds[0]
        stopWriteFD = fds[1]
        port = try Self.boundPort(of: fd)
        Thread { [self] in acceptLoop() }.start()
    }

    deinit {
        // Only reached once every thread, each holding the server, has ended.
        close(stopReadFD)
        close(stopWriteFD)
    }

    /// Scripts the next unscripted request. A request with no script gets a 500 whose body
    /// says so, which makes a forgotten script visible in the failing assertion.
    public func enqueue(_ reply: Reply) {
        state.withLock { $0.replies.append(reply) }
    }

    /// Every complete request received so far, in arrival order.
    public var receivedRequests: [ReceivedRequest] {
        state.withLock { $0.requests }
    }

    /// Waits until the `index`-th request (from 0) has been read completely; `nil` if the
    /// server stopped first.
    public func request(_ index: Int) async -> ReceivedRequest? {
        guard await wait(for: .received(index)) else { return nil }
        return state.withLock { $0.requests[index] }
    }

    /// Waits until the client closed the connection of the `index`-th request while its
    /// answer was held; `false` if the server stopped first.
    public func clientHungUp(onRequest index: Int) async -> Bool {
        await wait(for: .clientHungUp(index))
    }

    /// Stops accepting, abandons held answers and wakes every waiter. Idempotent.
    public func stop() {
        let waiters = state.withLock { state in
            guard !state.isStopped else { return [CheckedContinuation<Bool, Never>]() }
            state.isStopped = true
            defer { state.waiters = [:] }
            return state.waiters.values.map(\.continuation)
        }
        Gate.writeByte(to: stopWriteFD)
        for waiter in waiters { waiter.resume(returning: false) }
    }

    // MARK: - Refused connections

    /// A loopback port bound to a socket that never listens, so a connection to it is refused
    /// at once, and no other process can take the port while the test holds this value.
    public final class RefusingPort: Sendable {
        public let port: UInt16
        private let fd: Int32

        public init() throws {
            fd = try LoopbackHTTPServer.makeLoopbackSocket()
            do {
                port = try LoopbackHTTPServer.boundPort(of: fd)
            } catch {
                close(fd)
                throw error
            }
        }

        deinit { close(fd) }

        public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    }

    // MARK: - Waiting for events

    /// Suspends until `event` happened (`true`), or the server stopped or the waiting task was
    /// cancelled (`false`). Honouring cancellation lets a suite time limit end a test whose
    /// event never comes, instead of hanging the whole run.
    private func wait(for event: Event) async -> Bool {
        let id = state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let answer = state.withLock { state -> Bool? in
                    if state.events.contains(event) { return true }
                    if state.isStopped || state.cancelledWaiters.remove(id) != nil { return false }
                    state.waiters[id] = (event, continuation)
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.cancelledWaiters.insert(id)
                    return CheckedContinuation<Bool, Never>?.none
                }
                return waiter.continuation
            }
            waiter?.resume(returning: false)
        }
    }

    private func record(_ event: Event) {
        let ready = state.withLock { $0.insert(event) }
        for waiter in ready { waiter.resume(returning: true) }
    }

    /// Files a complete request and takes its script, under one lock so that concurrent
    /// connections get distinct indexes and scripts in arrival order.
    private func register(_ request: ReceivedRequest) -> (index: Int, reply: Reply) {
        let (index, reply, ready) = state.withLock { state in
            let index = state.requests.count
            state.requests.append(request)
            let reply =
                state.replies.isEmpty
                ? Reply.answer(status: 500, text: "no reply scripted for this request")
                : state.replies.removeFirst()
            return (index, reply, state.insert(.received(index)))
        }
        for waiter in ready { waiter.resume(returning: true) }
        return (index, reply)
    }

    // MARK: - Socket plumbing

    private static func makeLoopbackSocket() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0  // the kernel picks a free port
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw SocketError(call: "bind", code: code)
        }
        return fd
    }

    private static func boundPort(of fd: Int32) throws -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getsockname(fd, $0, &length)
            }
        }
        guard result == 0 else { throw SocketError(call: "getsockname", code: errno) }
        return UInt16(bigEndian: address.sin_port)
    }

    private enum Readiness {
        case ready(Int32)
        case stopped
    }

    /// Blocks until one of `fds` is readable or the server is stopped.
    private func waitReadable(_ fds: [Int32]) -> Readiness {
        var pollFDs = ([stopReadFD] + fds).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while true {
            let count = poll(&pollFDs, nfds_t(pollFDs.count), -1)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return .stopped }
            if pollFDs[0].revents != 0 { return .stopped }
            if let ready = pollFDs.dropFirst().first(where: { $0.revents != 0 }) {
                return .ready(ready.fd)
            }
        }
    }

    private func acceptLoop() {
        defer { close(listenFD) }
        while case .ready = waitReadable([listenFD]) {
            let connection = accept(listenFD, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR || errno == EAGAIN || errno == ECONNABORTED { continue }
                return
            }
            Thread { [self] in serve(connection) }.start()
        }
    }

    // MARK: - One connection

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        guard let request = readRequest(from: fd) else { return }
        let (index, scripted) = register(request)
        var reply = scripted

        while case .hold(let gate, let then) = reply {
            switch waitReadable([gate.readFD, fd]) {
            case .stopped:
                return
            case .ready(gate.readFD):
                reply = then
            case .ready:
                // The client sends nothing more after a complete request, so readability
                // means end of stream or a reset: it hung up on the held answer.
                var byte: UInt8 = 0
                if recv(fd, &byte, 1, 0) <= 0 {
                    record(.clientHungUp(index))
                    return
                }
            }
        }

        switch reply {
        case .answer(let status, let headers, let body):
            sendAll(Self.encodeResponse(status: status, headers: headers, body: body), to: fd)
            shutdown(fd, Int32(SHUT_WR))
        case .drop, .hold:
            return
        }
    }

    /// Reads one request: head up to the blank line, then exactly `Content-Length` bytes.
    /// `nil` when the client went away, the server stopped or the head is malformed.
    private func readRequest(from fd: Int32) -> ReceivedRequest? {
        var buffer: [UInt8] = []
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            guard receiveMore(from: fd, into: &buffer) else { return nil }
            headEnd = buffer.firstRange(of: separator)?.lowerBound
        }
        guard let headEnd else { return nil }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3 else { return nil }

        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        var request = ReceivedRequest(
            method: String(requestLine[0]),
            target: String(requestLine[1]),
            headers: headers,
            body: Data()
        )

        let length = request.header("Content-Length").flatMap { Int($0) } ?? 0
        if length > 0, request.header("Expect")?.lowercased() == "100-continue" {
            sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), to: fd)
        }
        let bodyStart = headEnd + separator.count
        while buffer.count - bodyStart < length {
            guard receiveMore(from: fd, into: &buffer) else { return nil }
        }
        request.body = Data(buffer[bodyStart..<(bodyStart + length)])
        return request
    }

    /// Appends whatever the socket has; `false` on end of stream, error or stop.
    private func receiveMore(from fd: Int32, into buffer: inout [UInt8]) -> Bool {
        guard case .ready = waitReadable([fd]) else { return false }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    private func sendAll(_ bytes: [UInt8], to fd: Int32) {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a client that already hung up must not kill the test process
            // with SIGPIPE.
            let sent = bytes[offset...].withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    private static func encodeResponse(
        status: Int,
        headers: [String: String],
        body: Data
    ) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + Array(body)
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 409: "Conflict"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
