import Foundation

/// Entry points for the fuzzer over every decoder that reads server bytes. Not API: `package`, so
/// the fuzz target reaches internal decoders without widening the public surface.
package enum WireFuzzing {
    /// Feeds `data` to every wire decoder as a response body. Must never crash or hang.
    package static func decodeResponses(_ data: Data) {
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

extension WireFuzzing {
    /// What a decoded reply shows of itself, in public types, so that a reference decoder
    /// outside this module can be compared with `ReplyDecoder` field by field.
    package struct ReplySummary: Sendable, Hashable {
        package struct Product: Sendable, Hashable {
            /// The host's product, under `WireFuzzing.productRef`.
            package var product: AssistantProduct
            package var clickURLs: [String]
            package var visibleImpressionURLs: [String]

            package init(product: AssistantProduct, clickURLs: [String], visibleImpressionURLs: [String]) {
                self.product = product
                self.clickURLs = clickURLs
                self.visibleImpressionURLs = visibleImpressionURLs
            }
        }

        package struct Button: Sendable, Hashable {
            package var payload: [String: JSONValue]
            package var actionName: String?
            package var action: AssistantAction?
            /// The label shown, for buttons that are offered.
            package var title: String?

            package init(payload: [String: JSONValue], actionName: String?, action: AssistantAction?, title: String?) {
                self.payload = payload
                self.actionName = actionName
                self.action = action
                self.title = title
            }
        }

        package var assistantMessageId: String?
        package var replyTo: String?
        package var text: String
        package var productsTitle: String?
        package var products: [Product]?
        package var suggests: [String]
        package var buttons: [Button]
        package var impressionURLs: [String]
        package var diagnostics: [String]

        package init(
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
    package static let productRef = AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: 0)

    /// Decodes `data` as a `/v1/messages` reply (or, with `historyMessage`, as one history
    /// message, whose ID key is `id`) and summarises it; `nil` when the decoder rejects it.
    package static func decodeReply(_ data: [UInt8], historyMessage: Bool) -> ReplySummary? {
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
    package static func isValidHTTPURL(_ text: String) -> Bool { HTTPURLValidator.isValid(text) }
}
