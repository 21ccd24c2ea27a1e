import ShoppingAssistant

/// The host app's navigation, played by the REPL: it prints where the app would go (AC1).
/// `canHandle` is synchronous and does nothing but decide (AC4).
final class HostActionHandler: AssistantActionHandler {
    private let output: REPLOutput
    private let onNavigate: @Sendable (AssistantAction) async -> Void

    init(output: REPLOutput, onNavigate: @escaping @Sendable (AssistantAction) async -> Void) {
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
        await onNavigate(action)
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
