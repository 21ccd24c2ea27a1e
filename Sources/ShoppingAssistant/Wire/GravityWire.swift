import Foundation

// MARK: - Gravity API V2 wire models (wire.md § Gravity API V2). Keep every shape here.
//
// Requests are shaped as the vendor's iOS SDK 1.0.4 sends them (`GravityRepository`): optional
// fields that have no value are left out, not sent as `null`. Each body's `JSONBodyWritable`
// conformance, beside its type, is its only description: the keys as they travel, members in
// ascending UTF-8 order of their keys (the order retries and recorded transcripts compare).

/// `user` in requests: SDK-managed mode sends `uid`/`ses` (whatever is known, `{}` on first
/// launch); manual mode sends the app's id as `custom`, never as `uid` (B3).
///
/// One reference to immutable fields: the identity hands the same user to every event and
/// tracking URL it sends, many a second, and each of those copies (made on the engine's thread,
/// released on the tracking queue's) then retains one object instead of each field's string.
struct GravityUser: Hashable, Sendable {
    private final class Fields: Sendable {
        let uid: String?
        let custom: String?
        let ses: String?

        init(uid: String?, custom: String?, ses: String?) {
            self.uid = uid
            self.custom = custom
            self.ses = ses
        }
    }

    private let fields: Fields

    init(uid: String? = nil, custom: String? = nil, ses: String? = nil) {
        fields = Fields(uid: uid, custom: custom, ses: ses)
    }

    var uid: String? { fields.uid }
    var custom: String? { fields.custom }
    var ses: String? { fields.ses }

    /// Neither an SDK-managed uid nor the app's own id: a request sent so opens a profile of
    /// its own (B8).
    var isNobody: Bool { uid == nil && custom == nil }

    static func == (lhs: GravityUser, rhs: GravityUser) -> Bool {
        lhs.fields === rhs.fields || (lhs.uid == rhs.uid && lhs.custom == rhs.custom && lhs.ses == rhs.ses)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(uid)
        hasher.combine(custom)
        hasher.combine(ses)
    }
}

extension GravityUser: JSONBodyWritable {
    /// Whatever is known, `{}` on a first launch.
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("custom", ifPresent: custom)
            json.member("ses", ifPresent: ses)
            json.member("uid", ifPresent: uid)
        }
    }
}

extension GravityUser {
    /// The user an event raised as `self` is sent as, when the session gate hands it `user`
    /// (DL7): an event of a known identity keeps it (taking the session only if it is the same
    /// identity and it had none); one raised before any identity takes `user`.
    func owner(sentAs user: GravityUser) -> GravityUser {
        guard !isNobody else { return user }
        let same = uid == user.uid && custom == user.custom
        return same && ses == nil ? user : self
    }
}

extension GravityUser: CustomStringConvertible {
    /// The fields, as a test failure or a debugger shows them.
    var description: String {
        let fields = [("uid", uid), ("custom", custom), ("ses", ses)].compactMap { name, value in
            value.map { "\(name): \"\($0)\"" }
        }
        return "GravityUser(\(fields.joined(separator: ", ")))"
    }
}

/// `device`, as the vendor SDKs send it. There is no device here: `id` is the host's to give
/// (configuration), and is left out when it has none.
///
/// The user agent travels as `ua`: the key flutter ("Fix user agent field name", 2025-09-10)
/// and Android (2025-10-22) fixed; iOS 1.0.4 still encodes its property name `userAgent`.
struct GravityDevice: Hashable, Sendable {
    var userAgent: String
    var id: String?
    /// The push-permission status the host last set (B11): `granted`, `denied` or `unknown`,
    /// the raw values of the SDKs' `NotificationPermissionStatus`; `unknown` until set, as the
    /// SDKs start.
    var permission = NotificationPermissionStatus.unknown.rawValue
    /// The ad-tracking authorisation; not a concept on Linux.
    var tracking = "notSupported"
}

