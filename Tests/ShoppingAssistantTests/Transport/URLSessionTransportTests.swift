import Foundation
import ShoppingAssistantTesting
import Testing

@testable import ShoppingAssistant

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport`'s error table, for the failures a loopback server cannot produce
/// without wall time (timeouts) or a network (DNS, TLS). Its end-to-end behaviour is in
/// `TransportRoundTripTests` and the socket matrices, with `CurlTransport`'s.
@Suite
struct URLSessionTransportTests {
    // MARK: - Error table

    @Test(arguments: [
        (URLError.Code.cannotConnectToHost, Kind.cannotConnect),
        (.cannotFindHost, .cannotConnect),
        (.dnsLookupFailed, .cannotConnect),
        (.secureConnectionFailed, .cannotConnect),
        (.notConnectedToInternet, .cannotConnect),
        (.badURL, .cannotConnect),
        (.networkConnectionLost, .connectionLost),
        (.badServerResponse, .connectionLost),
        (.cannotParseResponse, .connectionLost),
        // swift-corelibs-foundation reports unmapped libcurl failures as .unknown; the
        // transport cannot tell whether the server saw the request, so it must not claim so.
        (.unknown, .connectionLost),
        (.timedOut, .timedOut),
        (.cancelled, .cancelled),
    ])
    func urlErrorsMapToCertainOrUncertainFailures(code: URLError.Code, expected: Kind) {
        #expect(Kind(URLSessionTransport.mapError(URLError(code))) == expected)
    }

    // covers: D5
    // libcurl refuses an HTTP/0.9 answer with CURLE_UNSUPPORTED_PROTOCOL, which Foundation
    // reports as .unsupportedURL: for an http(s) URL the request had been sent.
    @Test func unsupportedURLIsCertainOnlyForASchemeThatIsNotHTTP() throws {
        let http = try #require(URL(string: "http://127.0.0.1:1/v1/messages"))
        let ftp = try #require(URL(string: "ftp://127.0.0.1:1/file"))
        #expect(Kind(URLSessionTransport.mapError(URLError(.unsupportedURL), url: http)) == .connectionLost)
        #expect(Kind(URLSessionTransport.mapError(URLError(.unsupportedURL), url: ftp)) == .cannotConnect)
    }

    @Test func cancellationErrorPassesThroughTheErrorTable() {
        #expect(Kind(URLSessionTransport.mapError(CancellationError())) == .cancelled)
    }

    /// The outcome classes a caller distinguishes, without the free-text descriptions.
    enum Kind: Sendable, Equatable {
        case cannotConnect
        case connectionLost
        case timedOut
        case cancelled
        case other

        init?(_ error: (any Error)?) {
            guard let error else { return nil }
            if error is CancellationError {
                self = .cancelled
                return
            }
            switch error as? HTTPTransportError {
            case .cannotConnect?: self = .cannotConnect
            case .connectionLost?: self = .connectionLost
            case .timedOut?: self = .timedOut
            case nil: self = .other
            }
        }
    }
}
