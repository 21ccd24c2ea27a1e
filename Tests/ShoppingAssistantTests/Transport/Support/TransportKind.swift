import Foundation
import ShoppingAssistant
import ShoppingAssistantCurl
import Testing

/// The package's two real transports, so that every socket suite runs against both: the
/// fault matrices, the soak and the round-trip tests are parameterized by this.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `URLSessionTransport`, over swift-corelibs-foundation (libcurl underneath).
    case urlSession
    /// `CurlTransport`, over libcurl directly.
    case curl

    var testDescription: String { rawValue }

    /// A new transport of this kind whose deadline runs on `clock`.
    func make(clock: any Clock<Duration> = ContinuousClock()) -> any HTTPTransport {
        switch self {
        case .urlSession: URLSessionTransport(clock: clock)
        case .curl: CurlTransport(proxy: .none, clock: clock)
        }
    }

    /// The transport's total deadline per exchange.
    var deadline: Duration {
        switch self {
        case .urlSession: URLSessionTransport.defaultDeadline
        case .curl: CurlTransport.defaultDeadline
        }
    }
}
