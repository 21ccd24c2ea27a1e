import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The portable transport: moves an `HTTPRequest` over `URLSession` and turns its failures
/// into the three `HTTPTransportError` cases the clients reason about. It needs nothing beyond
/// Foundation, so it is the one to use where libcurl's headers are not at hand, and on Apple
/// platforms.
///
/// On Linux, prefer `CurlTransport` (product `ShoppingAssistantCurl`). swift-corelibs-foundation
/// 6.3.1 has a known crash: when a connection closes in the middle of the answer's header block
/// (a dying proxy or server), it stops the whole process (`Transfer completed, but there's no
/// response.`), which no transport built on it can catch, and every engine in the process goes
/// with it. Fixed upstream (swift-corelibs-foundation#5286), not in 6.3.1. It also keeps about
/// 1.2 KiB of heap per message (five requests) that it never frees.
///
/// The transport does not interpret statuses: a 404 or a 503 is a response like any other,
/// because deciding what a status means is the clients' job (wire.md § Errors). What it does
/// decide is whether a failure happened before anything reached the server (`.cannotConnect`)
/// or after the request may have reached it (`.connectionLost`, `.timedOut`), since that split
/// drives history reconciliation (D5).
///
/// Three things it enforces itself, the same on every platform and as `CurlTransport` does:
/// - **A deadline per request**, on an injectable clock, covering the whole exchange with its
///   redirects. URLSession's request timeout is an idle timer that every received byte resets
///   (a body trickled one byte a second never trips it), and on Linux
///   `timeoutIntervalForResource` is not implemented, so without this a stalled answer to a
///   call that has no engine timeout (a tracking URL, `/visit`) would never end.
/// - **A bound on the body** (`HTTPRequest.maximumResponseBytes`): the body is streamed through
///   a task delegate and the transfer is cancelled once it passes the bound.
/// - **The redirect policy** (`HTTPRequest.redirectPolicy`): URLSession is never allowed to
///   follow a redirect; the transport follows the ones the policy allows with a new request,
///   because swift-corelibs-foundation drops the body of a redirected `POST` and keeps every
///   header, `Authorization` included, whatever the new host.
///
/// Cancelling the calling task cancels the data task at once, which closes the connection.
public final class URLSessionTransport: HTTPTransport, Sendable {
    /// The idle timeout given to URLSession: longer than the engine's own 120 s reply timeout
    /// (D3), so that the engine's injected clock decides and reports `timeout`.
    public static let defaultRequestTimeout: TimeInterval = 130

    /// The total time one exchange may take, redirects included: above every engine timeout
    /// (10 s preparation, 120 s reply), so it only ends calls the engine does not time itself.
    public static let defaultDeadline: Duration = .seconds(130)

    private let session: URLSession
    private let delegate = SessionDelegate()
    private let requestTimeout: TimeInterval
    private let deadline: Duration
    private let clock: any Clock<Duration>

    /// Creates a transport with its own session.
    ///
    /// - Parameters:
    ///   - configuration: The session configuration to start from; `nil` means one without
    ///     cookie, cache or credential store, so nothing silently changes what is sent and
    ///     nothing is written to disk. The transport works on a copy.
    ///   - requestTimeout: How long a request may stay without progress before URLSession
    ///     gives up with `.timedOut`. Keep it above the engine's own timeouts.
    ///   - deadline: How long one exchange may take in all before it fails with `.timedOut`.
    ///   - clock: The clock the deadline runs on; a manual clock in tests.
    public init(
        configuration: URLSessionConfiguration? = nil,
        requestTimeout: TimeInterval = URLSessionTransport.defaultRequestTimeout,
        deadline: Duration = URLSessionTransport.defaultDeadline,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        // A copy, so that the caller's configuration object is not changed behind its back.
        let configuration =
            (configuration?.copy() as? URLSessionConfiguration) ?? SessionConfigurationFactory.make()
        configuration.timeoutIntervalForRequest = requestTimeout
        // The delegate streams each body in and vetoes URLSession's own redirects. (Per-task
        // delegates do not work here: swift-corelibs-foundation calls them only for tasks
        // created with a completion handler, which buffers the whole body.)
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        self.requestTimeout = requestTimeout
        self.deadline = deadline
        self.clock = clock
    }

    deinit {
        // A session keeps its worker resources until invalidated; requests still in flight
        // belong to callers that hold this transport, so they are allowed to finish.
        session.finishTasksAndInvalidate()
    }

