import Foundation
import ShoppingAssistant
import Testing

/// Header names compare without regard to case (RFC 9110, 5.1), whichever side is longer, and
/// the transports' header look-ups (`HTTPRequest.header`, `HTTPResponse.header`) use that.
struct HTTPFieldNameTests {
    @Test(arguments: [
        ("Content-Type", "content-type", true), ("CONTENT-TYPE", "Content-Type", true), ("X-A", "x-a", true),
        ("", "", true), ("Content-Type", "Content-Typ", false), ("Content-Typ", "Content-Type", false),
        ("X-A", "X-B", false), ("X-[", "X-{", false), ("a", "", false), ("", "a", false),
    ])
    func asciiNamesMatchWhateverTheirCase(_ lhs: String, _ rhs: String, _ same: Bool) {
        #expect(HTTPFieldName.matches(lhs, rhs) == same)
    }

    /// Not a valid field name, but never a crash or a false match: Foundation decides.
    @Test func aNameWithOtherCharactersIsComparedByFoundation() {
        #expect(HTTPFieldName.matches("X-Ärger", "x-äRGER"))
        #expect(!HTTPFieldName.matches("X-Ärger", "X-Arger"))
        #expect(!HTTPFieldName.matches("X-A", "X-AÄ"))
        #expect(!HTTPFieldName.matches("X-AÄ", "X-A"))
    }

    @Test func aLookUpFindsAHeaderWhateverTheCaseOfEitherName() {
        let request = HTTPRequest(method: .get, url: URL(fileURLWithPath: "/"), headers: ["content-TYPE": "a/b"])
        let response = HTTPResponse(status: 200, headers: ["Retry-After": "5"], body: Data())

        #expect(request.header("Content-Type") == "a/b")
        #expect(request.header("Content-Length") == nil)
        #expect(response.header("retry-after") == "5")
    }
}