extension GravityDevice: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("id", ifPresent: id)
            json.member("permission", permission)
            json.member("tracking", tracking)
            json.member("ua", userAgent)
        }
    }
}

/// One `data[]` item of a `/choose` request. The content settings travel as `option`: the key
/// flutter ("Options -> Option", 2025-09-10) and Android fixed; iOS 1.0.4 sends `options`.
struct GravitySelectorRequest: Sendable, Hashable {
    var selector: String
    var options: GravityContentSettings
}

extension GravitySelectorRequest: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("option", options)
            json.member("selector", selector)
        }
    }
}

extension GravityContentSettings: JSONBodyWritable {
    /// `fields` left out when not set (wire.md § POST /choose).
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("fields", ifPresent: fields)
            json.member("skusOnly", skusOnly)
        }
    }
}

/// A lifecycle event the engine sends itself (AN1): `{"type", "name", "customProps"}`, sent as
/// a ``GravityEvent`` like a host's ``CustomEvent``.
struct GravityCustomEvent: Hashable, Sendable {
    var type: String
    var name: String
    var customProps: [String: String]
    /// When it happened (DL6), as `EventTime` writes it.
    var eventTime: String?
}

/// One event of `/event` `data` (B10, wire.md § Typed events): the SDKs' `type`/`name` pair,
/// then the event's fields under the names the SDKs' encoders give them. Optional fields with no
/// value are left out, as iOS 1.0.4's `encodeIfPresent` does (flutter's and Android's encoders
/// send them as `null`). Amounts are JSON numbers digit for digit (`1990`, `19.99`), quantities
/// integers; ids travel byte for byte.
struct GravityEvent: Hashable, Sendable {
    enum Field: Hashable, Sendable {
        case text(String)
        case integer(Int)
        case amount(Decimal)
        case cart([CartItem])
        case properties([String: String])
    }

    var type: String
    var name: String
    var fields: [String: Field]

    /// A custom event (the host's or a lifecycle event): `customProps` left out when empty, as the
    /// SDK leaves out a `nil` one.
    init(_ event: GravityCustomEvent) {
        type = event.type
        name = event.name
        fields = event.customProps.isEmpty ? [:] : ["customProps": .properties(event.customProps)]
        if let eventTime = event.eventTime { fields["eventTime"] = .text(eventTime) }
    }

    /// An event of `type`/`name`; `nil` values are left out.
    init(type: String, name: String, _ fields: [(String, Field?)]) {
        self.type = type
        self.name = name
        self.fields = Dictionary(fields.compactMap { key, value in value.map { (key, $0) } }) { first, _ in first }
    }
}

extension GravityEvent: JSONBodyWritable {
    /// `type`, `name` and the fields, all in one ascending order of their keys.
    func write(to json: inout JSONBodyWriter) {
        var keys = Array(fields.keys)
        keys.append(contentsOf: ["name", "type"])
        keys.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        json.object { json in
            for key in keys {
                switch key {
                case "name": json.member("name", name)
                case "type": json.member("type", type)
                default: fields[key].map { json.member(named: key, $0) }
                }
            }
        }
    }
}

extension GravityEvent.Field: JSONBodyWritable {
    /// An amount digit for digit as the app gave it (`1990`, `19.99`), never through `Double`.
    func write(to json: inout JSONBodyWriter) {
        switch self {
        case .text(let value): json.string(value)
        case .integer(let value): value.write(to: &json)
        case .amount(let value): json.raw(value.plainSpelling)
        case .cart(let items): items.write(to: &json)
        case .properties(let value): value.write(to: &json)
        }
    }
}

extension CartItem: JSONBodyWritable {
    /// A cart line as all three SDKs send it: `{"itemPrice", "productId", "quantity"}`.
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("itemPrice", GravityEvent.Field.amount(itemPrice.decimal))
            json.member("productId", productId)
            json.member("quantity", quantity)
        }
    }
}

