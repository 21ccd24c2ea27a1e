import ShoppingAssistant

/// The recommendation widget the host app renders itself on its screen (`:widget`, B12): a
/// content fetched with `getContentBySelector`, its `products.slots` drawn as cards, and what
/// the shopper does with it reported through the engagement calls, as seed 000's manual
/// rendering asks — the engine sends none of these by itself.
///
/// - Drawn for the first time: `ContentImpressionEngagement`, once per content fetched.
/// - In view for 1 s without a break (`VisibilityTicker`: on its screen, the chat closed, the
///   window in the foreground): `ContentVisibleImpressionEngagement` for the widget and
///   `ProductVisibleImpressionEngagement` for each card in the viewport, once each.
/// - `:widget tap N`: `ProductClickEngagement`, before the app navigates to the product.
/// - `:widget close`: `ContentCloseEngagement`. Another screen takes the widget away without
///   a close: the shopper did not close it.
actor REPLWidget {
    /// What a visibility timer runs for: the widget of one fetch, or one of its slots.
    struct Key: Sendable, Hashable {
        let fetch: Int
        /// The slot's index; nil for the widget itself.
        let slot: Int?
    }

    /// A product of the widget, for prices on live services (`REPLShop`).
    struct Product: Sendable, Hashable {
        let sku: String
        let name: String?
        let price: Double?
        let currency: String?
    }

    /// What a tap on a card did.
    enum Tap: Sendable, Hashable {
        /// The click was reported; the app goes to `page`.
        case navigate(PageContext)
        /// There is no widget on screen.
        case noWidget
        /// No card with that number is on screen, or it cannot be tapped.
        case notOnScreen
    }

    private struct Shown: Sendable {
        let fetch: Int
        let title: String
        let campaign: Campaign
        let content: CampaignContent
        let slots: [Slot]
        let cards: [CarouselCard]
        var offset = 0
        var visible: Range<Int> = 0..<0
    }

    private let engine: AssistantEngine
    private let output: REPLOutput
    private let width: @Sendable () -> Int
    private let timers: VisibilityTicker<Key>
    private var shown: Shown?
    private var fetches = 0
    /// Counts the screens the app showed: a widget fetched for one is not drawn on the next.
    private var screens = 0
    /// Whether the chat is on screen, over the app's screen and its widget.
    private var chatPresented = false

    init(
        engine: AssistantEngine, output: REPLOutput, width: @escaping @Sendable () -> Int, clock: any Clock<Duration>,
        activity: ActivityMonitor?
    ) {
        self.engine = engine
        self.output = output
        self.width = width
        let seen = Locked<[Key: (content: CampaignContent, campaign: Campaign, slot: Slot?)]>([:])
        self.seen = seen
        timers = VisibilityTicker(clock: clock, activity: activity) { keys in
            for key in keys.map(\.key) {
                guard let shown = seen.withLock({ $0[key] }) else { continue }
                if let slot = shown.slot {
                    await engine.sendProductEngagement(
                        ProductVisibleImpressionEngagement(slot: slot, content: shown.content, campaign: shown.campaign)
                    )
                } else {
                    await engine.sendContentEngagement(
                        ContentVisibleImpressionEngagement(content: shown.content, campaign: shown.campaign))
                }
            }
            ImpressionTicker.reportCounted(keys.map(\.label), to: output, prefix: "(widget seen: ")
        }
    }

    /// What each visibility key reports, for the ticker's callback, which runs outside the actor.
    private let seen: Locked<[Key: (content: CampaignContent, campaign: Campaign, slot: Slot?)]>

    // MARK: - Commands

    /// Fetches the content of `selector` for `page` and draws the first of its contents that
    /// has product slots; says why when there is none.
    func show(selector: String, page: PageContext) async {
        let screen = screens
        let response = await engine.getContentBySelector(selector: selector, pageContext: page)
        guard screen == screens else {
            return output.line(.dim, "(the widget of the screen before is not drawn: another screen is showing)")
        }
        await present(response, selector: selector)
    }

    /// Draws the first content of `response` (the content of `selector`, fetched) that has
    /// product slots; says why when there is none, or when the fetch failed (`nil`).
    func present(_ response: ContentResponse?, selector: String) async {
        let name = TerminalSanitizer.sanitize(selector)
        guard let response else {
            output.line(.warning, "no widget: the content of \(name) could not be fetched (the log says why)")
            return
        }
        let found = response.data.lazy.flatMap { campaign in
            campaign.payload.lazy.flatMap(\.contents).map { (campaign, $0) }
        }.first { !($0.1.products?.slots ?? []).isEmpty }
        guard let (campaign, content) = found else {
            output.line(
                .warning,
                response.isEmpty
                    ? "no widget: nothing for \(name) on this screen"
                    : "no widget: the content of \(name) has no products to draw")
            return
        }
        await takeAway()
        fetches += 1
        let slots = content.products?.slots ?? []
        let title = Self.title(of: content) ?? selector
        shown = Shown(
            fetch: fetches, title: title, campaign: campaign, content: content, slots: slots,
            cards: slots.map(Self.card))
        seen.withLock { $0 = [:] }
        await draw()
        await engine.sendContentEngagement(ContentImpressionEngagement(content: content, campaign: campaign))
        output.untrusted(title + ")", prefix: "(widget impression: ", role: .dim, width: width())
    }

    /// Reports a click on card `number` and says where the app goes.
    func tap(_ number: Int) async -> Tap {
        guard let shown else { return .noWidget }
        let index = number - 1
        guard shown.visible.contains(index), let page = Self.page(of: shown.slots[index]) else { return .notOnScreen }
        await engine.sendProductEngagement(
            ProductClickEngagement(slot: shown.slots[index], content: shown.content, campaign: shown.campaign))
        output.untrusted(shown.cards[index].name + ")", prefix: "(widget click: ", role: .dim, width: width())
        return .navigate(page)
    }

    /// The shopper closed the widget; false when there is none.
    func close() async -> Bool {
        guard let shown else { return false }
        await takeAway()
        await engine.sendContentEngagement(ContentCloseEngagement(content: shown.content, campaign: shown.campaign))
        output.line(.dim, "(widget closed)")
        return true
    }

    /// Scrolls the widget's cards by a page; says so when there is no widget or it is at the end.
    func scroll(by pages: Int) async {
        guard var current = shown else {
            output.line(.warning, "no widget on screen: :widget fetches one")
            return
        }
        let perPage = max(1, current.visible.count)
        if pages < 0 ? current.visible.lowerBound == 0 : current.visible.upperBound >= current.cards.count {
            output.line(.dim, pages < 0 ? "(at the first card already)" : "(at the last card already)")
            return
        }
        current.offset = min(max(0, current.visible.lowerBound + pages * perPage), max(0, current.cards.count - 1))
        shown = current
        await draw()
    }

    // MARK: - What the app's screen does

    /// Another screen: the widget is not on it (no close: the shopper did not close it).
    func screenChanged() async {
        screens += 1
        await takeAway()
    }

    /// The window went to the background (not visibility) or came back.
    func windowMoved(toForeground foreground: Bool) async {
        await timers.windowMoved(toForeground: foreground)
    }

    /// The chat opened over the app's screen, or closed.
    func chatPresented(_ presented: Bool) async {
        chatPresented = presented
        await timers.viewableChanged(!presented)
    }

    /// The products of the widget on screen, for prices on live services.
    var products: [Product] {
        (shown?.slots ?? []).compactMap { slot in
            guard let sku = slot.item["sku"]?.stringValue, !sku.isEmpty else { return nil }
            return Product(
                sku: sku, name: slot.item["name"]?.stringValue, price: slot.item["price"]?.numberValue,
                currency: slot.item["currency"]?.stringValue)
        }
    }

    // MARK: - Drawing

    /// Draws the widget at its offset and starts the visibility timers of what is in view.
    private func draw() async {
        guard var current = shown else { return }
        let drawn = CarouselBuilder(scrollOffset: current.offset, style: output.style).draw(
            current.cards, title: current.title, width: width())
        current.visible = drawn.visible
        shown = current
        let output = self.output
        let lines = drawn.lines
        await output.grouped { @Sendable in
            for line in lines { output.line(line) }
            output.line(.dim, "widget: :widget tap N, :widget left/right, :widget close")
        }
        let fetch = current.fetch
        var inView: [(key: Key, label: String)] = [(Key(fetch: fetch, slot: nil), current.title)]
        inView += drawn.visible.map { (Key(fetch: fetch, slot: $0), current.cards[$0].name) }
        seen.withLock { seen in
            for (key, _) in inView {
                seen[key] = (current.content, current.campaign, key.slot.map { current.slots[$0] })
            }
        }
        await timers.visibleChanged(inView, viewable: !chatPresented)
    }

    /// The widget leaves the screen: nothing of it is in view any more.
    private func takeAway() async {
        shown = nil
        await timers.visibleChanged([])
    }

    // MARK: - Reading a slot

    /// The widget's heading: the first text of its server-driven `variables.elements`, else the
    /// strategy's name.
    static func title(of content: CampaignContent) -> String? {
        let text = content.variables?["elements"]?.arrayValue?.first { $0["type"]?.stringValue == "text" }?["text"]?
            .stringValue
        return [text, content.products?.name].compactMap { $0 }.first { !$0.isEmpty }
    }

    /// The card a slot draws as: the feed's fields as the chat's cards show them; a slot
    /// without a SKU or a URL cannot be tapped (nowhere to go).
    static func card(_ slot: Slot) -> CarouselCard {
        let item = slot.item
        let text = { (key: String) in item[key]?.stringValue }
        return CarouselCard(
            name: text("name") ?? "", imageUrl: text("imageUrl"), price: price(item["price"]),
            oldPrice: price(item["oldPrice"]), currency: text("currency"), brand: text("brand"),
            category: text("category"), unavailable: page(of: slot) == nil ? "not available" : nil)
    }

    /// Where a tap on the slot goes: its product page by SKU, else its URL.
    static func page(of slot: Slot) -> PageContext? {
        if let sku = slot.item["sku"]?.stringValue, !sku.isEmpty { return REPLHost.productPage(sku) }
        if let url = slot.item["url"]?.stringValue, !url.isEmpty { return REPLHost.otherPage(url) }
        return nil
    }

    private static func price(_ value: JSONValue?) -> AssistantPrice? {
        if let number = value?.numberValue { return .amount(number) }
        return value?.stringValue.map(AssistantPrice.text)
    }
}
