import Foundation
import Testing

@testable import ShoppingAssistant

/// Endpoint URLs are resolved once per process and shared; the cache starts over rather than
/// grow when a process makes engines for ever new base URLs.
@Suite struct EndpointURLsTests {
    @Test func everyBaseGetsItsOwnEndpointAcrossCacheRestarts() throws {
        for port in 40_000..<40_200 {  // three times the cache's capacity
            let base = try #require(URL(string: "http://127.0.0.1:\(port)/api"))
            for path in ["v1/messages", "choose"] {
                #expect(EndpointURLs.url(base, path) == base.appendingPathComponent(path))
                #expect(EndpointURLs.url(base, path).absoluteString == "http://127.0.0.1:\(port)/api/\(path)")
            }
        }
    }
}