// The field names of each event type: iOS 1.0.4 `models/TriggerEvent.swift`, flutter
// `trigger_event.g.dart` and Android `TriggerEvent.kt` agree on every name and on the
// `type`/`name` pairs.
extension GravityEvent {
    /// A cart change: `add-to-cart-v1` and `remove-from-cart-v1` have the same fields.
    fileprivate static func cartChange(
        _ event: some TriggerEvent, value: EventAmount, productId: String, quantity: Int, currency: String?,
        cart: [CartItem]?
    ) -> GravityEvent {
        GravityEvent(
            type: event.type, name: event.name,
            [
                ("value", .amount(value.decimal)), ("productId", .text(productId)), ("quantity", .integer(quantity)),
                ("currency", currency.map(Field.text)), ("cart", cart.map(Field.cart)),
            ])
    }

    /// An account event: `signup-v1` and `login-v1` have the same fields, all optional.
    fileprivate static func account(
        _ event: some TriggerEvent, hashedEmail: String?, cuid: String?, cuidType: String?
    ) -> GravityEvent {
        GravityEvent(
            type: event.type, name: event.name,
            [
                ("hashedEmail", hashedEmail.map(Field.text)), ("cuid", cuid.map(Field.text)),
                ("cuidType", cuidType.map(Field.text)),
            ])
    }
}

extension AddToCartEvent {
    var wire: GravityEvent {
        .cartChange(self, value: value, productId: productId, quantity: quantity, currency: currency, cart: cart)
    }
}

extension RemoveFromCartEvent {
    var wire: GravityEvent {
        .cartChange(self, value: value, productId: productId, quantity: quantity, currency: currency, cart: cart)
    }
}

extension SyncCartEvent {
    var wire: GravityEvent {
        GravityEvent(
            type: type, name: name,
            [
                ("value", .amount(value.decimal)), ("currency", currency.map(GravityEvent.Field.text)),
                ("cart", cart.map(GravityEvent.Field.cart)),
            ])
    }
}

extension PurchaseEvent {
    var wire: GravityEvent {
        GravityEvent(
            type: type, name: name,
            [
                ("uniqueTransactionId", .text(uniqueTransactionId)), ("value", .amount(value.decimal)),
                ("cart", .cart(cart)), ("currency", currency.map(GravityEvent.Field.text)),
            ])
    }
}

extension AddToWishlistEvent {
    var wire: GravityEvent {
        GravityEvent(type: type, name: name, [("value", .amount(value.decimal)), ("productId", .text(productId))])
    }
}

extension SignUpEvent {
    var wire: GravityEvent { .account(self, hashedEmail: hashedEmail, cuid: cuid, cuidType: cuidType) }
}

extension LoginEvent {
    var wire: GravityEvent { .account(self, hashedEmail: hashedEmail, cuid: cuid, cuidType: cuidType) }
}

extension CustomEvent {
    var wire: GravityEvent {
        var event = GravityEvent(GravityCustomEvent(type: type, name: name, customProps: customProps))
        if let cuid { event.fields["cuid"] = .text(cuid) }
        if let cuidType { event.fields["cuidType"] = .text(cuidType) }
        if let cart { event.fields["cart"] = .cart(cart) }
        return event
    }
}

/// The common envelope of every Gravity request; `data` and `type` vary by endpoint.
struct GravityRequest<Payload: JSONBodyWritable & Sendable>: Sendable {
    var sec: String
    var device: GravityDevice
    var user: GravityUser
    var ctx: PageContext
    var options: GravityOptions
    var type: String?
    var data: Payload?
}

extension GravityRequest: JSONBodyWritable {
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("ctx", ctx)
            json.member("data", ifPresent: data)
            json.member("device", device)
            json.member("options", options)
            json.member("sec", sec)
            json.member("type", ifPresent: type)
            json.member("user", user)
        }
    }
}

