import ShoppingAssistant

/// The Gravity API V2 half of the demo store: identity, `/choose`, `/visit`, `/event`.
struct DemoGravity: Sendable {
    private var nextUser = 1
    private var nextSession = 1
    private var nextDecision = 1
    private var sessions: [String: String] = [:]
    /// Every uid this store handed out, and the uid of each manual (`custom`) user.
    private var issuedUIDs: Set<String> = []
    private var customUsers: [String: String] = [:]
    /// Bearer keys seen on Gravity requests; the Shopping half rejects requests carrying them (S5).
    private(set) var seenKeys: Set<String> = []
    /// Custom events received on `/event`, in order.
    private(set) var events: [DemoGravityEvent] = []

    mutating func clearEvents() {
        events.removeAll()
    }

    /// Answers a Gravity request; the endpoint is `.choose`, `.visit` or `.event`.
    mutating func respond(
        to endpoint: DemoEndpoint, request: HTTPRequest, configuration: DemoStore.Configuration
    ) -> HTTPResponse {
        let authorization = request.header("Authorization") ?? ""
        let key = authorization.hasPrefix("Bearer ") ? String(authorization.dropFirst("Bearer ".count)) : ""
        guard !key.trimmingCharacters(in: .whitespaces).isEmpty else {
            return DemoHTTP.error(401, code: "UNAUTHORIZED", message: "Authorization: Bearer <apiKey> is required")
        }
        if let expected = configuration.apiKey, key != expected {
            return DemoHTTP.error(401, code: "INVALID_API_KEY", message: "The API key is not valid for this section")
        }
        seenKeys.insert(key)
        if let refusal = DemoHTTP.requireJSONContentType(request) { return refusal }
        guard let body = JSONValue.parse(request.body), body.objectValue != nil else {
            return DemoHTTP.error(400, code: "INVALID_REQUEST", message: "The body must be a JSON object")
        }
        if let refusal = Self.checkContext(body["ctx"]) { return refusal }
        let user: User
        switch resolveUser(body["user"]) {
        case .success(let resolved): user = resolved
        case .failure(let refusal): return refusal.response
        }
        switch endpoint {
        case .choose:
            let data = choose(body, configuration: configuration)
            return DemoHTTP.json(200, .object(["user": user.json, "data": .array(data)]))
        case .event:
            if let refusal = DemoEventCheck.refusal(of: body["data"]) { return refusal }
            let events = body["data"]?.arrayValue ?? []
            let permission = body["device"]?["permission"]?.stringValue
            for event in events {
                record(event, uid: user.uid, permission: permission)
            }
            return DemoHTTP.json(
                200, .object(["user": user.json, "campaigns": campaigns(configuration, events: events)]))
        default:
            return DemoHTTP.json(
                200, .object(["user": user.json, "campaigns": campaigns(configuration, screen: body["ctx"])]))
        }
    }

    // MARK: - Identity

    private struct User {
        var uid: String
        var ses: String
        var json: DemoJSON { .object(["uid": .string(uid), "ses": .string(ses)]) }
    }

    private struct Refusal: Error {
        let response: HTTPResponse
    }

    /// Checks `ctx` the way the real service reads it: `type` in Gravity's upper-case spelling.
    private static func checkContext(_ ctx: JSONValue?) -> HTTPResponse? {
        guard let ctx = ctx?.objectValue else {
            return DemoHTTP.error(400, code: "INVALID_CONTEXT", message: "ctx (the PageContext) is required")
        }
        let types = PageContext.PageType.allCases.map(\.rawValue)
        guard let type = ctx["type"]?.stringValue, types.contains(type) else {
            let sent = ctx["type"]?.stringValue.map { "\"\($0)\"" } ?? "nothing"
            return DemoHTTP.error(
                400, code: "INVALID_CONTEXT",
                message: "ctx.type must be one of \(types.joined(separator: ", ")); got \(sent)")
        }
        return nil
    }

