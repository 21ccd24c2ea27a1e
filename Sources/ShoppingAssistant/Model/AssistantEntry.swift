import Foundation

/// The host's "ask the assistant" button settings from the entry campaign (E1).
public struct AssistantEntry: Sendable, Hashable {
    /// Whether the host shows its entry button at all; `false` hides it even when the campaign exists.
    public let enabled: Bool
    /// The button's label; empty when the campaign gives none, so the host uses its own.
    public let title: String

    /// For a host's tests and previews; real entries come from `parse(_:)`.
    public init(enabled: Bool, title: String) {
        self.enabled = enabled
        self.title = title
    }

    /// Reads the entry from a `getContentBySelector` result. Returns `nil` — button hidden —
    /// when the request failed, nothing matched, or the JSON is malformed (E1).
    ///
    /// Only the one selected content is used: the first content of the first campaign that
    /// has one. Variations of different campaigns are never merged (E2).
    public static func parse(_ response: ContentResponse?) -> AssistantEntry? {
        guard let content = response?.variations.lazy.compactMap({ $0.contents.first }).first,
            let json = content.custom?.json,
            let object = (try? JSONValue(parsing: json))?.objectValue,
            let enabled = object["enabled"]?.boolValue
        else { return nil }
        switch object["title"] {
        case .string(let title)?: return AssistantEntry(enabled: enabled, title: title)
        case nil, .null?: return AssistantEntry(enabled: enabled, title: "")
        default: return nil
        }
    }
}
