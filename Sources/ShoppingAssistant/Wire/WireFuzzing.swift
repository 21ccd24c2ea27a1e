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
        if let json = try? JSONDecoder().decode(JSONValue.self, from: data) {
            if let reply = ReplyContent(json: json, idKey: "assistantMessageId") {
                for product in reply.products ?? [] {
                    _ = product.product(ref: AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: 0))
                }
                for button in reply.buttons { _ = AssistantAction(button: button) }
            }
            for message in json["messages"]?.arrayValue ?? [] { _ = ReplyContent(json: message, idKey: "id") }
        }
        if let text = String(data: data, encoding: .utf8) { _ = AssistantConfiguration.parse(json: text) }
        for status in [200, 404, 409, 429, 503] {
            _ = WireCall.map(HTTPResponse(status: status, headers: ["Retry-After": "1"], body: data))
        }
    }
}
