import ShoppingAssistant

/// Runs the visibility timers of the chat's product cards (PR5, PR6) on the session's clock:
/// a `VisibilityTicker` keyed by product ref (1 s continuously in the viewport, chat open,
/// window in the foreground) whose due cards it reports to the engine, with one line naming
/// the cards that counted at one moment.
final class ImpressionTicker: Sendable {
    private let timers: VisibilityTicker<AssistantProductRef>

    /// - Parameter clock: the clock of `VisibilityTicker`.
    init(engine: AssistantEngine, output: REPLOutput, clock: any Clock<Duration>, activity: ActivityMonitor?) {
        timers = VisibilityTicker(clock: clock, activity: activity) { cards in
            var counted: [String] = []
            for card in cards {
                let result = await engine.performAssistantProductAction(product: card.key, action: .visibleImpression)
                if result == .accepted { counted.append(card.label) }
            }
            Self.reportCounted(counted, to: output)
        }
    }

    /// The cards in the carousel viewport are now `cards`; `chatPresented` says whether the
    /// chat screen is showing them at all.
    func visibleCardsChanged(_ cards: [AssistantProduct], chatPresented: Bool) async {
        await timers.visibleChanged(cards.map { ($0.ref, $0.name) }, viewable: chatPresented)
    }

    /// The host showed another screen: the chat's cards are not on it.
    func screenChanged() async {
        await timers.visibleChanged([])
    }

    /// The window went to the background (not visibility, PR5) or came back.
    func windowMoved(toForeground foreground: Bool) async {
        await timers.windowMoved(toForeground: foreground)
    }

    /// One line for the cards whose impressions counted at one moment (those that came into
    /// view together), each name kept short: the carousel above shows them whole.
    static func reportCounted(_ names: [String], to output: REPLOutput, prefix: String = "(impressions: ") {
        guard !names.isEmpty else { return }
        let short = names.map { TextLayout.truncate(TerminalSanitizer.sanitize($0), to: nameColumns) }
        output.untrusted(short.joined(separator: " · ") + ")", prefix: prefix, role: .dim, width: output.width)
    }

    /// The most columns a card's name takes in the impression line.
    static let nameColumns = 32
}
