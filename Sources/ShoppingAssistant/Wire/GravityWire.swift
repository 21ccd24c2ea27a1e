import Foundation

// MARK: - Gravity API V2 wire models (wire.md § Gravity API V2). Keep every shape here.

/// `user` in requests and responses: whatever is known, `{}` on first launch.
struct GravityUser: Codable, Hashable, Sendable {
    var uid: String?
    var ses: String?
}

struct GravityDevice: Encodable, Sendable {
    var userAgent: String
    var id: String?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userAgent, forKey: .userAgent)
        try container.encode(id, forKey: .id)  // explicit null, as the SDK sends it
    }

    private enum CodingKeys: String, CodingKey { case userAgent, id }
}

struct GravityOptions: Encodable, Sendable {
    var isReturnCounter = false
    var isReturnUserInfo = true
    var isReturnAnalyticsMetadata = false
    var isImplicitPageview = false
    var isImplicitImpression = false
}

struct GravitySelectorRequest: Encodable, Sendable {
    struct Options: Encodable, Sendable {
        var skusOnly = false
        var fields: [String]? = nil

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(skusOnly, forKey: .skusOnly)
            try container.encode(fields, forKey: .fields)
        }

        private enum CodingKeys: String, CodingKey { case skusOnly, fields }
    }

    var selector: String
    var options = Options()
}

/// A custom event in `/event` `data` (wire.md § POST /event).
struct GravityCustomEvent: Encodable, Hashable, Sendable {
    var type: String
    var name: String
    var customProps: [String: String]
}

/// The common envelope of every Gravity request; `data` and `type` vary by endpoint.
struct GravityRequest<Payload: Encodable & Sendable>: Encodable, Sendable {
    var sec: String
    var device: GravityDevice
    var user: GravityUser
    var ctx: PageContext
    var options: GravityOptions
    var type: String?
    var data: Payload?
}

struct GravityTrackingEvent: Decodable, Hashable, Sendable {
    var type: String?
    var urls: [String]?
}

struct GravityContent: Decodable, Sendable {
    struct Custom: Decodable, Sendable {
        var json: String?
    }

    var contentId: String?
    var deliveryMethod: String?
    var contentType: String?
    var custom: Custom?
    var events: [GravityTrackingEvent]?
}

struct GravityPayload: Decodable, Sendable {
    var campaignId: String?
    var experienceId: String?
    var variationId: String?
    var decisionId: String?
    var contents: [GravityContent]?
}

struct GravitySelection: Decodable, Sendable {
    var selector: String?
    var payload: [GravityPayload]?
}

struct GravityChooseResponse: Decodable, Sendable {
    var user: GravityUser?
    var data: [GravitySelection]?
}

struct GravityCampaignTrigger: Decodable, Sendable {
    var campaignId: String?
    var trigger: String?
    var priority: Int?
    var delayTime: Double?
}

/// The response of `/visit` and `/event`.
struct GravityEventResponse: Decodable, Sendable {
    var user: GravityUser?
    var campaigns: [GravityCampaignTrigger]?
}