    /// The canonical user, read as a strict server would (B3): a manual user's app id comes as
    /// `custom` (and gets a uid of its own); an SDK-managed request carries a `uid` this store
    /// issued, or none on first launch (a new one is issued). The session is the request's, or
    /// the user's current one, or a new one.
    private mutating func resolveUser(_ json: JSONValue?) -> Result<User, Refusal> {
        let uid: String
        if let custom = json?.nonEmptyString("custom") {
            guard json?["uid"] == nil else {
                return .failure(
                    Refusal(
                        response: DemoHTTP.error(
                            400, code: "INVALID_USER",
                            message: "a manual user is sent as user.custom only, without user.uid")))
            }
            uid = customUsers[custom] ?? issueUID()
            customUsers[custom] = uid
        } else if let known = json?.nonEmptyString("uid") {
            // A uid of this service's own form was issued by an earlier run of it: the real
            // service remembers its users across restarts, and a restarted REPL's queue still
            // sends as them (DL7).
            guard issuedUIDs.contains(known) || known.hasPrefix("demo-u-") else {
                return .failure(
                    Refusal(
                        response: DemoHTTP.error(
                            400, code: "UNKNOWN_UID",
                            message:
                                "user.uid \"\(known)\" was never issued by this service; send the app's own id as user.custom"
                        )))
            }
            uid = known
        } else {
            uid = issueUID()
        }
        let ses: String
        if let given = json?.nonEmptyString("ses") {
            ses = given
        } else if let current = sessions[uid] {
            ses = current
        } else {
            ses = "demo-s-\(nextSession)"
            nextSession += 1
        }
        sessions[uid] = ses
        return .success(User(uid: uid, ses: ses))
    }

    private mutating func issueUID() -> String {
        let uid = "demo-u-\(nextUser)"
        nextUser += 1
        issuedUIDs.insert(uid)
        return uid
    }

    // MARK: - /choose

    private mutating func choose(_ body: JSONValue, configuration: DemoStore.Configuration) -> [DemoJSON] {
        let pageType = body["ctx"]?["type"]?.stringValue.flatMap(PageContext.PageType.init(rawValue:)) ?? .other
        var data: [DemoJSON] = []
        for request in body["data"]?.arrayValue ?? [] {
            guard let selector = request["selector"]?.stringValue else { continue }
            if selector == configuration.entrySelector,
                configuration.entryPageTypes.map({ $0.contains(pageType) }) ?? true
            {
                let json = DemoJSON.object([
                    "enabled": .bool(configuration.entryEnabled), "title": .string(configuration.entryTitle),
                ])
                let content = content(id: "entry", customJSON: json.text)
                data.append(selection(selector, [campaign(id: "entry", contents: [content])]))
            } else if selector == configuration.recommendationSelector {
                let decision = "demo-d-\(nextDecision)"
                nextDecision += 1
                data.append(selection(selector, [DemoRecommendations.variation(decision: decision, ctx: body["ctx"])]))
            } else if selector == configuration.assistantSelector,
                configuration.assistantPageTypes.map({ $0.contains(pageType) }) ?? true,
                let campaigns = assistantCampaigns(configuration)
            {
                data.append(selection(selector, campaigns))
            }
        }
        return data
    }

    private mutating func assistantCampaigns(_ configuration: DemoStore.Configuration) -> [DemoJSON]? {
        let json: DemoJSON =
            configuration.assistantEnabled
            ? .object([
                "enabled": true,
                "title": .string(configuration.assistantTitle),
                "subtitle": .string(configuration.assistantSubtitle),
                "suggests": .strings(configuration.assistantSuggests),
            ])
            : .object(["enabled": false])
        switch configuration.assistantCampaignShape {
        case .normal:
            return [campaign(id: "assistant", contents: [content(id: "assistant", customJSON: json.text)])]
        case .duplicated:
            return [
                campaign(id: "assistant", contents: [content(id: "assistant", customJSON: json.text)]),
                campaign(id: "assistant-copy", contents: [content(id: "assistant-copy", customJSON: json.text)]),
            ]
        case .conflicting:
            let other = DemoJSON.object([
                "enabled": true, "title": "Другой помощник", "subtitle": "Конфликтующая кампания.",
                "suggests": .strings(["Что нового?"]),
            ])
            return [
                campaign(id: "assistant", contents: [content(id: "assistant", customJSON: json.text)]),
                campaign(id: "assistant-b", contents: [content(id: "assistant-b", customJSON: other.text)]),
            ]
        case .missingJSON:
            return [campaign(id: "assistant", contents: [content(id: "assistant", customJSON: nil)])]
        case .malformedJSON:
            return [campaign(id: "assistant", contents: [content(id: "assistant", customJSON: "{\"enabled\": tru")])]
        case .absent:
            return nil
        }
    }

