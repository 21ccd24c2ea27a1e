import Foundation

/// Builds Gravity API V2 requests and decodes their answers (B5, wire.md § Gravity API V2).
/// It holds no state: the user to send and the options are passed in, the user received is
/// returned, and the engine decides what to keep.
struct GravityClient: Sendable {
    let apiKey: String
    let section: String
    let device: GravityDevice
    let call: WireCall
    /// Retries within the call's deadline (DL1).
    let retry: RetryLoop
    /// The endpoints, resolved once (`EndpointURLs`).
    private let chooseURL: URL

    init(baseURL: URL, apiKey: String, section: String, device: GravityDevice, call: WireCall, retry: RetryLoop) {
        self.retry = retry
        self.apiKey = apiKey
        self.section = section
        self.device = device
        self.call = call
        chooseURL = EndpointURLs.url(baseURL, "choose")
    }

    /// What every request carries besides its endpoint's own fields, decided when the request
    /// is: the user, page and options, and the push-permission status then (B11).
    struct Envelope: Sendable, Hashable {
        var user: GravityUser
        var context: PageContext
        var options: GravityOptions
        var permission = NotificationPermissionStatus.unknown
    }

    /// A decoded answer and the `user` it carried.
    struct Answer<Value: Sendable>: Sendable {
        var value: Value
        var user: GravityAnsweredUser?
    }

    /// `POST /choose` for one selector; the answer holds only that selector's entries.
    func choose(selector: String, settings: GravityContentSettings, envelope: Envelope) async -> Result<
        Answer<ContentResponse>, WireFailure
    > {
        await choose([GravitySelectorRequest(selector: selector, options: settings)], envelope: envelope)
    }

    /// `POST /choose` with one `data` item per selector (B16); the answer holds the entries of
    /// those selectors only.
    func choose(_ items: [GravitySelectorRequest], envelope: Envelope) async -> Result<
        Answer<ContentResponse>, WireFailure
    > {
        let body = request(envelope, type: nil, data: items)
        let selectors = Set(items.map(\.selector))
        return await post(chooseURL, limit: EndpointLimits.chooseBytes, body: body).flatMap { response in
            guard let (content, user) = GravityAnswer.choose(response.body, selectors: selectors) else {
                return .failure(
                    .failed(
                        AssistantError(code: .invalidResponse, message: "undecodable /choose response"),
                        uncertain: false))
            }
            return .success(Answer(value: content, user: user))
        }
    }

    /// The body of `POST /visit` (`type: screenview`), as the outbox keeps it (DL2).
    func visitBody(envelope: Envelope) -> Data {
        WireJSON.encode(request(envelope, type: "screenview", data: [GravityEvent]?.none))
    }

    /// The body of `POST /event` with the events as `data`, as the outbox keeps it (DL2).
    func eventBody(_ events: [GravityEvent], envelope: Envelope) -> Data {
        WireJSON.encode(request(envelope, type: nil, data: events))
    }

    /// A kept body raised before any identity was known (`"user":{}`), as it leaves once `user`
    /// is (DL7); `nil` for a body that does not end with an empty `user`, which goes as kept.
    static func body(_ body: Data, sentAs user: GravityUser) -> Data? {
        guard takesUser(body) else { return nil }
        var sent = Data(body.prefix(body.count - emptyUserTail.count))
        sent.append(contentsOf: #","user":"#.utf8)
        sent.append(WireJSON.encode(user))
        sent.append(UInt8(ascii: "}"))
        return sent
    }

    /// Whether `body` ends with an empty `user`, which `body(_:sentAs:)` can fill in.
    static func takesUser(_ body: Data) -> Bool {
        body.count > emptyUserTail.count && body.suffix(emptyUserTail.count).elementsEqual(emptyUserTail)
    }

    /// `user` is the last member of the bodies this client writes, `{}` when nobody is known.
    private static let emptyUserTail = Data(#","user":{}}"#.utf8)

    /// The campaigns and `user` of a `/visit` or `/event` answer.
    func decodeEvents(_ response: HTTPResponse) -> Result<Answer<[InAppCampaign]>, WireFailure> {
        guard let (campaigns, user) = GravityAnswer.events(response.body) else {
            return .failure(
                .failed(AssistantError(code: .invalidResponse, message: "undecodable event response"), uncertain: false)
            )
        }
        return .success(Answer(value: campaigns, user: user))
    }

    private func request<Payload: JSONBodyWritable & Sendable>(
        _ envelope: Envelope, type: String?, data: Payload?
    )
        -> GravityRequest<Payload>
    {
        var device = self.device
        device.permission = envelope.permission.rawValue  // B11
        return GravityRequest(
            sec: section, device: device, user: envelope.user, ctx: envelope.context, options: envelope.options,
            type: type, data: data)
    }

    private func post<Body: JSONBodyWritable>(_ endpoint: URL, limit: Int, body: Body) async -> Result<
        HTTPResponse, WireFailure
    > {
        let request = HTTPRequest(
            method: .post, url: endpoint,
            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(apiKey)"],
            body: WireJSON.encode(body),
            maximumResponseBytes: limit,
            redirectPolicy: EndpointLimits.serviceRedirects)
        return await retry.run { await call.perform(request) }
    }
}
