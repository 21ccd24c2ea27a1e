import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting
import Testing

/// Builders shared by the conformance suites, which check the engine against the behaviour
/// of the vendor's public SDKs (`gravity-sdk-ios` 1.0.4, `gravity-sdk-flutter`,
/// `gravity-sdk-android`). Each test names the peer code or test it mirrors.
enum Peer {
    /// The `device` object every request carries, as the fixed SDKs encode it: the user agent
    /// under `ua` (flutter `device.dart`, Android `Device`; iOS 1.0.4 still says `userAgent`),
    /// describing the host app; no id: the engine has none unless the host gives one.
    static var device: [String: Any] {
        [
            "ua": AssistantEngineConfiguration(apiKey: "k", section: "s").deviceUserAgent,
            "permission": "unknown", "tracking": "notSupported",
        ]
    }

    /// The `User-Agent` header of every request: this SDK, not the HTTP library.
    static var userAgentHeader: String? { AssistantEngineConfiguration(apiKey: "k", section: "s").userAgent }

    /// The iOS SDK's `Options()`.
    static var options: [String: Any] {
        [
            "isReturnCounter": false, "isReturnUserInfo": false, "isReturnAnalyticsMetadata": false,
            "isImplicitPageview": false, "isImplicitImpression": true, "isBuildEngagementUrl": true,
        ]
    }

    /// `Fixtures.productPage` as sent: upper-case type, SDK attributes added.
    static var productContext: [String: Any] {
        [
            "type": "PRODUCT", "data": ["SKU-123"], "location": "app://product/SKU-123",
            "attributes": [
                "app_version": AssistantEngineConfiguration.sdkVersion,
                "sdk_version": AssistantEngineConfiguration.wireSDKVersion,
                "app_platform": AssistantEngineConfiguration.platform,
            ],
        ]
    }

    /// A `/choose` answer with one entry per selector, each holding one Custom JSON content,
    /// optionally with `variables.onLoad` and load URLs (B7).
    static func choose(
        _ entries: [(selector: String, json: String)], uid: String? = "u-8f3c", ses: String = "s-1",
        loadURLs: [String] = [], onLoad: String? = nil
    ) -> HTTPResponse {
        let data: [[String: Any]] = entries.enumerated().map { index, entry in
            var content: [String: Any] = [
                "contentId": "ct-\(index)", "deliveryMethod": "inline", "contentType": "custom",
                "custom": ["json": entry.json],
                "events": [
                    ["type": "load", "urls": loadURLs], ["type": "impression", "urls": ["https://t.example/i"]],
                ],
            ]
            if let onLoad { content["variables"] = ["onLoad": ["action": onLoad], "elements": []] }
            return [
                "selector": entry.selector,
                "payload": [
                    [
                        "campaignId": "c-\(entry.selector)", "experienceId": "e", "variationId": "v",
                        "decisionId": "d-\(index)", "contents": [content],
                    ]
                ],
            ]
        }
        var body: [String: Any] = ["data": data]
        if let uid { body["user"] = ["uid": uid, "ses": ses] }
        return .json(200, body)
    }

    /// A request body as a Foundation object graph, for exact comparison with a golden body.
    static func golden(_ request: HTTPRequest?) -> NSDictionary {
        Fixtures.body(request) as NSDictionary
    }
}