    private func selection(_ selector: String, _ payload: [DemoJSON]) -> DemoJSON {
        .object(["selector": .string(selector), "payload": .array(payload)])
    }

    private mutating func campaign(id: String, contents: [DemoJSON]) -> DemoJSON {
        let decision = "demo-d-\(nextDecision)"
        nextDecision += 1
        let withLoadEvents = contents.map { content -> DemoJSON in
            guard case .object(var members) = content else { return content }
            let url = "https://\(DemoStore.trackingHost)/l?d=\(decision)"
            // Content load tracking (B7): `variables.onLoad` names the event whose URLs to request.
            members.append(.init(key: "variables", value: .object(["onLoad": .object(["action": "load"])])))
            members.append(.init(key: "events", value: .array([.object(["type": "load", "urls": .strings([url])])])))
            return .object(members)
        }
        return .object([
            "campaignId": .string("demo-c-\(id)"),
            "experienceId": .string("demo-e-\(id)"),
            "variationId": .string("demo-v-\(id)"),
            "decisionId": .string(decision),
            "contents": .array(withLoadEvents),
        ])
    }

    private func content(id: String, customJSON: String?) -> DemoJSON {
        .compactObject([
            ("contentId", .string("demo-ct-\(id)")),
            ("deliveryMethod", "inline"),
            ("contentType", "custom"),
            ("custom", customJSON.map { .object(["json": .string($0)]) } ?? .object([:])),
        ])
    }

    // MARK: - /visit, /event

    /// The in-app campaigns a page view (`screen`, its `ctx`) or the `events` of an `/event`
    /// announce.
    private func campaigns(
        _ configuration: DemoStore.Configuration, screen: JSONValue? = nil, events: [JSONValue]? = nil
    ) -> DemoJSON {
        var announced: [(id: String, trigger: String)] =
            configuration.promoCampaignOnVisit ? [("demo-c-promo", "screenview")] : []
        if let screen = Self.campaignScreen(of: screen, configuration) {
            announced.append((screen.campaignId, "screenview"))
        }
        if configuration.eventCampaigns {
            let types = (events ?? []).compactMap { $0["type"]?.stringValue }
            for (type, campaignId) in DemoCatalog.eventCampaigns
            where types.contains(type) && !announced.contains(where: { $0.id == campaignId }) {
                announced.append((campaignId, type))
            }
        }
        return .array(
            announced.map {
                .object([
                    "campaignId": .string($0.id), "trigger": .string($0.trigger), "priority": .int(1),
                    "delayTime": .int(0),
                ])
            })
    }

    /// The campaign screen a page view's `ctx` is, if the configuration shows them.
    static func campaignScreen(of ctx: JSONValue?, _ configuration: DemoStore.Configuration) -> DemoCampaignScreen? {
        guard configuration.campaignScreens else { return nil }
        return DemoCatalog.campaignScreens.first { $0.matches(ctx) }
    }

    private mutating func record(_ event: JSONValue, uid: String, permission: String?) {
        guard let type = event["type"]?.stringValue else { return }
        var props: [String: String] = [:]
        for (key, value) in event["customProps"]?.objectValue ?? [:] {
            props[key] = value.stringValue ?? value.jsonSpelling
        }
        let fields = (event.objectValue ?? [:]).filter { !["type", "name", "customProps"].contains($0.key) }
        events.append(
            DemoGravityEvent(
                type: type, name: event["name"]?.stringValue, customProps: props, uid: uid, fields: fields,
                permission: permission))
    }
}

extension JSONValue {
    /// A compact JSON spelling of a scalar, for logging non-string event properties.
    fileprivate var jsonSpelling: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        case .string(let value): value
        case .array, .object: "…"
        }
    }
}