extension PageContext: JSONBodyWritable {
    /// `ctx`, and `runtimeContext.page` of the Shopping API: the same bytes in both (D14).
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("attributes", ifPresent: attributes)
            json.member("data", data)
            json.member("lng", ifPresent: lng)
            json.member("location", location)
            json.member("pageNumber", ifPresent: pageNumber)
            json.member("referrer", ifPresent: referrer)
            json.member("type", type.rawValue)
            json.member("utm", ifPresent: utm)
        }
    }
}

extension GravityOptions: JSONBodyWritable {
    /// All six booleans, always, as the SDKs send their `Options`.
    func write(to json: inout JSONBodyWriter) {
        json.object { json in
            json.member("isBuildEngagementUrl", isBuildEngagementUrl)
            json.member("isImplicitImpression", isImplicitImpression)
            json.member("isImplicitPageview", isImplicitPageview)
            json.member("isReturnAnalyticsMetadata", isReturnAnalyticsMetadata)
            json.member("isReturnCounter", isReturnCounter)
            json.member("isReturnUserInfo", isReturnUserInfo)
        }
    }
}

/// `user` in a response: the canonical uid and the current session (B3, S3).
struct GravityAnsweredUser: Hashable, Sendable {
    var uid: String?
    var ses: String?

    init(uid: String?, ses: String?) {
        self.uid = uid
        self.ses = ses
    }

    init?(json: JSONValue?) {
        guard let object = json?.objectValue else { return nil }
        uid = object["uid"]?.stringValue
        ses = object["ses"]?.stringValue
    }
}

/// An auto-shown in-app campaign announced by `/visit` or `/event` (B6, O7).
public struct InAppCampaign: Sendable, Hashable {
    /// The campaign to show.
    public let campaignId: String
    /// What triggered it (`screenview`, an event type).
    public let trigger: String?
    /// Higher is shown first; none counts as 0 (as the iOS SDK sorts).
    public let priority: Int?
    /// How long to wait before showing it, once its turn has come (`delayTime`, milliseconds on
    /// the wire); none or zero shows it at once.
    public let delay: Duration?

    /// Wraps an already decoded campaign trigger.
    public init(campaignId: String, trigger: String?, priority: Int?, delay: Duration? = nil) {
        self.campaignId = campaignId
        self.trigger = trigger
        self.priority = priority
        self.delay = delay
    }
}

// MARK: - Decoding answers

/// Reads Gravity answers leniently (wire.md): unknown fields are ignored, a malformed entry,
/// variation or content is skipped, and only a malformed envelope fails: an answer that is not
/// a JSON object, or whose list (`data`, `campaigns`) is not a list.
enum GravityAnswer {
    /// `/choose`: the entries of `selector` only (wire.md § POST /choose); `nil` if the envelope
    /// is malformed. An absent or `null` `data` means nothing matched.
    static func choose(_ body: Data, selector: String) -> (ContentResponse, GravityAnsweredUser?)? {
        choose(body, selectors: [selector])
    }

    /// `/choose` of several content calls made together (B16): the entries of the selectors
    /// asked for, each naming its own, for the machine to hand each caller its own.
    static func choose(_ body: Data, selectors: Set<String>) -> (ContentResponse, GravityAnsweredUser?)? {
        guard let object = WireJSON.decode(body)?.objectValue, let data = list(object["data"]) else { return nil }
        let entries = data.compactMap(campaign).filter { $0.selector.map(selectors.contains) ?? false }
        return (ContentResponse(data: entries), GravityAnsweredUser(json: object["user"]))
    }

