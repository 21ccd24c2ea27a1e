import Foundation
import ShoppingAssistant

/// The host side of a session, wired to its engine: the chat screen (presenter and product
/// block builder over the carousel), the impression timers, the host app around the chat, the
/// shop it is (cart, purchase, account, push permission, events, widget), and the engine's
/// callbacks (logger, action handler, lock listener, in-app campaign handler).
/// `REPLSession` runs commands on these parts; this type only builds and connects them.
struct REPLWiring: Sendable {
    let carousel: CarouselState
    let presenter: ChatPresenter
    let host: REPLHost
    let shop: REPLShop

    /// Builds the parts and registers the builder, handler and listeners with `engine`.
    /// `clock` runs the impression timers, the widget's and the presenter's stopwatch; the
    /// shop prices from the demo catalogue when `demoCatalogue`, and makes its IDs with `uuid`.
    init(
        engine: AssistantEngine, output: REPLOutput, settings: REPLSettings, clock: any Clock<Duration>,
        activity: ActivityMonitor?, demoCatalogue: Bool, uuid: @escaping @Sendable () -> UUID
    ) async {
        let carousel = CarouselState(width: settings.width, terminalWidth: settings.terminalWidth, style: output.style)
        self.carousel = carousel
        output.fitLines { carousel.width }
        let ticker = ImpressionTicker(engine: engine, output: output, clock: clock, activity: activity)
        let widget = REPLWidget(
            engine: engine, output: output, width: { carousel.width }, clock: clock, activity: activity)
        // The presenter reports its cards to the ticker and says whether it is on screen; a
        // weak reference, because the presenter owns this callback.
        let presented = Locked(WeakPresenter())
        let presenter = ChatPresenter(
            output: output, width: { carousel.width }, elapsed: stopwatch(on: clock),
            render: { block in
                let rendering = await engine.renderProductBlock(block, layout: carousel.layout) as? CarouselRendering
                guard let rendering else { return (["(products could not be shown)"], []) }
                let visible = block.products.filter { rendering.visibleRefs.contains($0.ref) }
                return (rendering.lines, visible)
            },
            onVisibleCardsChanged: { cards in
                let isPresented = presented.withLock { $0.presenter }?.isPresented ?? false
                await ticker.visibleCardsChanged(cards, chatPresented: isPresented)
                await widget.chatPresented(isPresented)
            })
        presented.withLock { $0.presenter = presenter }
        self.presenter = presenter
        let host = REPLHost(
            engine: engine, output: output, presenter: presenter, ticker: ticker, widget: widget, settings: settings,
            activity: activity)
        self.host = host
        shop = REPLShop(
            engine: engine, output: output, host: host, widget: widget, catalogue: demoCatalogue ? .demo : .live,
            newID: uuid,
            chatProducts: { presenter.snapshot?.messages.flatMap { $0.productBlock?.products ?? [] } ?? [] },
            shownProduct: { presenter.shownProduct(sku: $0) })
        engine.logger.setListener { level, message in output.log(level, message) }
        await engine.setAssistantProductBlockBuilder(carousel.builder)
        await engine.setAssistantActionHandler(
            HostActionHandler(output: output) { [weak host] page in await host?.navigated(to: page) })
        await engine.setPresentationLockListener { locks in output.line(.dim, "(presentation lock: \(locks))") }
        await engine.setInAppCampaignHandler { campaign in
            output.line(.dim, "(in-app campaign shown: \(TerminalSanitizer.sanitize(campaign.campaignId)))")
        }
    }

    private struct WeakPresenter: Sendable {
        weak var presenter: ChatPresenter?
    }
}
