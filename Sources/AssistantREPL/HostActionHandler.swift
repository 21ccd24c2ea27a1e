import ShoppingAssistant

/// The host app's navigation, played by the REPL: it prints where the app goes (AC1) and
/// hands the destination to the host, which shows that screen. `canHandle` is synchronous
/// and does nothing but decide (AC4).
final class HostActionHandler: AssistantActionHandler {
    private let output: REPLOutput
    private let onNavigate: @Sendable (PageContext) async -> Void

    /// - Parameter onNavigate: shows the screen an action leads to, once the chat has closed
    ///   (PR10).
    init(output: REPLOutput, onNavigate: @escaping @Sendable (PageContext) async -> Void) {
        self.output = output
        self.onNavigate = onNavigate
    }

    func canHandle(_ action: AssistantAction) -> Bool {
        switch action {
        case .openProduct, .openSupportChat, .followUrl: return true
        case .custom(let type, _): return type == "add_to_cart"
        }
    }

    func handle(_ action: AssistantAction) async {
        output.singleLine(.success, prefix: "→ navigate: ", Self.describe(action))
        if let page = Self.destination(of: action) { await onNavigate(page) }
    }

    /// The app screen an action opens: a product's page by its SKU, the page at its URL when it
    /// has none (PR1). Support chats, outside links and cart actions stay on the current screen.
    static func destination(of action: AssistantAction) -> PageContext? {
        guard case .openProduct(let product) = action else { return nil }
        if let sku = product.sku, !sku.isEmpty { return REPLHost.productPage(sku) }
        if let url = product.url, !url.isEmpty { return REPLHost.otherPage(url) }
        return nil
    }

    static func describe(_ action: AssistantAction) -> String {
        switch action {
        case .openProduct(let product):
            let target = product.sku.map { "SKU \($0)" } ?? product.url ?? product.itemId
            return "product page \(TerminalSanitizer.sanitize(target)) (\(TerminalSanitizer.sanitize(product.name)))"
        case .openSupportChat(let payload):
            let topic = payload["topic"]?.stringValue.map { " topic=\(TerminalSanitizer.sanitize($0))" } ?? ""
            return "support chat\(topic)"
        case .followUrl(let url):
            return "open URL \(TerminalSanitizer.sanitize(url.absoluteString))"
        case .custom(let type, let payload):
            let sku = payload["sku"]?.stringValue.map { " sku=\(TerminalSanitizer.sanitize($0))" } ?? ""
            return "custom action \(TerminalSanitizer.sanitize(type))\(sku)"
        }
    }
}
