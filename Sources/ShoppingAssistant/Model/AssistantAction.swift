import Foundation

/// Where the host should navigate after the chat closed (AC1).
public enum AssistantAction: Sendable, Hashable {
    /// The shopper tapped a product card; open its page, by SKU or URL (PR10). Sent once, after the
    /// chat has closed.
    case openProduct(AssistantProduct)
    /// `payload` is the server button object, keys as received (AC2).
    case openSupportChat(payload: [String: JSONValue])
    /// A `follow_url` button; the URL passed the engine's http(s) check, so it is safe to open (AC3).
    case followUrl(URL)
    /// Any other button `action`, named by `type`, with the whole button object as `payload`
    /// (AC2, AC3); offered only when `canHandle` accepts it (AC4).
    case custom(type: String, payload: [String: JSONValue])

    /// Routes a server reply button (AC3). A `follow_url` without a valid http(s) URL yields
    /// `nil`, so it is never offered; a button without a string `action` is not a button.
    /// "Valid" is the engine's strict check of absolute http(s) URLs, the same as for
    /// tracking URLs: RFC 3986 ASCII, a host, no user info.
    public init?(button: [String: JSONValue]) {
        guard let action = button["action"]?.stringValue, !action.isEmpty else { return nil }
        switch action {
        case "follow_url":
            guard let raw = button["url"]?.stringValue, HTTPURLValidator.isValid(raw), let url = URL(string: raw)
            else { return nil }
            self = .followUrl(url)
        case "open_support_chat":
            self = .openSupportChat(payload: button)
        default:
            self = .custom(type: action, payload: button)
        }
    }

    /// The wire name of the action, as sent in `chat_action` events.
    public var name: String {
        switch self {
        case .openProduct: return "open_product"
        case .openSupportChat: return "open_support_chat"
        case .followUrl: return "follow_url"
        case .custom(let type, _): return type
        }
    }
}
