import Foundation

/// A failed call, with what D5 needs to know: could the server have acted on it?
enum WireFailure: Error, Sendable, Hashable {
    /// The caller's task was cancelled; never reported as a network error (P4).
    case cancelled
    case failed(AssistantError, uncertain: Bool)

    var error: AssistantError? {
        if case .failed(let error, _) = self { return error }
        return nil
    }
}

/// Sends one request through the transport, logs it, and maps every failure to the error
/// table of wire.md § Errors. Shared by both service clients so the mapping is one table.
///
/// Failures are not logged here: the caller logs each one once, where it handles it — an error
/// when nothing else reports it, a note when a result or the chat shows it (B2).
struct WireCall: Sendable {
    let transport: any HTTPTransport
    let logger: AssistantLogger
    let service: String
    /// Sent as `User-Agent` on every request instead of the HTTP library's default (wire.md).
    let userAgent: String

    /// Returns the 2xx response, or the mapped failure.
    func perform(_ request: HTTPRequest) async -> Result<HTTPResponse, WireFailure> {
        var request = request
        request.headers["User-Agent"] = userAgent
        if logger.isEnabled(.debug) {
            logger.log(
                .debug,
                "\(service) → \(request.method.rawValue) \(request.url.absoluteString)\(Self.describe(request.body))")
        }
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch is CancellationError {
            return .failure(.cancelled)
        } catch let error as HTTPTransportError {
            if Task.isCancelled { return .failure(.cancelled) }
            return .failure(Self.map(error))
        } catch let error as HTTPResponseTooLarge {
            // wire.md § Errors: a 2xx we cannot read is `invalid_response`; any other status keeps its meaning.
            if (200..<300).contains(error.status) {
                return .failure(.failed(AssistantError(code: .invalidResponse, message: "\(error)"), uncertain: false))
            }
            return .failure(Self.map(HTTPResponse(status: error.status)))
        } catch {
            if Task.isCancelled { return .failure(.cancelled) }
            return .failure(.failed(AssistantError(code: .network, message: "\(error)"), uncertain: true))
        }
        if logger.isEnabled(.debug) {
            logger.log(.debug, "\(service) ← \(response.status) \(request.url.path)\(Self.describe(response.body))")
        }
        guard (200..<300).contains(response.status) else { return .failure(Self.map(response)) }
        return .success(response)
    }

    static func map(_ error: HTTPTransportError) -> WireFailure {
        switch error {
        case .cannotConnect(let detail):
            return .failed(AssistantError(code: .network, message: "cannot connect: \(detail)"), uncertain: false)
        case .connectionLost(let detail):
            return .failed(AssistantError(code: .network, message: "connection lost: \(detail)"), uncertain: true)
        case .timedOut:
            return .failed(AssistantError(code: .timeout, message: "the transport timed out"), uncertain: true)
        }
    }

    /// wire.md § Errors: status and the body's `error.code` decide the code.
    static func map(_ response: HTTPResponse) -> WireFailure {
        let status = response.status
        let body = try? JSONValue(parsing: response.body)
        let serverCode = body?["error"]?["code"]?.stringValue
        let serverMessage = body?["error"]?["message"]?.stringValue
        var detail = "HTTP \(status)"
        if let serverCode { detail += " \(serverCode)" }
        if let serverMessage { detail += ": \(serverMessage)" }
        let code: AssistantError.Code
        var wait: Duration?
        switch (status, serverCode) {
        case (401, _), (403, _): code = .unauthorized
        case (409, "MESSAGE_ID_CONFLICT"): code = .messageConflict
        case (404, "SHOPPING_HISTORY_NOT_FOUND"): code = .historyUnavailable
        case (429, _):
            code = .rateLimited
            if let retryAfter = response.header("Retry-After") {
                detail += " (Retry-After: \(retryAfter))"
                // delay-seconds (RFC 9110 § 10.2.3); an HTTP-date is left in the message.
                wait = Int(retryAfter.trimmingCharacters(in: .whitespaces)).flatMap { $0 >= 0 ? .seconds($0) : nil }
            }
        default: code = .server
        }
        let uncertain = [502, 503, 504].contains(status)
        return .failed(
            AssistantError(code: code, message: detail, httpStatus: status, retryAfter: wait), uncertain: uncertain)
    }

    private static func describe(_ body: Data?) -> String {
        guard let body, !body.isEmpty else { return "" }
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        return " " + text + (body.count > 4096 ? "…(\(body.count) bytes)" : "")
    }
}

/// Deterministic JSON for requests: sorted keys make retries byte-identical (D6) and
/// transcripts stable.
enum WireJSON {
    /// A request body, as its `JSONBodyWritable` conformance (its only description) writes it.
    static func encode(_ value: some JSONBodyWritable) -> Data {
        var writer = JSONBodyWriter()
        value.write(to: &writer)
        // Copied to a buffer of its own size: `Data(_:)` of the array keeps the writer's spare
        // capacity alive with the body.
        return writer.bytes.withUnsafeBufferPointer { Data(buffer: $0) }
    }

    /// A JSON value written back as bytes (a reply written by hand, fed to the reply decoder),
    /// through `JSONEncoder`: never a request body.
    static func encode(_ value: JSONValue) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only a non-finite number fails, and none is read from JSON; an empty object then.
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// Reads server bytes as JSON; `nil` when they are not JSON.
    static func decode(_ data: Data) -> JSONValue? {
        try? JSONValue(parsing: data)
    }
}
