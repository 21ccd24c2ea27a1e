import CLibcurl
import CLibcurlShim
import Foundation
import ShoppingAssistant

/// One HTTP exchange on one libcurl easy handle: the request's options, the callbacks that
/// stream the answer in under the request's bounds, and the meeting point of the awaiting
/// caller, task cancellation and the driver's thread.
///
/// The easy handle is configured on the caller's thread, before anyone else sees it; from
/// `CurlDriver.start` on, the handle and the answer's state are touched only on the driver's
/// thread (its callbacks run inside `curl_multi_perform`), until the driver has removed the
/// handle from the multi handle. The caller and cancellation meet the driver only in
/// `meeting`, under a lock: whoever ends the exchange first resumes the caller, exactly once.
final class CurlTransfer: @unchecked Sendable {
    // @unchecked: the mutable answer state below is confined to the driver's thread as
    // described above; `meeting` is lock-guarded; the rest is immutable after `init`.

    /// The largest header block (status line, headers and trailers) read from one answer:
    /// libcurl 7.88 bounds each line (100 KiB), not their number. Browsers stop at 256 KiB too.
    static let maximumHeaderBytes = 256 * 1024

    /// The largest allocation made up front for a declared `Content-Length`; a larger body grows
    /// as it arrives, so a lying length costs no memory.
    static let maximumReservation = 1024 * 1024

    /// The easy handle, made for this transfer or a spare of the driver's; `nil` only when
    /// libcurl could not make one. Once the driver has taken it back (`finish(_:handingBack:)`,
    /// `handBack()`), it is the driver's again, to reset and reuse.
    let easy: UnsafeMutableRawPointer?
    let limit: Int
    /// libcurl's total timeout for the transfer (the transport's deadline), if it keeps one.
    private let timeout: Duration?
    private let headerList: UnsafeMutablePointer<curl_slist>?
    private let requestBody: UnsafeMutableRawBufferPointer?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    // MARK: The answer (driver's thread only)

    /// The request has reached the connection: from here on a failure is uncertain (D5).
    private var requestStarted = false
    private var headers: [String: String] = [:]
    /// Lower-cased name → the name as first received, to join repeated headers.
    private var headerNames: [String: String] = [:]
    private var lastHeaderName: String?
    private var headerBytes = 0
    /// The final (non-1xx) header block has ended; what follows are the body and trailers.
    private var finalHeadersSeen = false
    private var status = 0
    private var body = Data()
    private var abort: Abort?
    /// The final answer's declared `Content-Length` of an unencoded body, once its headers
    /// have ended: when that many bytes have arrived, the answer is complete.
    private var declaredLength: Int?

    private enum Abort {
        case tooLarge(status: Int)
        case headersTooLarge
    }

    // MARK: The caller

    private enum Outcome {
        case notStarted
        case cancelledBeforeStart
        case waiting(CheckedContinuation<HTTPResponse, any Error>)
        case finished
    }

    /// Where the caller, cancellation and the driver meet: how the exchange ended, and whether
    /// the driver has taken the handle back (the transfer then no longer cleans it up).
    private struct Meeting {
        var outcome = Outcome.notStarted
        var handleTakenBack = false
    }

    private let meeting = Locked(Meeting())

    /// Configures `easy` (a new handle, or a spare one reset) for `request`; the transfer owns
    /// it from here on, until the driver takes it back.
    ///
    /// - Throws: `HTTPTransportError.cannotConnect` when the request cannot be sent as given
    ///   (a header with a line break in it, or an option libcurl refuses): nothing was sent.
    init(_ request: HTTPRequest, easy: UnsafeMutableRawPointer?, proxy: CurlTransport.Proxy, timeout: Duration? = nil)
        throws
    {
        limit = max(0, request.maximumResponseBytes)
        self.timeout = timeout
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        self.easy = easy

        let (list, invalidHeader) = Self.headerList(for: request)
        headerList = list

        if request.method == .post, let bytes = request.body, !bytes.isEmpty {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
            buffer.copyBytes(from: bytes)
            requestBody = buffer
        } else {
            requestBody = nil
        }

        guard let easy else { throw HTTPTransportError.cannotConnect("libcurl could not create a handle") }
        if let invalidHeader { throw HTTPTransportError.cannotConnect("not sent: \(invalidHeader)") }
        if let failure = configure(easy, request, proxy: proxy) {
            throw HTTPTransportError.cannotConnect("not sent: libcurl refused an option: \(failure)")
        }
    }

