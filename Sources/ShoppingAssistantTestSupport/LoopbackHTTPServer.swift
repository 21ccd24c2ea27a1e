import Foundation
import ShoppingAssistant

#if canImport(Glibc)
    import Glibc
#endif

/// A small HTTP/1.1 server on a loopback address and an ephemeral port, so that the real
/// transports (`CurlTransport`, `URLSessionTransport`) or any HTTP client can be exercised end
/// to end without leaving the machine: the engine's transport and reliability tests and the
/// `assistant-bench` loopback figure use it, and embedders can point their own tests at it.
///
/// It answers correctly or misbehaves on purpose, request by request: reset the connection
/// before or after reading the body, close it in the middle of the status line, the headers or
/// the body, send the headers and then nothing, trickle the body a byte at a time, lie in
/// `Content-Length`, send a broken chunk, answer HTTP/1.0 close-delimited, send `1xx` answers
/// first — anything a `Reply.script` of raw bytes and socket actions can say.
///
/// Every accepted connection carries exactly one request (answers say `Connection: close`),
/// unless the server keeps connections alive (`init(host:keepsConnectionsAlive:)`): then a
/// connection answered with `.answer` waits for the client's next request, as a server that
/// keeps connections does, and `acceptedConnections` shows whether the client reused it.
/// What happens to a request is decided once its head has been read: by the next reply queued
/// with `enqueue(_:)` (in arrival order), else by the responder (`setResponder(_:)`), else a
/// 500 that says no reply was scripted. Nothing here waits on wall time: a held answer waits on
/// a `Gate` the test opens, and tests wait for server-side events (`request(_:)`,
/// `stalled(onRequest:)`, `clientHungUp(onRequest:)`, `allConnectionsClosed()`) instead of
/// sleeping. Only a trickle paces itself, and only the server thread waits for that.
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
package final class LoopbackHTTPServer: Sendable {
    /// A request as it arrived on the socket.
    package struct ReceivedRequest: Sendable, Equatable {
        package var method: String
        /// The request target as sent: path plus query.
        package var target: String
        /// Header names as the client wrote them; repeated headers are joined with ", ".
        package var headers: [String: String]
        /// Empty when the reply was decided before the body was read (`resetBeforeBody`), and
        /// in the request a responder is given.
        package var body: Data

        /// The path without the query.
        package var path: String { String(target.prefix { $0 != "?" }) }

        /// The value of a header, matched case-insensitively as HTTP requires.
        package func header(_ name: String) -> String? {
            headers.first { HTTPFieldName.matches($0.key, name) }?.value
        }
    }

    /// What the server does with one request.
    package enum Reply: Sendable {
        /// Answer with this status, headers and body (`Content-Length` and `Connection: close`
        /// are added).
        case answer(status: Int, headers: [String: String] = [:], body: Data = Data())
        /// Read the request, then close the connection without answering.
        case drop
        /// Read the request, then wait until `gate` opens and reply with `then`. A client that
        /// hangs up meanwhile is recorded (`clientHungUp(onRequest:)`).
        indirect case hold(Gate, then: Reply)
        /// Reset the connection (TCP RST) as soon as the head is read, leaving the body unread.
        case resetBeforeBody
        /// Read the request, then play these steps on the connection, in order.
        case script([Step])
        /// Read the request, then reply with what `makeReply` says for it (its body included).
        case respond(@Sendable (ReceivedRequest) -> Reply)

        /// An answer with a UTF-8 body.
        package static func answer(status: Int, headers: [String: String] = [:], text: String) -> Reply {
            .answer(status: status, headers: headers, body: Data(text.utf8))
        }
    }

    /// One action of a scripted reply. A script that ends without `reset` or `close` closes the
    /// connection normally (FIN) when it is done.
    package enum Step: Sendable {
        /// Write these bytes as they are.
        case send(Data)
        /// Write `count` copies of `byte`, streamed, so that a huge body costs the server no memory.
        case repeatByte(UInt8, count: Int)
        /// Write these bytes one at a time, pausing `interval` after each, and stop early when
        /// the client hangs up. Reaching the first pause counts as stalling.
        case trickle(Data, interval: Duration)
        /// Send nothing more until the client hangs up (or the server stops): a stall.
        case waitForHangUp
        /// Send nothing more until `gate` opens; a hang-up meanwhile ends the script. A stall.
        case pause(Gate)
        /// Reset the connection (TCP RST) and end the script.
        case reset
        /// Close the connection (FIN) and end the script.
        case close
    }

    /// Decides the reply to a request the queue has no reply for. It is given the request's
    /// head (its `body` is empty); return `.respond` to decide once the body is read.
    package typealias Responder = @Sendable (ReceivedRequest) -> Reply

    /// A one-way latch the test opens to release held answers. It is a pipe, so the server
    /// threads can wait on it in the same `poll(2)` that notices a client hanging up.
    package final class Gate: Sendable {
        fileprivate let readFD: Int32
        private let writeFD: Int32
        private let isOpen = Locked(false)

        package init() {
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
        package func open() {
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
    package struct SocketError: Error, CustomStringConvertible {
        package var call: String
        package var code: Int32
        package var description: String { "\(call) failed: errno \(code)" }
    }

    /// The loopback address the server listens on.
    package let host: String

    /// The port the server listens on.
    package let port: UInt16

    /// The server's base URL, with the numeric address and not `localhost`, so no name lookup
    /// or IPv6 attempt comes first.
    package var baseURL: URL { URL(string: "http://\(host):\(port)")! }

    private enum Event: Hashable {
        case received(Int)
        case stalled(Int)
        case clientHungUp(Int)
    }

    private struct Waiter {
        let isSatisfied: @Sendable (State) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State: Sendable {
        var replies: [Reply] = []
        var responder: Responder?
        /// Requests from index `discarded` on; the earlier ones were discarded.
        var requests: [ReceivedRequest] = []
        var discarded = 0

        func request(_ index: Int) -> ReceivedRequest? {
            let offset = index - discarded
            return requests.indices.contains(offset) ? requests[offset] : nil
        }
        var bytesSent: [Int: Int] = [:]
        var events: Set<Event> = []
        var openConnections = 0
        var acceptedConnections = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
        /// ParkedCallers whose task was cancelled before they could register.
        var cancelledWaiters: Set<Int> = []
        var isStopped = false

        /// Hands back the waiters now satisfied (to resume outside the lock).
        mutating func satisfiedWaiters() -> [CheckedContinuation<Bool, Never>] {
            let snapshot = self
            let ready = waiters.filter { $0.value.isSatisfied(snapshot) }
            for id in ready.keys { waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
    }

    private let keepsConnectionsAlive: Bool
    private let listenFD: Int32
    private let stopReadFD: Int32
    private let stopWriteFD: Int32
    private let state = Locked(State())

    /// Starts listening at once; the accept loop runs on its own thread until `stop()`.
    ///
    /// - Parameters:
    ///   - host: A loopback address (`127.0.0.1`, or another of 127.0.0.0/8 to play a second
    ///     host, as a redirect test needs).
    ///   - keepsConnectionsAlive: Answer `.answer` replies without `Connection: close` and read
    ///     the next request from the same connection.
    package init(host: String = "127.0.0.1", keepsConnectionsAlive: Bool = false) throws {
        let fd = try Self.makeLoopbackSocket(host: host)
        guard listen(fd, 128) == 0 else {
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
        self.host = host
        self.keepsConnectionsAlive = keepsConnectionsAlive
        listenFD = fd
        stopReadFD = fds[0]
        stopWriteFD = fds[1]
        do {
            port = try Self.boundPort(of: fd)
        } catch {
            close(fd)
            close(fds[0])
            close(fds[1])
            throw error
        }
        Thread { [self] in acceptLoop() }.start()
    }

    deinit {
        // Only reached once every thread, each holding the server, has ended.
        close(stopReadFD)
        close(stopWriteFD)
    }

    /// Scripts the next request (in arrival order) that no earlier script took.
    package func enqueue(_ reply: Reply) {
        state.withLock { $0.replies.append(reply) }
    }

    /// Decides the replies to requests the queue has none for; `nil` brings back the 500.
    package func setResponder(_ responder: Responder?) {
        state.withLock { $0.responder = responder }
    }

    /// Every request received so far (since the last `discardReceivedRequests()`), in
    /// arrival order.
    package var receivedRequests: [ReceivedRequest] {
        state.withLock { $0.requests }
    }

    /// Forgets the requests received so far and what happened to them, so a long run (a soak)
    /// does not grow with its history; indexes go on counting.
    package func discardReceivedRequests() {
        state.withLock { state in
            state.discarded += state.requests.count
            state.requests = []
            state.bytesSent = [:]
            state.events = []
        }
    }

    /// Connections accepted and not yet closed by the server.
    package var openConnections: Int { state.withLock { $0.openConnections } }

    /// Connections accepted since the server started.
    package var acceptedConnections: Int { state.withLock { $0.acceptedConnections } }

    /// How many bytes of the reply to the `index`-th request the kernel accepted, so far.
    package func bytesSent(onRequest index: Int) -> Int {
        state.withLock { $0.bytesSent[index] ?? 0 }
    }

    /// Waits until the `index`-th request (from 0) has been read completely; `nil` if the
    /// server stopped first.
    package func request(_ index: Int) async -> ReceivedRequest? {
        guard await wait(for: .received(index)) else { return nil }
        return state.withLock { $0.request(index) }
    }

    /// Waits for the first request, received before or after the call, that satisfies
    /// `predicate`; returns its index, or `nil` if the server stopped first.
    package func firstRequest(where predicate: @escaping @Sendable (ReceivedRequest) -> Bool) async -> Int? {
        guard await wait(until: { $0.requests.contains(where: predicate) }) else { return nil }
        return state.withLock { state in state.requests.firstIndex(where: predicate).map { $0 + state.discarded } }
    }

    /// Waits until the reply to the `index`-th request stalls: it is held, waits for the
    /// client to hang up, or trickles. `false` if the server stopped first.
    package func stalled(onRequest index: Int) async -> Bool {
        await wait(for: .stalled(index))
    }

    /// Waits until the client closed the connection of the `index`-th request while its
    /// answer was held or stalled; `false` if the server stopped first.
    package func clientHungUp(onRequest index: Int) async -> Bool {
        await wait(for: .clientHungUp(index))
    }

    /// Waits until no accepted connection is open; `false` if the server stopped first.
    package func allConnectionsClosed() async -> Bool {
        await wait(until: { $0.openConnections == 0 })
    }

    /// Stops accepting, abandons held answers and wakes every waiter. Idempotent.
    package func stop() {
        let waiters = state.withLock { state in
            guard !state.isStopped else { return [CheckedContinuation<Bool, Never>]() }
            state.isStopped = true
            defer { state.waiters = [:] }
            return state.waiters.values.map(\.continuation)
        }
        Gate.writeByte(to: stopWriteFD)
        for waiter in waiters { waiter.resume(returning: false) }
    }

    // MARK: - Building raw answers

    /// A status line and headers, ending with the blank line, exactly as given: nothing is
    /// added, so a script can send any framing (or none).
    package static func head(
        status: Int, reason: String? = nil, version: String = "HTTP/1.1", headers: [(String, String)] = []
    ) -> Data {
        var text = "\(version) \(status) \(reason ?? reasonPhrase(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return Data((text + "\r\n").utf8)
    }

    /// `body` in chunked transfer coding, in chunks of `chunkSize` bytes, with the last chunk.
    package static func chunked(_ body: Data, chunkSize: Int = 1024) -> Data {
        var out = Data()
        var offset = body.startIndex
        while offset < body.endIndex {
            let end = body.index(offset, offsetBy: max(1, chunkSize), limitedBy: body.endIndex) ?? body.endIndex
            out.append(Data(String(body.distance(from: offset, to: end), radix: 16).utf8))
            out.append(Data("\r\n".utf8))
            out.append(body[offset..<end])
            out.append(Data("\r\n".utf8))
            offset = end
        }
        out.append(Data("0\r\n\r\n".utf8))
        return out
    }

    // MARK: - Refused connections

    /// A loopback port bound to a socket that never listens, so a connection to it is refused
    /// at once, and no other process can take the port while the test holds this value.
    package final class RefusingPort: Sendable {
        package let port: UInt16
        private let fd: Int32

        package init() throws {
            fd = try LoopbackHTTPServer.makeLoopbackSocket(host: "127.0.0.1")
            do {
                port = try LoopbackHTTPServer.boundPort(of: fd)
            } catch {
                close(fd)
                throw error
            }
        }

        deinit { close(fd) }

        package var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    }

    // MARK: - Waiting for events

    private func wait(for event: Event) async -> Bool {
        await wait(until: { $0.events.contains(event) })
    }

    /// Suspends until `condition` holds (`true`), or the server stopped or the waiting task was
    /// cancelled (`false`). Honouring cancellation lets a guard end a test whose event never
    /// comes, instead of hanging the whole run.
    private func wait(until condition: @escaping @Sendable (State) -> Bool) async -> Bool {
        let id = state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let answer = state.withLock { state -> Bool? in
                    if condition(state) { return true }
                    if state.isStopped || state.cancelledWaiters.remove(id) != nil { return false }
                    state.waiters[id] = Waiter(isSatisfied: condition, continuation: continuation)
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

    /// Changes the state and wakes the waiters the change satisfied.
    private func update(_ change: (inout State) -> Void) {
        let ready = state.withLock { state in
            change(&state)
            return state.satisfiedWaiters()
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    private func record(_ event: Event) {
        update { $0.events.insert(event) }
    }

    /// Takes the script for a request whose head has arrived.
    private func reply(forHead head: ReceivedRequest) -> Reply {
        let (queued, responder) = state.withLock { state -> (Reply?, Responder?) in
            state.replies.isEmpty ? (nil, state.responder) : (state.replies.removeFirst(), nil)
        }
        return queued ?? responder?(head) ?? .answer(status: 500, text: "no reply scripted for this request")
    }

    /// Files a request, under one lock so that concurrent connections get distinct indexes.
    private func register(_ request: ReceivedRequest) -> Int {
        var index = 0
        update { state in
            index = state.discarded + state.requests.count
            state.requests.append(request)
            state.events.insert(.received(index))
        }
        return index
    }

    // MARK: - Socket plumbing

    fileprivate static func makeLoopbackSocket(host: String) throws -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0  // the kernel picks a free port
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1,
            UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
        else { throw SocketError(call: "inet_pton(\(host)): not a loopback address", code: EINVAL) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
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

    fileprivate static func boundPort(of fd: Int32) throws -> UInt16 {
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
        case timedOut
        case stopped
    }

    /// Blocks until one of `fds` is readable, the server is stopped, or `timeout` (in
    /// milliseconds, -1 for none) passes.
    private func waitReadable(_ fds: [Int32], timeout: Int32 = -1) -> Readiness {
        var pollFDs = ([stopReadFD] + fds).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while true {
            let count = poll(&pollFDs, nfds_t(pollFDs.count), timeout)
            if count < 0 && errno == EINTR { continue }
            if count == 0 { return .timedOut }
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
            update { state in
                state.openConnections += 1
                state.acceptedConnections += 1
            }
            Thread { [self] in serve(connection) }.start()
        }
    }

    // MARK: - One connection

    /// One connection's socket, closed exactly once however its script ends.
    private final class Connection {
        let fd: Int32
        var isClosed = false
        init(fd: Int32) { self.fd = fd }
    }

    private func serve(_ fd: Int32) {
        let connection = Connection(fd: fd)
        defer {
            if !connection.isClosed { close(fd) }
            update { $0.openConnections -= 1 }
        }
        var buffer: [UInt8] = []
        var keepGoing = true
        while keepGoing {
            guard let (head, bodyStart) = readHead(from: fd, into: &buffer) else { return }
            let reply = reply(forHead: head)
            if case .resetBeforeBody = reply {
                _ = register(head)
                reset(connection)
                return
            }
            guard let request = readBody(of: head, from: fd, buffer: &buffer, bodyStart: bodyStart) else { return }
            buffer.removeFirst(min(buffer.count, bodyStart + request.body.count))
            let index = register(request)
            keepGoing = play(reply, for: request, index: index, on: connection)
        }
    }

    /// Plays the reply; `true` when the connection stays open for another request.
    @discardableResult
    private func play(_ reply: Reply, for request: ReceivedRequest, index: Int, on connection: Connection) -> Bool {
        let fd = connection.fd
        switch reply {
        case .answer(let status, let headers, let body):
            let bytes = Self.encodeResponse(
                status: status, headers: headers, body: body, closing: !keepsConnectionsAlive)
            guard send(bytes, index: index, to: fd), keepsConnectionsAlive else {
                shutdown(fd, Int32(SHUT_WR))
                return false
            }
            return true
        case .drop:
            return false
        case .hold(let gate, let then):
            guard waitForGate(gate, index: index, fd: fd) else { return false }
            return play(then, for: request, index: index, on: connection)
        case .resetBeforeBody:
            reset(connection)
        case .respond(let makeReply):
            return play(makeReply(request), for: request, index: index, on: connection)
        case .script(let steps):
            for step in steps {
                guard perform(step, index: index, on: connection) else { return false }
            }
        }
        return false
    }

    /// Plays one step; `false` when the script has to end (closed, reset, hung up, stopped).
    private func perform(_ step: Step, index: Int, on connection: Connection) -> Bool {
        let fd = connection.fd
        switch step {
        case .send(let data):
            return send(Array(data), index: index, to: fd)
        case .repeatByte(let byte, let count):
            let block = [UInt8](repeating: byte, count: min(count, 64 * 1024))
            var left = count
            while left > 0 {
                let part = min(left, block.count)
                guard send(part == block.count ? block : Array(block[..<part]), index: index, to: fd) else {
                    return false
                }
                left -= part
            }
            return true
        case .trickle(let data, let interval):
            let (seconds, attoseconds) = interval.components
            let pause = Int32(clamping: max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
            for (offset, byte) in data.enumerated() {
                guard send([byte], index: index, to: fd) else { return false }
                if offset == 0 { record(.stalled(index)) }
                switch waitReadable([fd], timeout: pause) {
                case .timedOut: continue
                case .stopped: return false
                case .ready:
                    if clientHungUp(fd) {
                        record(.clientHungUp(index))
                        return false
                    }
                }
            }
            return true
        case .waitForHangUp:
            record(.stalled(index))
            while case .ready = waitReadable([fd]) {
                if clientHungUp(fd) {
                    record(.clientHungUp(index))
                    return false
                }
            }
            return false
        case .pause(let gate):
            return waitForGate(gate, index: index, fd: fd)
        case .reset:
            reset(connection)
            return false
        case .close:
            shutdown(fd, Int32(SHUT_WR))
            return false
        }
    }

    /// Waits for the gate; `false` (and the hang-up recorded) if the client went away first.
    private func waitForGate(_ gate: Gate, index: Int, fd: Int32) -> Bool {
        record(.stalled(index))
        while true {
            switch waitReadable([gate.readFD, fd]) {
            case .stopped, .timedOut:
                return false
            case .ready(gate.readFD):
                return true
            case .ready:
                // The client sends nothing more after a complete request, so readability
                // means end of stream or a reset: it hung up on the held answer.
                if clientHungUp(fd) {
                    record(.clientHungUp(index))
                    return false
                }
            }
        }
    }

    /// Reads what is readable; true when that was the end of the stream or an error.
    private func clientHungUp(_ fd: Int32) -> Bool {
        var scratch = [UInt8](repeating: 0, count: 512)
        return recv(fd, &scratch, scratch.count, 0) <= 0
    }

    /// An RST instead of a FIN: close with a zero linger time.
    private func reset(_ connection: Connection) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(connection.fd)
        connection.isClosed = true
    }

    /// Reads the head up to the blank line. `nil` when the client went away, the server
    /// stopped or the head is malformed.
    private func readHead(from fd: Int32, into buffer: inout [UInt8]) -> (ReceivedRequest, bodyStart: Int)? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        // A kept connection's buffer may hold the next request already.
        var headEnd = buffer.firstRange(of: separator)?.lowerBound
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
        let request = ReceivedRequest(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: Data())
        return (request, headEnd + separator.count)
    }

    /// Reads exactly `Content-Length` bytes of body after the head.
    private func readBody(
        of head: ReceivedRequest, from fd: Int32, buffer: inout [UInt8], bodyStart: Int
    ) -> ReceivedRequest? {
        var request = head
        let length = request.header("Content-Length").flatMap { Int($0) } ?? 0
        if length > 0, request.header("Expect")?.lowercased() == "100-continue" {
            _ = send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), index: nil, to: fd)
        }
        while buffer.count - bodyStart < length {
            guard receiveMore(from: fd, into: &buffer) else { return nil }
        }
        request.body = Data(buffer[bodyStart..<(bodyStart + length)])
        return request
    }

    /// Appends whatever the socket has; `false` on end of stream, error or stop.
    private func receiveMore(from fd: Int32, into buffer: inout [UInt8]) -> Bool {
        guard case .ready = waitReadable([fd]) else { return false }
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    /// Writes all of `bytes`; `false` when the client went away first (or the server stopped).
    @discardableResult
    private func send(_ bytes: [UInt8], index: Int?, to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a client that already hung up must not kill the test process
            // with SIGPIPE.
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, min($0.count, 1 << 20), Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else {
                if let index { record(.clientHungUp(index)) }
                return false
            }
            offset += sent
            if let index { state.withLock { $0.bytesSent[index, default: 0] += sent } }
        }
        return true
    }

    private static func encodeResponse(
        status: Int,
        headers: [String: String],
        body: Data,
        closing: Bool
    ) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(body.count)\r\n" + (closing ? "Connection: close\r\n" : "") + "\r\n"
        return Array(head.utf8) + Array(body)
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 102: "Processing"
        case 103: "Early Hints"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
}
