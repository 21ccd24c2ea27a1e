import Foundation

/// Entry points for the fuzzer over every decoder that reads server bytes. Not API: the SPI
/// lets the fuzz target reach internal decoders without widening the public surface.
@_spi(Fuzzing)
public enum WireFuzzing {
    /// Feeds `data` to every wire decoder as a response body. Must never crash or hang.
    public static func decodeResponses(_ data: Data) {
        if let (content, _) = GravityAnswer.choose(data, selector: "shopping-assistant") {
            _ = ConfigurationOutcome(content)
            _ = AssistantEntry.parse(content)
            _ = content.variations.flatMap(\.contents).flatMap(\.loadTrackingURLs)
        }
        _ = GravityAnswer.events(data)
        if let reply = ReplyDecoder.decode(data, idKey: .assistantMessageId) {
            for product in reply.products ?? [] {
                _ = product.product(ref: AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: 0))
                _ = product.extra
                _ = product.tracking
            }
            for button in reply.buttons { _ = button.action }
            _ = (reply.text, reply.suggests, reply.impressionURLs, reply.productsTitle, reply.replyTo)
        }
        for message in HistoryDecoder.decode(data) ?? [] { _ = message.reply }
        if let text = String(data: data, encoding: .utf8) { _ = AssistantConfiguration.parse(json: text) }
        for status in [200, 404, 409, 429, 503] {
            _ = WireCall.map(HTTPResponse(status: status, headers: ["Retry-After": "1"], body: data))
        }
    }
}

// MARK: - Differential checks

@_spi(Fuzzing)
extension WireFuzzing {
    /// What a decoded reply shows of itself, in public types, so that a reference decoder
    /// outside this module can be compared with `ReplyDecoder` field by field.
    public struct ReplySummary: Sendable, Hashable {
        public struct Product: Sendable, Hashable {
            /// The host's product, under `WireFuzzing.productRef`.
            public var product: AssistantProduct
            public var clickURLs: [String]
            public var visibleImpressionURLs: [String]

            public init(product: AssistantProduct, clickURLs: [String], visibleImpressionURLs: [String]) {
                self.product = product
                self.clickURLs = clickURLs
                self.visibleImpressionURLs = visibleImpressionURLs
            }
        }

        public struct Button: Sendable, Hashable {
            public var payload: [String: JSONValue]
            public var actionName: String?
            public var action: AssistantAction?
            /// The label shown, for buttons that are offered.
            public var title: String?

            public init(payload: [String: JSONValue], actionName: String?, action: AssistantAction?, title: String?) {
                self.payload = payload
                self.actionName = actionName
                self.action = action
                self.title = title
            }
        }

        public var assistantMessageId: String?
        public var replyTo: String?
        public var text: String
        public var productsTitle: String?
        public var products: [Product]?
        public var suggests: [String]
        public var buttons: [Button]
        public var impressionURLs: [String]
        public var diagnostics: [String]

        public init(
            assistantMessageId: String?, replyTo: String?, text: String, productsTitle: String?, products: [Product]?,
            suggests: [String], buttons: [Button], impressionURLs: [String], diagnostics: [String]
        ) {
            self.assistantMessageId = assistantMessageId
            self.replyTo = replyTo
            self.text = text
            self.productsTitle = productsTitle
            self.products = products
            self.suggests = suggests
            self.buttons = buttons
            self.impressionURLs = impressionURLs
            self.diagnostics = diagnostics
        }
    }

    /// The ref every summarised product carries.
    public static let productRef = AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: 0)

    /// Decodes `data` as a `/v1/messages` reply (or, with `historyMessage`, as one history
    /// message, whose ID key is `id`) and summarises it; `nil` when the decoder rejects it.
    public static func decodeReply(_ data: [UInt8], historyMessage: Bool) -> ReplySummary? {
        guard let reply = ReplyDecoder.decode(data, idKey: historyMessage ? .id : .assistantMessageId) else {
            return nil
        }
        return ReplySummary(
            assistantMessageId: reply.assistantMessageId, replyTo: reply.replyTo, text: reply.text,
            productsTitle: reply.productsTitle,
            products: reply.products?.map {
                ReplySummary.Product(
                    product: $0.product(ref: productRef), clickURLs: $0.tracking.clickURLs,
                    visibleImpressionURLs: $0.tracking.visibleImpressionURLs)
            }, suggests: reply.suggests,
            buttons: reply.buttons.map { button in
                let action = button.action
                return ReplySummary.Button(
                    payload: button.payload, actionName: button.actionName, action: action,
                    title: action == nil ? nil : button.title)
            }, impressionURLs: reply.impressionURLs, diagnostics: reply.diagnostics)
    }

    /// The engine's check of tracking and `follow_url` URLs.
    public static func isValidHTTPURL(_ text: String) -> Bool { HTTPURLValidator.isValid(text) }
}
