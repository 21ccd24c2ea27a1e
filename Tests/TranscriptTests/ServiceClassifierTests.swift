import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantTranscripts

/// How a recording names the service of each request, so that it replays wherever it was made.
@Suite struct ServiceClassifierTests {
    private static func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    @Test func eachServiceIsToldByItsBaseURL() throws {
        let classify = ServiceClassifier(
            gravityBase: try Self.url("http://127.0.0.1:1/g"), shoppingBase: try Self.url("http://127.0.0.1:2/"))
        #expect(classify.describe(.post, try Self.url("http://127.0.0.1:1/g/visit")) == ("gravity", "/visit"))
        #expect(
            classify.describe(.post, try Self.url("http://127.0.0.1:2/v1/messages")) == ("shopping", "/v1/messages"))
        #expect(
            classify.describe(.get, try Self.url("http://elsewhere/t?x=1")) == ("tracking", "http://elsewhere/t?x=1"))
    }

    @Test func oneBaseURLForBothServicesIsToldApartByThePath() throws {
        let base = try Self.url("http://127.0.0.1:8765")
        let classify = ServiceClassifier(gravityBase: base, shoppingBase: base)
        for path in ["/visit", "/choose", "/event"] {
            #expect(classify.describe(.post, try Self.url("http://127.0.0.1:8765" + path)) == ("gravity", path))
        }
        for path in ["/v1/messages", "/v1/feedback", "/v1/threads/t-1/messages?limit=50"] {
            #expect(classify.describe(.post, try Self.url("http://127.0.0.1:8765" + path)) == ("shopping", path))
        }
    }

    @Test func theLongerOfTwoNestedBaseURLsNamesTheService() throws {
        let classify = ServiceClassifier(
            gravityBase: try Self.url("http://proxy/"), shoppingBase: try Self.url("http://proxy/shop"))
        #expect(classify.describe(.post, try Self.url("http://proxy/shop/v1/messages")) == ("shopping", "/v1/messages"))
        #expect(classify.describe(.post, try Self.url("http://proxy/visit")) == ("gravity", "/visit"))
    }
}