    /// Sends the request, follows the redirects its policy allows, and returns whatever
    /// response the server gave, whatever its status.
    ///
    /// - Throws: `HTTPTransportError` when no response arrived or the deadline passed,
    ///   `HTTPResponseTooLarge` when the body passed the request's bound, or
    ///   `CancellationError` when the calling task was cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await TransportDeadline.run(on: clock, deadline: deadline) {
            try await HTTPRedirectFollowing.follow(request) { try await self.exchange($0) }
        }
    }

    // MARK: - One exchange

    private func exchange(_ request: HTTPRequest) async throws -> HTTPResponse {
        let urlRequest = makeURLRequest(request)
        let call = DataTaskCall(limit: request.maximumResponseBytes)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: urlRequest)
                delegate.register(call, for: task)
                call.start(task, continuation: continuation)
            }
        } onCancel: {
            call.cancel()
        }
    }

    private func makeURLRequest(_ request: HTTPRequest) -> URLRequest {
        var urlRequest = URLRequest(
            url: request.url,
            cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: requestTimeout
        )
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        urlRequest.httpBody = request.body
        urlRequest.httpShouldHandleCookies = false
        return urlRequest
    }

    // MARK: - Mapping the outcome

    /// Sorts a URLSession failure into "nothing reached the server", "the request may have
    /// reached it", "the transport's deadline passed" or "the caller cancelled".
    ///
    /// Codes not listed fall into `.connectionLost` on purpose: when the transport cannot tell,
    /// the engine must treat the outcome as uncertain and reconcile (D5) rather than assume
    /// the server saw nothing. That includes `.unknown`, which swift-corelibs-foundation uses
    /// for every libcurl failure it has no mapping for (a reset while the answer is read, a
    /// malformed status line or chunk, a body cut short, a broken gzip stream), and
    /// `.unsupportedURL` for an `http`/`https` URL: that is libcurl refusing an HTTP/0.9
    /// answer (`Received HTTP/0.9 when not allowed`), to a request it had sent.
    static func mapError(_ error: any Error, url: URL? = nil) -> any Error {
        if error is CancellationError || error is HTTPResponseTooLarge {
            return error
        }
        guard let urlError = error as? URLError else {
            return HTTPTransportError.connectionLost(String(describing: error))
        }
        let description = "\(urlError.localizedDescription) (URLError \(urlError.code.rawValue))"
        switch urlError.code {
        case .cancelled:
            return CancellationError()
        case .timedOut:
            return HTTPTransportError.timedOut
        case .unsupportedURL where ["http", "https"].contains(url?.scheme?.lowercased() ?? ""):
            return HTTPTransportError.connectionLost(description)
        case .badURL, .unsupportedURL, .cannotFindHost, .dnsLookupFailed, .cannotConnectToHost,
            .notConnectedToInternet, .internationalRoamingOff, .callIsActive, .dataNotAllowed,
            .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid,
            .clientCertificateRejected, .clientCertificateRequired,
            .appTransportSecurityRequiresSecureConnection, .userAuthenticationRequired:
            return HTTPTransportError.cannotConnect(description)
        default:
            // .networkConnectionLost, .badServerResponse (libcurl's "empty reply from server"
            // on Linux), .cannotParseResponse, .zeroByteResource, .unknown, …
            return HTTPTransportError.connectionLost(description)
        }
    }

    static func response(_ httpResponse: HTTPURLResponse, body: Data) -> HTTPResponse {
        var headers: [String: String] = [:]
        for (name, value) in httpResponse.allHeaderFields {
            headers[String(describing: name)] = String(describing: value)
        }
        return HTTPResponse(status: httpResponse.statusCode, headers: headers, body: body)
    }
}

// MARK: - Bridging one data task

/// The meeting point of the parties that may act in any order on any thread: the awaiting
/// caller (`start`), task cancellation (`cancel`) and URLSession's delegate callbacks, which
/// stream the answer in. Whoever ends the call first decides, and the continuation is resumed
/// exactly once.
///
/// On cancellation, or once the body passes its bound, the caller is resumed at once and the
/// data task cancelled, so nobody waits on the network and the connection closes.
private final class DataTaskCall: Sendable {
    private struct Exchange {
        let task: URLSessionDataTask
        let continuation: CheckedContinuation<HTTPResponse, any Error>
        var response: HTTPURLResponse?
        var body = Data()
    }

    private enum State {
        case notStarted
        case cancelledBeforeStart
        case running(Exchange)
        case finished
    }

