import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The production transport: moves an `HTTPRequest` over `URLSession` and turns its
/// failures into the three `HTTPTransportError` cases the clients reason about.
///
/// The transport does not interpret statuses: a 404 or a 503 is a response like any other,
/// because deciding what a status means is the clients' job (wire.md § Errors). What it does
/// decide is whether a failure happened before anything reached the server (`.cannotConnect`)
/// or after the request may have reached it (`.connectionLost`, `.timedOut`), since that split
/// drives history reconciliation (D5).
///
/// It uses the completion-handler `dataTask` API, bridged to `async` by hand, because the
/// `async` conveniences of `URLSession` are incomplete in swift-corelibs-foundation on Linux
/// and this way cancellation reaches the underlying task on every platform.
public final class URLSessionTransport: HTTPTransport, Sendable {
    /// The request timeout used when none is given: longer than the engine's own 120 s reply
    /// timeout (D3), so that the engine's injected clock decides and reports `timeout`, and this
    /// timeout only catches a connection the engine has stopped watching.
    public static let defaultRequestTimeout: TimeInterval = 130

    private let session: URLSession
    private let requestTimeout: TimeInterval

    /// Creates a transport with its own session.
    ///
    /// - Parameters:
    ///   - configuration: The session configuration to start from; `nil` means an ephemeral
    ///     one, so that no cookie, cache or credential store silently changes what is sent.
    ///     The transport works on a copy and owns the session it makes from it.
    ///   - requestTimeout: How long a request may stay without progress before URLSession
    ///     gives up with `.timedOut`. Keep it above the engine's own timeouts (see
    ///     `defaultRequestTimeout`).
    public init(
        configuration: URLSessionConfiguration? = nil,
        requestTimeout: TimeInterval = URLSessionTransport.defaultRequestTimeout
    ) {
        // A copy, so that the caller's configuration object is not changed behind its back.
        let configuration =
            (configuration?.copy() as? URLSessionConfiguration) ?? Self.ephemeralConfiguration()
        configuration.timeoutIntervalForRequest = requestTimeout
        self.session = URLSession(configuration: configuration)
        self.requestTimeout = requestTimeout
    }

    deinit {
        // A session keeps its worker resources until invalidated; requests still in flight
        // belong to callers that hold this transport, so they are allowed to finish.
        session.finishTasksAndInvalidate()
    }

    /// Sends the request and returns whatever response the server gave, whatever its status.
    ///
    /// - Throws: `HTTPTransportError` when no response arrived, or `CancellationError` when the
    ///   calling task was cancelled; cancelling also cancels the underlying data task, so the
    ///   connection is closed rather than left to run to its timeout.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let urlRequest = makeURLRequest(request)
        let call = DataTaskCall()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    call.complete(with: Self.outcome(data: data, response: response, error: error))
                }
                call.start(task, continuation: continuation)
            }
        } onCancel: {
            call.cancel()
        }
    }

    // MARK: - Building the request

    private static func ephemeralConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
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
        return urlRequest
    }

    // MARK: - Mapping the outcome

    private static func outcome(
        data: Data?,
        response: URLResponse?,
        error: (any Error)?
    ) -> Result<HTTPResponse, any Error> {
        if let error {
            return .failure(mapError(error))
        }
        guard let httpResponse = response as? HTTPURLResponse else {
            return .failure(
                HTTPTransportError.connectionLost("the server's answer was not an HTTP response")
            )
        }
        var headers: [String: String] = [:]
        for (name, value) in httpResponse.allHeaderFields {
            headers[String(describing: name)] = String(describing: value)
        }
        return .success(
            HTTPResponse(status: httpResponse.statusCode, headers: headers, body: data ?? Data())
        )
    }

    /// Sorts a URLSession failure into "nothing reached the server", "the request may have
    /// reached it", "the transport's deadline passed" or "the caller cancelled".
    ///
    /// Codes not listed fall into `.connectionLost` on purpose: when the transport cannot tell,
    /// the engine must treat the outcome as uncertain and reconcile (D5) rather than assume
    /// the server saw nothing. That includes `.unknown`, which swift-corelibs-foundation uses
    /// for every libcurl failure it has no mapping for.
    static func mapError(_ error: any Error) -> any Error {
        if error is CancellationError {
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
}

// MARK: - Bridging one data task

/// The meeting point of three parties that may act in any order on any thread: the awaiting
/// caller (`start`), task cancellation (`cancel`) and URLSession's completion handler
/// (`complete`). Whoever comes first decides, and the continuation is resumed exactly once.
///
/// On cancellation the caller is resumed at once rather than when URLSession reports back,
/// so a cancelled caller never waits on the network.
private final class DataTaskCall: Sendable {
    private enum State {
        case notStarted
        case cancelledBeforeStart
        case running(URLSessionDataTask, CheckedContinuation<HTTPResponse, any Error>)
        case finished
    }

    private let state = Locked(State.notStarted)

    func start(
        _ task: URLSessionDataTask,
        continuation: CheckedContinuation<HTTPResponse, any Error>
    ) {
        let wasCancelled = state.withLock { state -> Bool in
            switch state {
            case .notStarted:
                state = .running(task, continuation)
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
        let running = state.withLock {
            state -> (URLSessionDataTask, CheckedContinuation<HTTPResponse, any Error>)? in
            switch state {
            case .notStarted:
                state = .cancelledBeforeStart
                return nil
            case .running(let task, let continuation):
                state = .finished
                return (task, continuation)
            case .cancelledBeforeStart, .finished:
                return nil
            }
        }
        guard let (task, continuation) = running else { return }
        task.cancel()
        continuation.resume(throwing: CancellationError())
    }

    func complete(with result: Result<HTTPResponse, any Error>) {
        let continuation = state.withLock {
            state -> CheckedContinuation<HTTPResponse, any Error>? in
            guard case .running(_, let continuation) = state else { return nil }
            state = .finished
            return continuation
        }
        continuation?.resume(with: result)
    }
}
