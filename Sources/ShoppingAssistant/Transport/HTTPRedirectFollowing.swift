import Foundation

/// How a transport follows redirects under an `HTTPRedirectPolicy`: the transport never lets its
/// HTTP library follow one, and asks this for the next hop instead. One definition for every
/// transport of the package (`URLSessionTransport`, `CurlTransport`), so they cannot disagree
/// about where the Gravity key may travel.
package enum HTTPRedirectFollowing {
    /// Sends `request` through `exchange`, then each redirect the request's policy allows, and
    /// returns the first answer that is not followed.
    package static func follow(
        _ request: HTTPRequest, exchange: (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        var current = request
        var followed = 0
        while true {
            let response = try await exchange(current)
            guard let next = nextRequest(after: response, of: current, followed: followed) else { return response }
            followed += 1
            current = next
        }
    }

    /// The request that follows `response` under the request's policy, or `nil` when the
    /// response is the answer.
    package static func nextRequest(after response: HTTPResponse, of request: HTTPRequest, followed: Int)
        -> HTTPRequest?
    {
        let limit: Int
        switch request.redirectPolicy {
        case .never: return nil
        case .sameOrigin(let bound), .sameScheme(let bound): limit = bound
        }
        guard followed < limit else { return nil }
        switch response.status {
        case 307, 308: break
        // These would turn a request with a body into a `GET` without it.
        case 301, 302, 303: guard request.method == .get, request.body == nil else { return nil }
        default: return nil
        }
        guard let location = response.header("Location"),
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), target.host != nil,
            scheme == request.url.scheme?.lowercased()
        else { return nil }
        let sameOrigin = URLOrigin(target) == URLOrigin(request.url)
        if case .sameOrigin = request.redirectPolicy, !sameOrigin { return nil }
        var next = request
        next.url = target
        if !sameOrigin {
            // Credentials belong to the origin they were written for.
            next.headers = next.headers.filter { name, _ in
                !["authorization", "cookie", "proxy-authorization"].contains(name.lowercased())
            }
        }
        return next
    }
}