    deinit {
        // The driver has removed the handle from the multi handle (or never added it), and
        // keeps it if it took it back.
        if let easy, !meeting.withLock({ $0.handleTakenBack }) { curl_easy_cleanup(easy) }
        curl_slist_free_all(headerList)
        requestBody?.deallocate()
        errorBuffer.deallocate()
    }

    // MARK: - Options

    /// The protocols a request, or a redirect libcurl saw, may use. (libcurl never follows a
    /// redirect here; the transport does, under the request's policy.)
    static let protocols = "http,https"

    /// The only content coding offered: decoded by libcurl as the body streams, and counted
    /// after decoding against the request's bound, so a gzip bomb stops at the bound.
    static let acceptedEncoding = "gzip"

    /// The header lines as libcurl takes them, in one list: `Name: value`, `Name;` for an empty
    /// value (`Name:` would delete the header), and `Name:` to suppress a header libcurl adds on
    /// its own that the request did not ask for. `invalid` says why the request cannot be sent
    /// as given (a header that would break the framing); the list is then incomplete.
    ///
    /// Each line is written once, as bytes, into a buffer on the stack that libcurl copies: no
    /// string is built, trimmed or joined on the way.
    static func headerList(for request: HTTPRequest) -> (list: UnsafeMutablePointer<curl_slist>?, invalid: String?) {
        var list: UnsafeMutablePointer<curl_slist>?
        var invalid: String?
        func append(_ line: UnsafePointer<CChar>?) {
            guard invalid == nil else { return }
            guard let line else {
                invalid = "a header name or value with a line break or NUL"
                return
            }
            guard let appended = curl_slist_append(list, line) else {
                invalid = "out of memory for the header list"
                return
            }
            list = appended
        }
        var hasContentType = false
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            // Framing is the transport's: libcurl computes the length of the bytes it sends.
            if isNamed(name, "Content-Length") || isNamed(name, "Transfer-Encoding") { continue }
            if isNamed(name, "Content-Type") { hasContentType = true }
            withLine(name, value, append)
        }
        // libcurl would wait a second for `100 Continue` before a large body, on the wall clock.
        append("Expect:")
        if request.method == .post, !hasContentType {
            // Not libcurl's `application/x-www-form-urlencoded`: the body is sent as it is.
            append("Content-Type:")
        }
        return (list, invalid)
    }

    /// Whether `name` is `field` as HTTP compares names; most names differ in length already.
    private static func isNamed(_ name: String, _ field: String) -> Bool {
        name.utf8.count == field.utf8.count && HTTPFieldName.matches(name, field)
    }

    /// Calls `body` with the NUL-terminated line for one header, its value without the spaces
    /// and tabs around it, or with `nil` when the name is not a token or the value holds a line
    /// break or a NUL.
    private static func withLine(_ name: String, _ value: String, _ body: (UnsafePointer<CChar>?) -> Void) {
        var name = name
        var value = value
        name.withUTF8 { name in
            value.withUTF8 { value in
                guard isToken(name), !value.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                    return body(nil)
                }
                let trimmed = UnsafeBufferPointer(rebasing: httpTrimmedBytes(value))
                let separator: StaticString = trimmed.isEmpty ? ";" : ": "
                let count = name.count + separator.utf8CodeUnitCount + trimmed.count + 1
                withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { line in
                    var position = 0
                    func put(_ bytes: UnsafeRawBufferPointer) {
                        UnsafeMutableRawBufferPointer(rebasing: line[position..<position + bytes.count])
                            .copyMemory(from: bytes)
                        position += bytes.count
                    }
                    put(UnsafeRawBufferPointer(name))
                    put(UnsafeRawBufferPointer(start: separator.utf8Start, count: separator.utf8CodeUnitCount))
                    put(UnsafeRawBufferPointer(trimmed))
                    line[position] = 0
                    body(line.baseAddress.map { UnsafePointer($0.bindMemory(to: CChar.self, capacity: count)) })
                }
            }
        }
    }

    /// An HTTP field name (RFC 9110 `token`).
    private static func isToken(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        !name.isEmpty
            && name.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                // ! # $ % & ' * + - . ^ _ ` | ~
                case 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E:
                    return true
                default:
                    return false
                }
            }
    }

    /// Sets every option; returns the first libcurl refused, or `nil`.
    private func configure(_ easy: UnsafeMutableRawPointer, _ request: HTTPRequest, proxy: CurlTransport.Proxy)
        -> String?
    {
        let context = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        var failure: String?
        func check(_ code: CURLcode, _ what: String) {
            if code != CURLE_OK, failure == nil { failure = "\(what) (\(String(cString: curl_easy_strerror(code))))" }
        }
        // libcurl copies a string option. `withCString` lends a short string's bytes from the
        // stack, where passing the `String` would copy it to the heap first.
        func set(_ option: CURLoption, _ value: String, _ what: String) {
            check(value.withCString { cst_easy_set_string(easy, option, $0) }, what)
        }
        set(CURLOPT_URL, request.url.absoluteString, "URL")
        set(CURLOPT_PROTOCOLS_STR, Self.protocols, "protocols")
        set(CURLOPT_REDIR_PROTOCOLS_STR, Self.protocols, "redirect protocols")
        check(cst_easy_set_long(easy, CURLOPT_FOLLOWLOCATION, 0), "no redirects")
        // The URL as the client built it: no `/../` squashing.
        check(cst_easy_set_long(easy, CURLOPT_PATH_AS_IS, 1), "path as is")
        check(cst_easy_set_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)), "HTTP/2 over TLS")
        check(cst_easy_set_long(easy, CURLOPT_HTTP09_ALLOWED, 0), "no HTTP/0.9")
        // Several threads: no signals (libcurl would use SIGALRM for DNS timeouts).
        check(cst_easy_set_long(easy, CURLOPT_NOSIGNAL, 1), "no signals")
        check(cst_easy_set_long(easy, CURLOPT_TCP_KEEPALIVE, 1), "TCP keep-alive")
        // TLS: always verified, against the system's CA store (libcurl's built-in default).
        check(cst_easy_set_long(easy, CURLOPT_SSL_VERIFYPEER, 1), "verify the peer")
        check(cst_easy_set_long(easy, CURLOPT_SSL_VERIFYHOST, 2), "verify the host name")
        check(cst_easy_set_long(easy, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2)), "TLS 1.2 at least")
        set(CURLOPT_ACCEPT_ENCODING, Self.acceptedEncoding, "content coding")
        switch proxy {
        case .environment:
            break  // libcurl reads http_proxy, https_proxy, all_proxy and no_proxy itself.
        case .none:
            set(CURLOPT_PROXY, "", "no proxy")
        case .url(let url, let bypass):
            set(CURLOPT_PROXY, url.absoluteString, "proxy")
            set(CURLOPT_NOPROXY, bypass.joined(separator: ","), "proxy bypass")
        }
        if let timeout {
            // Rounded up: 0 would mean no timeout at all. (A deadline of decades is as good as
            // none, and must not overflow.)
            let (whole, attoseconds) = timeout.components
            let seconds = min(whole, 1_000_000_000)
            let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            check(cst_easy_set_long(easy, CURLOPT_TIMEOUT_MS, Int(max(1, milliseconds))), "deadline")
        }
        // A proxy's `200 Connection established` is not the answer.
        check(cst_easy_set_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1), "proxy headers")

        switch request.method {
        case .get:
            check(cst_easy_set_long(easy, CURLOPT_HTTPGET, 1), "GET")
        case .post:
            check(cst_easy_set_long(easy, CURLOPT_POST, 1), "POST")
            check(cst_easy_set_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(requestBody?.count ?? 0)), "size")
            check(cst_easy_set_pointer(easy, CURLOPT_POSTFIELDS, requestBody?.baseAddress), "body")
        }
        check(cst_easy_set_list(easy, CURLOPT_HTTPHEADER, headerList), "headers")

        check(cst_easy_set_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), "error buffer")
        check(cst_easy_set_pointer(easy, CURLOPT_PRIVATE, context), "private")
        check(cst_easy_set_data_function(easy, CURLOPT_WRITEFUNCTION, curlTransferWrite), "write function")
        check(cst_easy_set_pointer(easy, CURLOPT_WRITEDATA, context), "write data")
        check(cst_easy_set_data_function(easy, CURLOPT_HEADERFUNCTION, curlTransferHeader), "header function")
        check(cst_easy_set_pointer(easy, CURLOPT_HEADERDATA, context), "header data")
        check(cst_easy_set_prereq_function(easy, curlTransferPrereq), "prereq function")
        check(cst_easy_set_pointer(easy, CURLOPT_PREREQDATA, context), "prereq data")
        return failure
    }

    // MARK: - The caller's side

    /// Hands the caller's continuation over; `false` when the task was cancelled first (the
    /// caller has then been resumed with `CancellationError` and the driver is not involved).
    func attach(_ continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
        let cancelled = meeting.withLock { meeting -> Bool in
            switch meeting.outcome {
            case .notStarted:
                meeting.outcome = .waiting(continuation)
                return false
            case .cancelledBeforeStart:
                meeting.outcome = .finished
                return true
            case .waiting, .finished:
                preconditionFailure("a transfer is attached once")
            }
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    /// Resumes the caller with `CancellationError` at once. `true` when the transfer was with
    /// the driver, which must now remove its handle.
    func cancel() -> Bool {
        let continuation = meeting.withLock { meeting -> CheckedContinuation<HTTPResponse, any Error>? in
            switch meeting.outcome {
            case .notStarted:
                meeting.outcome = .cancelledBeforeStart
                return nil
            case .waiting(let continuation):
                meeting.outcome = .finished
                return continuation
            case .cancelledBeforeStart, .finished:
                return nil
            }
        }
        continuation?.resume(throwing: CancellationError())
        return continuation != nil
    }

    /// Whether the caller has been answered (or gave up).
    var isFinished: Bool {
        meeting.withLock { if case .finished = $0.outcome { true } else { false } }
    }

    /// Resumes the caller, if it is still waiting. With `handingBack`, the driver (which has
    /// removed the handle from the multi handle) takes the handle back first, so that it can
    /// reset it for another transfer once the caller is on its way.
    func finish(_ result: Result<HTTPResponse, any Error>, handingBack: Bool = false) {
        let continuation = meeting.withLock { meeting -> CheckedContinuation<HTTPResponse, any Error>? in
            if handingBack { meeting.handleTakenBack = true }
            guard case .waiting(let continuation) = meeting.outcome else { return nil }
            meeting.outcome = .finished
            return continuation
        }
        continuation?.resume(with: result)
    }

    /// The driver, which has removed the handle from the multi handle, takes it back: the
    /// transfer no longer cleans it up.
    func handBack() {
        meeting.withLock { $0.handleTakenBack = true }
    }

    // MARK: - The driver's side

    /// The transfer ended with `code` (the driver has removed its handle): the response, or
    /// why there is none.
    func result(of code: CURLcode) -> Result<HTTPResponse, any Error> {
        switch abort {
        case .tooLarge(let status)?:
            return .failure(HTTPResponseTooLarge(status: status, limit: limit))
        case .headersTooLarge?:
            return .failure(
                HTTPTransportError.connectionLost(
                    "the answer's header block is larger than \(Self.maximumHeaderBytes / 1024) KiB"))
        case nil:
            break
        }
        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            return .failure(
                CurlFailure.error(
                    code: code, requestStarted: requestStarted, keepsDeadline: timeout != nil, message: message))
        }
        guard finalHeadersSeen, (100...999).contains(status) else {
            return .failure(HTTPTransportError.connectionLost("the server's answer was not an HTTP response"))
        }
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    /// For `CurlFailure`: the failure happened after this transfer had reached a connection.
    fileprivate func requestIsStarting() { requestStarted = true }

    fileprivate func received(body bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= limit else {
            abort = .tooLarge(status: status)
            return false
        }
        body.append(contentsOf: bytes)
        if let declaredLength, body.count == declaredLength { finishEarly() }
        return true
    }

    /// One header line as libcurl hands it over: a status line, a header, the blank line that
    /// ends a block, or a trailer. Read as bytes: the line's framing and the names are ASCII,
    /// and only a name and a value become text.
    fileprivate func received(headerLine bytes: UnsafeRawBufferPointer) -> Bool {
        headerBytes += bytes.count
        guard headerBytes <= Self.maximumHeaderBytes else {
            abort = .headersTooLarge
            return false
        }
        guard !finalHeadersSeen else { return true }  // trailers: not part of the answer's headers
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        let line = bytes[..<end]
        guard let first = line.first else { return headersEnded() }
        if line.starts(with: "HTTP/".utf8) {
            // A new block (after a `1xx`): only the last one is the answer's.
            headers = [:]
            headerNames = [:]
            lastHeaderName = nil
            return true
        }
        if isOptionalWhitespace(first) {
            // An obsolete folded continuation of the previous header.
            if let name = lastHeaderName, let value = headers[name] {
                headers[name] = value + " " + httpTrimmed(line)
            }
            return true
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return true }
        let name = String(decoding: line[..<colon], as: UTF8.self)
        let value = httpTrimmed(line[(colon + 1)...])
        if headers.isEmpty {
            headers.reserveCapacity(Self.expectedHeaderCount)
            headerNames.reserveCapacity(Self.expectedHeaderCount)
        }
        let lowered = name.lowercased()
        let key: String
        if let known = headerNames[lowered] {
            key = known
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        } else {
            key = name
            headerNames[lowered] = name
            headers[key] = value
        }
        lastHeaderName = key
        return true
    }

    /// Room made for an answer's headers at its first one, so the tables do not grow one by one.
    private static let expectedHeaderCount = 8

    /// The blank line after a header block: a `1xx` block is forgotten; the final one fixes the
    /// status, and a declared length over the bound ends the transfer before the body.
    private func headersEnded() -> Bool {
        guard let easy else { return false }
        var code = 0
        _ = cst_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &code)
        guard code >= 200 || code < 100 else { return true }
        status = code
        finalHeadersSeen = true
        let coding = header("Content-Encoding")?.lowercased() ?? "identity"
        let bodiless = status == 204 || status == 304
        if let declared = header("Content-Length").flatMap({ Int($0) }), declared >= 0, !bodiless, coding == "identity"
        {
            guard declared <= limit else {
                abort = .tooLarge(status: status)
                return false
            }
            body.reserveCapacity(min(declared, Self.maximumReservation))
            // A chunked body's length is its chunks', whatever `Content-Length` says; and only
            // a status `result(of:)` would accept may be answered early.
            if header("Transfer-Encoding") == nil, (100...999).contains(status) { declaredLength = declared }
            if declaredLength == 0 { finishEarly() }
        }
        return true
    }

    /// Every byte the answer declared is here: the caller has its response now, while libcurl
    /// still closes or keeps the connection and reports the transfer done (after which this
    /// transfer's handle is taken back as usual). libcurl never delivers more than the declared
    /// length; what it may still report after the last byte (over HTTP/2, a stream reset or
    /// trailers over the header bound) no longer fails a call that has its whole answer.
    private func finishEarly() {
        finish(.success(HTTPResponse(status: status, headers: headers, body: body)))
    }

    private func header(_ name: String) -> String? {
        headerNames[name.lowercased()].flatMap { headers[$0] }
    }
}