    /// `/visit` and `/event`: the in-app campaigns to show and the user; an empty body is an
    /// empty answer.
    static func events(_ body: Data) -> ([InAppCampaign], GravityAnsweredUser?)? {
        if body.isEmpty { return ([], nil) }
        guard let object = WireJSON.decode(body)?.objectValue, let triggers = list(object["campaigns"]) else {
            return nil
        }
        let campaigns = triggers.compactMap { trigger -> InAppCampaign? in
            guard let campaignId = trigger["campaignId"]?.stringValue else { return nil }
            let delay = trigger["delayTime"]?.numberValue.flatMap { Int(exactly: $0) }.map {
                Duration.milliseconds(max(0, min($0, 3_600_000)))  // a negative or absurd delay is none or an hour
            }
            return InAppCampaign(
                campaignId: campaignId, trigger: trigger["trigger"]?.stringValue,
                priority: trigger["priority"]?.numberValue.flatMap { Int(exactly: $0) }, delay: delay)
        }
        return (campaigns, GravityAnsweredUser(json: object["user"]))
    }

    /// An envelope list: absent or `null` is empty; any other non-array is malformed (`nil`).
    private static func list(_ value: JSONValue?) -> [JSONValue]? {
        switch value {
        case nil, .null?: return []
        case .array(let items)?: return items
        default: return nil
        }
    }

    private static func campaign(_ json: JSONValue) -> Campaign? {
        guard let object = json.objectValue else { return nil }
        return Campaign(
            selector: object["selector"]?.stringValue,
            payload: (object["payload"]?.arrayValue ?? []).compactMap(variation))
    }

    private static func variation(_ json: JSONValue) -> CampaignVariation? {
        guard let object = json.objectValue else { return nil }
        return CampaignVariation(
            campaignId: object["campaignId"]?.stringValue, experienceId: object["experienceId"]?.stringValue,
            variationId: object["variationId"]?.stringValue, decisionId: object["decisionId"]?.stringValue,
            testId: object["testId"]?.stringValue, contents: (object["contents"]?.arrayValue ?? []).compactMap(content))
    }

    private static func content(_ json: JSONValue) -> CampaignContent? {
        guard let object = json.objectValue else { return nil }
        let custom = object["custom"]?.objectValue.map { CustomModel(json: $0["json"]?.stringValue) }
        let events = (object["events"]?.arrayValue ?? []).compactMap { event -> ContentEvent? in
            guard let type = event["type"]?.stringValue else { return nil }
            return ContentEvent(type: type, urls: (event["urls"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
        return CampaignContent(
            contentId: object["contentId"]?.stringValue, contentType: object["contentType"]?.stringValue,
            deliveryMethod: object["deliveryMethod"]?.stringValue, custom: custom, events: events,
            variables: object["variables"]?.objectValue, products: products(object["products"]))
    }

    /// `content.products` (B12), as the SDKs' `Products` and `Slot` read it, leniently: a slot
    /// without an `item` object is dropped; `fallback` absent is `false`.
    private static func products(_ json: JSONValue?) -> Products? {
        guard let object = json?.objectValue else { return nil }
        let slots = object["slots"]?.arrayValue.map { $0.compactMap(slot) }
        return Products(
            strategyId: object["strategyId"]?.stringValue, fallback: object["fallback"]?.boolValue ?? false,
            name: object["name"]?.stringValue, slots: slots, pageNumber: integer(object["pageNumber"]),
            countPages: integer(object["countPages"]))
    }

    private static func slot(_ json: JSONValue) -> Slot? {
        guard let object = json.objectValue, let item = object["item"]?.objectValue else { return nil }
        let events = (object["events"]?.arrayValue ?? []).compactMap { event -> ProductEvent? in
            guard let type = event["type"]?.stringValue else { return nil }
            return ProductEvent(type: type, urls: (event["urls"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
        return Slot(
            item: item, fallback: object["fallback"]?.boolValue ?? false, strId: integer(object["strId"]),
            slotId: object["slotId"]?.stringValue, events: events)
    }

    private static func integer(_ json: JSONValue?) -> Int? {
        json?.numberValue.flatMap { Int(exactly: $0) }
    }
}
