import Foundation

/// Entry points for the fuzzer over every decoder that reads server bytes. Not API: the SPI
/// lets the fuzz target reach internal decoders without widening the public surface.
@_spi(Fuzzing)
public enum WireFuzzing {
    /// Feeds `data` to every wire decoder as a response body. Must never crash or hang.
    public static func decodeResponses(_ data: Data) {
        if let choose = try? JSONDecoder().decode(GravityChooseResponse.self, from: data) {
            let content = ContentResponse(wire: choose)
            _ = ConfigurationOutcome(content)
            _ = AssistantEntry.parse(content)
        }
        _ = try? JSONDecoder().decode(GravityEventResponse.self, from: data)
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
