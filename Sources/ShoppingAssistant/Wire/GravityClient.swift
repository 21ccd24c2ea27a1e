import Foundation

/// Who a Gravity request is made for: the values sent as `user` (B3).
struct GravityIdentity: Sendable, Hashable {
    var uid: String?
    var ses: String?
}

/// Builds Gravity API V2 requests and decodes their responses (B5, wire.md § Gravity API V2).
/// It holds no state: the identity to send is passed in, the identity received is returned,
/// and the engine decides what to keep.
struct GravityClient: Sendable {
    let baseURL: URL
    let apiKey: String
    let section: String
    let userAgent: String
    let call: WireCall

    struct Answer<Value: Sendable>: Sendable {
        var value: Value
        var user: GravityUser?
    }

    func choose(selector: String, identity: GravityIdentity, context: PageContext) async -> Result<
        Answer<ContentResponse>, WireFailure
    > {
        let body = envelope(
            identity: identity, context: context, type: nil, data: [GravitySelectorRequest(selector: selector)])
        return await post("choose", body: body).flatMap { response in
            guard let decoded = try? JSONDecoder().decode(GravityChooseResponse.self, from: response.body) else {
                call.logger.log(.error, "gravity POST /choose: undecodable response")  // B5
                return .failure(
                    .failed(
                        AssistantError(code: .invalidResponse, message: "undecodable /choose response"),
                        uncertain: false))
            }
            return .success(Answer(value: ContentResponse(wire: decoded), user: decoded.user))
        }
    }

    func visit(identity: GravityIdentity, context: PageContext) async -> Result<Answer<[InAppCampaign]>, WireFailure> {
        let body = envelope(identity: identity, context: context, type: "screenview", data: [GravityCustomEvent]?.none)
        return await post("visit", body: body).flatMap(decodeEventResponse)
    }

    func event(_ events: [GravityCustomEvent], identity: GravityIdentity, context: PageContext) async -> Result<
        Answer<[InAppCampaign]>, WireFailure
    > {
        let body = envelope(identity: identity, context: context, type: nil, data: events)
        return await post("event", body: body).flatMap(decodeEventResponse)
    }

    private func decodeEventResponse(_ response: HTTPResponse) -> Result<Answer<[InAppCampaign]>, WireFailure> {
        if response.body.isEmpty { return .success(Answer(value: [], user: nil)) }
        guard let decoded = try? JSONDecoder().decode(GravityEventResponse.self, from: response.body) else {
            call.logger.log(.error, "gravity: undecodable event response")
            return .failure(
                .failed(AssistantError(code: .invalidResponse, message: "undecodable event response"), uncertain: false)
            )
        }
        let campaigns = (decoded.campaigns ?? []).compactMap { wire in
            wire.campaignId.map { InAppCampaign(campaignId: $0, trigger: wire.trigger, priority: wire.priority) }
        }
        return .success(Answer(value: campaigns, user: decoded.user))
    }

    private func envelope<Payload: Encodable & Sendable>(
        identity: GravityIdentity, context: PageContext, type: String?, data: Payload?
    ) -> GravityRequest<Payload> {
        GravityRequest(
            sec: section, device: GravityDevice(userAgent: userAgent, id: nil),
            user: GravityUser(uid: identity.uid, ses: identity.ses), ctx: context, options: GravityOptions(),
            type: type, data: data)
    }

    private func post<Body: Encodable>(_ endpoint: String, body: Body) async -> Result<HTTPResponse, WireFailure> {
        let request = HTTPRequest(
            method: .post, url: baseURL.appendingPathComponent(endpoint),
            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(apiKey)"],
            body: WireJSON.encode(body),
            maximumResponseBytes: endpoint == "choose" ? EndpointLimits.chooseBytes : EndpointLimits.eventBytes,
            redirectPolicy: EndpointLimits.serviceRedirects)
        return await call.perform(request)
    }
}

/// An auto-shown in-app campaign announced by `/visit` or `/event` (B6, O7).
public struct InAppCampaign: Sendable, Hashable {
    public let campaignId: String
    public let trigger: String?
    public let priority: Int?

    public init(campaignId: String, trigger: String?, priority: Int?) {
        self.campaignId = campaignId
        self.trigger = trigger
        self.priority = priority
    }
}