// MARK: - libcurl's callbacks (on the driver's thread, inside `curl_multi_perform`)

/// Without the spaces and tabs around it, HTTP's optional whitespace (RFC 9110, 5.6.3):
/// nothing else, and without a trip through `NSString` for every header line.
private func httpTrimmed<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> String {
    String(decoding: httpTrimmedBytes(bytes), as: UTF8.self)
}

/// The same bytes, without the spaces and tabs around them.
private func httpTrimmedBytes<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
    guard let start = bytes.firstIndex(where: { !isOptionalWhitespace($0) }),
        let last = bytes.lastIndex(where: { !isOptionalWhitespace($0) })
    else { return bytes[bytes.endIndex...] }
    return bytes[start...last]
}

/// A space or a tab: HTTP's optional whitespace, and the start of an obsolete folded line.
private func isOptionalWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

private func transfer(_ context: UnsafeMutableRawPointer?) -> CurlTransfer? {
    context.map { Unmanaged<CurlTransfer>.fromOpaque($0).takeUnretainedValue() }
}

private let curlTransferWrite: cst_data_function = { bytes, size, count, context in
    let total = size * count
    guard let transfer = transfer(context) else { return 0 }
    let accepted = transfer.received(body: UnsafeRawBufferPointer(start: bytes, count: total))
    // Anything but `total` aborts the transfer (`CURLE_WRITE_ERROR`).
    return accepted ? total : (total == 0 ? 1 : 0)
}

private let curlTransferHeader: cst_data_function = { bytes, size, count, context in
    let total = size * count
    guard let transfer = transfer(context) else { return 0 }
    let accepted = transfer.received(headerLine: UnsafeRawBufferPointer(start: bytes, count: total))
    return accepted ? total : (total == 0 ? 1 : 0)
}

private let curlTransferPrereq: cst_prereq_function = { context, _, _, _, _ in
    transfer(context)?.requestIsStarting()
    return Int32(CURL_PREREQFUNC_OK)
}
