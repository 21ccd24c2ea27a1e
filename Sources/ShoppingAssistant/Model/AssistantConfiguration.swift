import Foundation

/// The assistant campaign's settings (C1): what the start screen shows.
public struct AssistantConfiguration: Sendable, Hashable {
    /// `false` makes preparation end in `.unavailable(.disabled)`; the other fields are then empty (C2).
    public let enabled: Bool
    /// The start screen's heading (O9); empty when the campaign gives none.
    public let title: String
    /// The line under the heading, when the campaign has one.
    public let subtitle: String?
    /// The start screen's suggests, in the campaign's order; later suggests come from replies (C7).
    public let suggests: [String]

    /// For a host's tests and previews; the engine builds its own from the campaign (C1).
    public init(enabled: Bool, title: String, subtitle: String?, suggests: [String]) {
        self.enabled = enabled
        self.title = title
        self.subtitle = subtitle
        self.suggests = suggests
    }

    /// Parses one `custom.json` string strictly: `enabled` must be a boolean, the other known
    /// fields must have their types when present (unless disabled, C2), unknown fields are
    /// ignored (C3, C6).
    static func parse(json: String) -> AssistantConfiguration? {
        guard let value = try? JSONValue(parsing: json),
            let object = value.objectValue,
            let enabled = object["enabled"]?.boolValue
        else { return nil }
        // C2: a disabled assistant's other fields are not used, so they cannot make it invalid.
        guard enabled else { return AssistantConfiguration(enabled: false, title: "", subtitle: nil, suggests: []) }
        func optionalString(_ key: String) -> String?? {
            switch object[key] {
            case nil, .null?: return .some(nil)
            case .string(let text)?: return .some(text)
            default: return nil
            }
        }
        guard let title = optionalString("title"), let subtitle = optionalString("subtitle") else { return nil }
        var suggests: [String] = []
        switch object["suggests"] {
        case nil, .null?: break
        case .array(let items)?:
            let strings = items.compactMap(\.stringValue)
            guard strings.count == items.count else { return nil }
            suggests = strings
        default: return nil
        }
        return AssistantConfiguration(enabled: enabled, title: title ?? "", subtitle: subtitle, suggests: suggests)
    }
}

/// The outcome of reading the assistant selector's content (C2–C6), before identity is known.
enum ConfigurationOutcome: Sendable, Hashable {
    case ready(AssistantConfiguration, campaignId: String?)
    case unavailable(AssistantUnavailableReason)
    case invalid(String)

    init(_ response: ContentResponse) {
        let contents = response.variations.flatMap { variation in variation.contents.map { (variation, $0) } }
        guard !contents.isEmpty else {
            self = .unavailable(.notFound)  // C5: a typo or an inactive campaign
            return
        }
        var configurations: [(AssistantConfiguration, String?)] = []
        for (campaign, content) in contents {
            guard let json = content.custom?.json else {
                self = .invalid("a selected content carries no custom.json")  // C5, C6
                return
            }
            guard let configuration = AssistantConfiguration.parse(json: json) else {
                self = .invalid("the assistant configuration cannot be parsed")  // C6
                return
            }
            configurations.append((configuration, campaign.campaignId))
        }
        let distinct = Set(configurations.map(\.0))
        guard distinct.count == 1, let (configuration, campaignId) = configurations.first else {
            self = .invalid("\(distinct.count) different configurations for one selector")  // C4
            return
        }
        self = configuration.enabled ? .ready(configuration, campaignId: campaignId) : .unavailable(.disabled)
    }
}
