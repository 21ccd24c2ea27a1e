import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport
import Testing

/// Every way the loopback server misbehaves on purpose, with what each transport
/// (`URLSessionTransport`, `CurlTransport`) makes of it on this platform. The transport tests
/// check `transportOutcome` against the real transports; the engine's socket fault matrix
/// builds the documented outcome on top of it.
enum LoopbackFault: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case valid
    // The connection.
    case refused, resetBeforeBody, resetAfterBody, closeWithoutAnswer, closeMidStatusLine, closeMidHeaders
    case closeMidBody, silenceBeforeHeaders, headersThenSilence, trickledBody, trickledOneBytePerSecond
    // Framing.
    case contentLengthLarger, contentLengthSmaller, chunked, chunkedBadSize, chunkedCutShort
    case conflictingContentLengths, http10CloseDelimited, http11CloseDelimited, continue100, earlyHints103
    case informationalThenClose, hugeHeader, headerLineOneMegabyte, headerFlood, chunkSizeOverflow, http09
    // Every status class.
    case status201, status204, status299, status300, status304, status400, status401, status403IPNotAllowed
    case status404, status404HistoryNotFound, status409Conflict, status418, status429, status500, status502
    case status503, status504, status599
    // Redirects.
    case redirect301SameHost, redirect302SameHost, redirect303SameHost, redirect307SameHost, redirect308SameHost
    case redirect302OtherHost, redirect307OtherHost, redirectLoop, redirectWithoutLocation
    // Bodies.
    case malformedJSON, truncatedJSON, wrongFieldTypes, emptyBody, invalidUTF8, byteOrderMark, gzip, gzipCorrupt
    case htmlBody, deeplyNested, fiveMegabytes, fiftyMegabytes, fiftyMegabytesChunked, gzipBomb

    var testDescription: String { rawValue }

    /// The faults a transport survives on this toolchain. `CurlTransport` survives every one.
    /// swift-corelibs-foundation 6.3.1 stops the process (`fatalError("Transfer completed, but
    /// there's no response.")`) when a connection closes after part of the header block:
    /// libcurl reports the transfer complete and no response was ever built. Fixed upstream
    /// (swiftlang/swift-corelibs-foundation#5286, February 2026); `PartialHeadersCrashTests`
    /// runs it in a child process and fails once the fix arrives.
    static func survived(by transport: TransportKind) -> [LoopbackFault] {
        switch transport {
        case .urlSession: allCases.filter { $0 != .closeMidHeaders }
        case .curl: allCases
        }
    }

    /// The header that tells the loopback backend which fault to play on a request.
    static let header = "X-Loopback-Fault"
    /// Marks the second hop of a same-host redirect, which is answered normally.
    static let redirectedMarker = "redirected=1"

    // MARK: - What the server does

    /// What the server needs to know to play a fault on one request.
    struct Context: Sendable {
        /// The answer the endpoint would have given.
        var valid: LoopbackAnswer
        /// The request's target (path and query), for same-host redirects.
        var target: String
        /// The second host's base URL, for cross-host redirects.
        var otherHost: URL
        /// The error body a status fault carries, in the shape of wire.md § Error bodies.
        func errorBody(_ code: String) -> Data {
            Data(#"{"error":{"code":"\#(code)","message":"server says no"}}"#.utf8)
        }
    }

    /// Bytes a trickled answer leads with: JSON allows whitespace before the value, so this
    /// answer is valid, only far too slow to ever finish.
    /// (30,000 bytes at 20 ms each: ten minutes, and still under the smallest body bound.)
    static let trickle = Data(repeating: UInt8(ascii: " "), count: 30_000)
    static let fiftyMegabyteCount = 50 * 1024 * 1024

    /// The reply that plays this fault. `refused` never reaches a server.
    func reply(_ context: Context) -> LoopbackHTTPServer.Reply {
        typealias Server = LoopbackHTTPServer
        let valid = context.valid
        let body = valid.body
        // Every answer says it closes the connection, as the server does: no client keeps it
        // for a next request that would meet a closing socket.
        let json = ("Content-Type", valid.contentType)
        let closing = ("Connection", "close")
        func raw(_ head: Data, _ body: Data = Data(), then last: Server.Step = .close) -> Server.Reply {
            .script([.send(head + body), last])
        }
        func status(_ code: Int, _ body: Data = Data(), headers: [String: String] = [:]) -> Server.Reply {
            .answer(
                status: code, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: body)
        }
        func redirect(_ code: Int, to location: String?) -> Server.Reply {
            .answer(status: code, headers: location.map { ["Location": $0] } ?? [:], body: Data("moved".utf8))
        }
        let sameHost = context.target + (context.target.contains("?") ? "&" : "?") + Self.redirectedMarker
        let otherHost = context.otherHost.absoluteString + context.target
        switch self {
        case .valid: return valid.reply
        case .refused: return .drop
        case .resetBeforeBody: return .resetBeforeBody
        case .resetAfterBody: return .script([.reset])
        case .closeWithoutAnswer: return .script([.close])
        case .closeMidStatusLine: return .script([.send(Data("HTTP/1.1 20".utf8)), .close])
        case .closeMidHeaders:
            return .script([
                .send(Data("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Le".utf8)), .close,
            ])
        case .closeMidBody:
            return raw(
                Server.head(status: 200, headers: [json, closing, ("Content-Length", "\(body.count + 10)")]), body)
        case .silenceBeforeHeaders: return .script([.waitForHangUp])
        case .headersThenSilence:
            // The declared body never comes (even when the valid one is empty).
            return raw(
                Server.head(status: 200, headers: [json, closing, ("Content-Length", "\(body.count + 10)")]),
                then: .waitForHangUp)
        case .trickledBody:
            let length = Self.trickle.count + body.count
            return .script([
                .send(Server.head(status: 200, headers: [json, closing, ("Content-Length", "\(length)")])),
                .trickle(Self.trickle, interval: .milliseconds(20)), .send(body),
            ])
        case .trickledOneBytePerSecond:
            // The whole answer, status line first, a byte a second: every byte resets an idle
            // timer, so only a total deadline ends it.
            return .script([.trickle(valid.encoded, interval: .seconds(1))])
        case .contentLengthLarger:
            return raw(
                Server.head(status: 200, headers: [json, closing, ("Content-Length", "\(body.count * 2 + 10)")]), body)
        case .contentLengthSmaller:
            return raw(
                Server.head(status: 200, headers: [json, closing, ("Content-Length", "\(body.count / 2)")]), body)
        case .chunked:
            return raw(
                Server.head(status: 200, headers: [json, closing, ("Transfer-Encoding", "chunked")]),
                Server.chunked(body, chunkSize: 7))
        case .chunkedBadSize:
            return raw(
                Server.head(status: 200, headers: [json, closing, ("Transfer-Encoding", "chunked")]),
                Data("zz\r\n{}\r\n0\r\n\r\n".utf8))
        case .chunkedCutShort:
            return raw(
                Server.head(status: 200, headers: [json, closing, ("Transfer-Encoding", "chunked")]),
                Data("400\r\n{\"a\":".utf8))
        case .conflictingContentLengths:
            let headers = [json, closing, ("Content-Length", "\(body.count)"), ("Content-Length", "\(body.count + 5)")]
            return raw(Server.head(status: 200, headers: headers), body)
        case .http10CloseDelimited:
            return raw(Server.head(status: 200, version: "HTTP/1.0", headers: [json, closing]), body)
        case .http11CloseDelimited:
            return raw(Server.head(status: 200, headers: [json, closing]), body)
        case .continue100:
            return raw(Server.head(status: 100) + valid.encoded)  // `encoded` says it closes
        case .earlyHints103:
            return raw(Server.head(status: 103, headers: [("Link", "</style.css>; rel=preload")]) + valid.encoded)
        case .informationalThenClose: return raw(Server.head(status: 100))
        case .hugeHeader:
            let headers = [
                json, closing, ("X-Padding", String(repeating: "h", count: 300_000)),
                ("Content-Length", "\(body.count)"),
            ]
            return raw(Server.head(status: 200, headers: headers), body)
        case .headerLineOneMegabyte:
            let headers = [
                json, closing, ("X-Padding", String(repeating: "h", count: 1024 * 1024)),
                ("Content-Length", "\(body.count)"),
            ]
            return raw(Server.head(status: 200, headers: headers), body)
        case .headerFlood:
            // Each line short, 600 KB in all: a bound on each line does not stop it.
            let flood = (0..<6_000).map { ("X-Flood-\($0)", String(repeating: "f", count: 88)) }
            return raw(
                Server.head(status: 200, headers: [json, closing] + flood + [("Content-Length", "\(body.count)")]), body
            )
        case .chunkSizeOverflow:
            return raw(
                Server.head(status: 200, headers: [json, closing, ("Transfer-Encoding", "chunked")]),
                Data("1FFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n".utf8))
        case .http09:
            // No status line, no headers: the body alone, then the close.
            return raw(body)
        case .status201: return status(201, body)
        case .status204: return .answer(status: 204)
        case .status299: return status(299, body)
        case .status300: return status(300, Data("choose".utf8))
        case .status304: return .answer(status: 304)
        case .status400: return status(400, context.errorBody("BAD_REQUEST"))
        case .status401: return status(401)
        case .status403IPNotAllowed: return status(403, context.errorBody("IP_NOT_ALLOWED"))
        case .status404: return .answer(status: 404, text: "Not Found")
        case .status404HistoryNotFound: return status(404, context.errorBody("SHOPPING_HISTORY_NOT_FOUND"))
        case .status409Conflict: return status(409, context.errorBody("MESSAGE_ID_CONFLICT"))
        case .status418: return .answer(status: 418, text: "I'm a teapot")
        case .status429: return status(429, context.errorBody("RATE_LIMITED"), headers: ["Retry-After": "30"])
        case .status500: return .answer(status: 500, text: "Internal Server Error")
        case .status502: return .answer(status: 502, text: "<html><body>Bad Gateway</body></html>")
        case .status503: return status(503, context.errorBody("UNAVAILABLE"))
        case .status504: return .answer(status: 504)
        case .status599: return .answer(status: 599, text: "network read timeout")
        case .redirect301SameHost: return redirect(301, to: sameHost)
        case .redirect302SameHost: return redirect(302, to: sameHost)
        case .redirect303SameHost: return redirect(303, to: sameHost)
        case .redirect307SameHost: return redirect(307, to: sameHost)
        case .redirect308SameHost: return redirect(308, to: sameHost)
        case .redirect302OtherHost: return redirect(302, to: otherHost)
        case .redirect307OtherHost: return redirect(307, to: otherHost)
        case .redirectLoop: return redirect(307, to: context.target)
        case .redirectWithoutLocation: return redirect(302, to: nil)
        case .malformedJSON: return status(200, Data(#"{"user": {"uid": 'u-8f3c',}, data: [}"#.utf8))
        case .truncatedJSON: return status(200, body.prefix(body.count / 2))
        case .wrongFieldTypes: return status(200, valid.wrongTypes)
        case .emptyBody: return status(200)
        case .invalidUTF8: return status(200, Self.invalidUTF8Body)
        case .byteOrderMark: return status(200, Data([0xEF, 0xBB, 0xBF]) + body)
        case .gzip:
            let encoded = Gzip.stored(body)
            return raw(
                Server.head(
                    status: 200,
                    headers: [json, closing, ("Content-Encoding", "gzip"), ("Content-Length", "\(encoded.count)")]),
                encoded)
        case .gzipCorrupt:
            let notGzip = Data("this is not a gzip stream".utf8)
            return raw(
                Server.head(
                    status: 200,
                    headers: [json, closing, ("Content-Encoding", "gzip"), ("Content-Length", "\(notGzip.count)")]),
                notGzip)
        case .htmlBody:
            return .answer(
                status: 200, headers: ["Content-Type": "text/html"], text: "<html><body>Welcome to nginx!</body></html>"
            )
        // Far deeper than any decoder's nesting limit, and under the smallest body bound.
        case .deeplyNested: return status(200, Data(repeating: UInt8(ascii: "["), count: 20_000))
        case .fiveMegabytes: return status(200, Self.padded(body, bytes: 5 * 1024 * 1024))
        case .fiftyMegabytes:
            return .script([
                .send(
                    Server.head(
                        status: 200, headers: [json, closing, ("Content-Length", "\(Self.fiftyMegabyteCount)")])),
                .repeatByte(UInt8(ascii: " "), count: Self.fiftyMegabyteCount), .close,
            ])
        case .fiftyMegabytesChunked:
            // Close-delimited, so no length warns the client: only counting the bytes stops it.
            return .script([
                .send(Server.head(status: 200, headers: [json, closing])),
                .repeatByte(UInt8(ascii: " "), count: Self.fiftyMegabyteCount), .send(body), .close,
            ])
        case .gzipBomb:
            let encoded = Self.bomb
            return raw(
                Server.head(
                    status: 200,
                    headers: [json, closing, ("Content-Encoding", "gzip"), ("Content-Length", "\(encoded.count)")]),
                encoded)
        }
    }

    /// 50 MB of spaces and `{}` in about 200 KB of gzip, built once.
    static let bomb = Gzip.bomb(filler: UInt8(ascii: " "), runs: fiftyMegabyteCount / 258, tail: Data("{}".utf8))

    /// The transport-seam matrix's bodies, the same bytes over sockets.
    static var invalidUTF8Body: Data { FaultMatrixTests.Fault.invalidUTF8Body }

    static func padded(_ body: Data, bytes: Int) -> Data {
        FaultMatrixTests.Fault.padded(HTTPResponse(status: 200, body: body), bytes: bytes).body
    }

    // MARK: - What the transport makes of it

    /// What reaches the caller of a transport's `send` on Linux (`CurlTransport`, or
    /// swift-corelibs-foundation over libcurl), for a request of `method` whose body bound is
    /// `limit`.
    enum TransportOutcome: Equatable, CustomStringConvertible {
        /// A response, with the shape of the body the caller gets.
        case response(status: Int, body: Body)
        case cannotConnect
        case connectionLost
        /// Nothing ends the exchange but a deadline: the engine's, or the transport's own.
        case stall
        /// `HTTPResponseTooLarge` for an answer with this status.
        case tooLarge(status: Int)

        var description: String {
            switch self {
            case .response(let status, let body): "HTTP \(status) (\(body))"
            case .cannotConnect: "cannotConnect"
            case .connectionLost: "connectionLost"
            case .stall: "stall"
            case .tooLarge(let status): "tooLarge(\(status))"
            }
        }
    }

    /// The shape of a body, as the endpoint's decoder will judge it.
    enum Body: Equatable, CustomStringConvertible {
        /// The endpoint's valid answer (perhaps with padding or leading whitespace).
        case valid
        /// No bytes at all.
        case empty
        /// The endpoint's envelope with its fields in the wrong JSON types.
        case wrongTypes
        /// Not the endpoint's envelope: malformed, cut short, not UTF-8, not JSON.
        case undecodable
        /// Whatever a status answer carries; its decoder never reads it as an envelope.
        case errorBody

        var description: String {
            switch self {
            case .valid: "valid"
            case .empty: "empty"
            case .wrongTypes: "wrong types"
            case .undecodable: "undecodable"
            case .errorBody: "error body"
            }
        }
    }

    /// Whether the transport follows this redirect for a request with this method and policy,
    /// and so ends with the valid answer of the second hop.
    func redirectIsFollowed(method: HTTPRequest.Method, policy: HTTPRedirectPolicy) -> Bool {
        let crossesHosts = self == .redirect302OtherHost || self == .redirect307OtherHost
        switch policy {
        case .never: return false
        case .sameOrigin where crossesHosts: return false
        case .sameOrigin, .sameScheme: break
        }
        switch self {
        case .redirect307SameHost, .redirect308SameHost, .redirect307OtherHost: return true
        case .redirect301SameHost, .redirect302SameHost, .redirect303SameHost, .redirect302OtherHost:
            return method == .get
        default: return false
        }
    }

    /// Both transports agree on every fault either survives (they share libcurl's parser).
    func transportOutcome(
        method: HTTPRequest.Method, policy: HTTPRedirectPolicy, limit: Int, validBytes: Int, transport: TransportKind
    ) -> TransportOutcome {
        switch self {
        case .valid, .chunked, .http10CloseDelimited, .http11CloseDelimited, .continue100, .earlyHints103,
            .byteOrderMark, .gzip:
            return .response(status: 200, body: .valid)
        case .refused: return .cannotConnect
        // libcurl: a reset while sending or receiving (RECV_ERROR/SEND_ERROR with ECONNRESET)
        // is .networkConnectionLost; "empty reply from server" (GOT_NOTHING) is
        // .badServerResponse; a short body (PARTIAL_FILE), a malformed status line or chunk,
        // conflicting lengths, an oversized header or a broken gzip stream are .unknown; an
        // HTTP/0.9 answer (UNSUPPORTED_PROTOCOL) is .unsupportedURL. `CurlTransport` sees the
        // libcurl codes themselves. All of them: the request may have been read. The header
        // flood ends at `CurlTransport`'s own bound (256 KiB), and over URLSession at libcurl's
        // (300 KiB, Debian's fix for CVE-2023-38039).
        case .resetBeforeBody, .resetAfterBody, .closeWithoutAnswer, .closeMidStatusLine, .closeMidHeaders,
            .closeMidBody, .contentLengthLarger, .chunkedBadSize, .chunkedCutShort, .conflictingContentLengths,
            .informationalThenClose, .hugeHeader, .gzipCorrupt, .headerLineOneMegabyte, .headerFlood,
            .chunkSizeOverflow, .http09:
            return .connectionLost
        case .silenceBeforeHeaders, .headersThenSilence, .trickledBody, .trickledOneBytePerSecond: return .stall
        // libcurl stops reading at the declared length and drops the rest.
        case .contentLengthSmaller, .truncatedJSON:
            return .response(status: 200, body: validBytes == 0 ? .empty : .undecodable)
        case .status201: return .response(status: 201, body: .valid)
        case .status204: return .response(status: 204, body: .empty)
        case .status299: return .response(status: 299, body: .valid)
        case .status300: return .response(status: 300, body: .errorBody)
        case .status304: return .response(status: 304, body: .errorBody)
        case .status400: return .response(status: 400, body: .errorBody)
        case .status401: return .response(status: 401, body: .errorBody)
        case .status403IPNotAllowed: return .response(status: 403, body: .errorBody)
        case .status404, .status404HistoryNotFound: return .response(status: 404, body: .errorBody)
        case .status409Conflict: return .response(status: 409, body: .errorBody)
        case .status418: return .response(status: 418, body: .errorBody)
        case .status429: return .response(status: 429, body: .errorBody)
        case .status500: return .response(status: 500, body: .errorBody)
        case .status502: return .response(status: 502, body: .errorBody)
        case .status503: return .response(status: 503, body: .errorBody)
        case .status504: return .response(status: 504, body: .errorBody)
        case .status599: return .response(status: 599, body: .errorBody)
        case .redirect301SameHost, .redirect302SameHost, .redirect303SameHost, .redirect307SameHost,
            .redirect308SameHost, .redirect302OtherHost, .redirect307OtherHost:
            if redirectIsFollowed(method: method, policy: policy) { return .response(status: 200, body: .valid) }
            return .response(status: Int(rawValue.dropFirst("redirect".count).prefix(3)) ?? 0, body: .errorBody)
        case .redirectLoop: return .response(status: 307, body: .errorBody)
        case .redirectWithoutLocation: return .response(status: 302, body: .errorBody)
        case .malformedJSON, .invalidUTF8, .htmlBody, .deeplyNested:
            return .response(status: 200, body: .undecodable)
        case .wrongFieldTypes: return .response(status: 200, body: .wrongTypes)
        case .emptyBody: return .response(status: 200, body: .empty)
        case .fiveMegabytes:
            return 5 * 1024 * 1024 + validBytes + 16 > limit
                ? .tooLarge(status: 200) : .response(status: 200, body: .valid)
        case .fiftyMegabytes, .fiftyMegabytesChunked, .gzipBomb: return .tooLarge(status: 200)
        }
    }

    /// Faults that only a deadline ends (on either transport).
    var stalls: Bool {
        transportOutcome(method: .get, policy: .never, limit: .max, validBytes: 2, transport: .curl) == .stall
    }
}

/// One endpoint's correct answer, as the loopback backend gives it.
struct LoopbackAnswer: Sendable {
    var status = 200
    var contentType = "application/json"
    var body: Data
    /// The endpoint's envelope with its known fields in the wrong JSON types.
    var wrongTypes = Data(#"{"ok":"yes","status":[1,2]}"#.utf8)

    var reply: LoopbackHTTPServer.Reply {
        .answer(status: status, headers: ["Content-Type": contentType], body: body)
    }

    /// The whole answer as bytes on the wire, with `Content-Length` framing.
    var encoded: Data {
        LoopbackHTTPServer.head(
            status: status,
            headers: [("Content-Type", contentType), ("Content-Length", "\(body.count)"), ("Connection", "close")])
            + body
    }
}