    private let state = Locked(State.notStarted)
    private let limit: Int

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    func start(_ task: URLSessionDataTask, continuation: CheckedContinuation<HTTPResponse, any Error>) {
        let wasCancelled = state.withLock { state -> Bool in
            switch state {
            case .notStarted:
                state = .running(Exchange(task: task, continuation: continuation))
                return false
            case .cancelledBeforeStart:
                state = .finished
                return true
            case .running, .finished:
                preconditionFailure("a data task call is started once")
            }
        }
        if wasCancelled {
            continuation.resume(throwing: CancellationError())
        } else {
            task.resume()
        }
    }

    func cancel() {
        finish(with: .failure(CancellationError()), cancelTask: true, ifNotStarted: .cancelledBeforeStart)
    }

    /// Ends the call if it is still running: resumes the caller and, when asked, cancels the
    /// data task (which closes its connection).
    private func finish(
        with result: Result<HTTPResponse, any Error>, cancelTask: Bool, ifNotStarted: State? = nil
    ) {
        let exchange = state.withLock { state -> Exchange? in
            switch state {
            case .notStarted:
                if let ifNotStarted { state = ifNotStarted }
                return nil
            case .running(let exchange):
                state = .finished
                return exchange
            case .cancelledBeforeStart, .finished:
                return nil
            }
        }
        guard let exchange else { return }
        if cancelTask { exchange.task.cancel() }
        exchange.continuation.resume(with: result)
    }

    private func tooLarge(_ response: HTTPURLResponse?) -> Result<HTTPResponse, any Error> {
        .failure(HTTPResponseTooLarge(status: response?.statusCode ?? 0, limit: limit))
    }

    // MARK: Delegate events

    /// Returns false when the transfer is to stop (swift-corelibs-foundation ignores the
    /// disposition; the cancel done here is what stops it).
    func received(_ response: URLResponse) -> Bool {
        let httpResponse = response as? HTTPURLResponse
        // A declared length over the bound ends the call before any of the body is read. (With
        // content decoding the declared length is the encoded one; the decoded body is checked
        // as it arrives.)
        let declaredTooLarge = response.expectedContentLength > Int64(limit)
        state.withLock { state in
            guard case .running(var exchange) = state else { return }
            exchange.response = httpResponse
            // A later response (after a 1xx, say) replaces the earlier one and its body.
            exchange.body = Data()
            state = .running(exchange)
        }
        guard declaredTooLarge else { return true }
        finish(with: tooLarge(httpResponse), cancelTask: true)
        return false
    }

    func received(_ data: Data) {
        let overflow = state.withLock { state -> HTTPURLResponse?? in
            guard case .running(var exchange) = state else { return nil }
            guard exchange.body.count + data.count <= limit else { return .some(exchange.response) }
            // Take the exchange out while appending, so the buffer is not copied.
            state = .finished
            exchange.body.append(data)
            state = .running(exchange)
            return nil
        }
        if let response = overflow {
            finish(with: tooLarge(response), cancelTask: true)
        }
    }

    func completed(_ task: URLSessionTask, error: (any Error)?) {
        let outcome = state.withLock { state -> (Exchange, Result<HTTPResponse, any Error>)? in
            guard case .running(let exchange) = state else { return nil }
            state = .finished
            if let error {
                return (exchange, .failure(URLSessionTransport.mapError(error, url: task.originalRequest?.url)))
            }
            guard let response = exchange.response ?? (task.response as? HTTPURLResponse) else {
                return (
                    exchange,
                    .failure(HTTPTransportError.connectionLost("the server's answer was not an HTTP response"))
                )
            }
            return (exchange, .success(URLSessionTransport.response(response, body: exchange.body)))
        }
        guard let (exchange, result) = outcome else { return }
        exchange.continuation.resume(with: result)
    }
}

/// The session's delegate: hands each task's events to its call, and vetoes every redirect.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the only stored property is a lock-guarded table; the base class (NSObject)
    // is what the compiler cannot see through.
    private let calls = Locked<[Int: DataTaskCall]>([:])

    func register(_ call: DataTaskCall, for task: URLSessionTask) {
        calls.withLock { $0[task.taskIdentifier] = call }
    }

    private func call(for task: URLSessionTask) -> DataTaskCall? {
        calls.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let proceed = call(for: dataTask)?.received(response) ?? false
        completionHandler(proceed ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        call(for: dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let call = calls.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        call?.completed(task, error: error)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Never followed here: the 3xx becomes the response and the transport decides.
        completionHandler(nil)
    }
}
