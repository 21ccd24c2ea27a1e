import ShoppingAssistant

/// The host app the REPL plays around the chat screen: its screens and their E-flow
/// (`ScreenController`), the entry button, the screens the action handler navigates to,
/// identity changes, the app's own presentation lock and the window's foreground state.
actor REPLHost {
    private let engine: AssistantEngine
    private let output: REPLOutput
    private let presenter: ChatPresenter
    private let ticker: ImpressionTicker
    /// The recommendation widget on the screen, if `:widget` drew one.
    private let widget: REPLWidget
    private let screens: ScreenController
    private let assistantSelector: String
    /// Piped sessions wait for each screen's flow to finish, so their output is deterministic.
    private let waitsForScreens: Bool
    /// Whether the terminal window is in the foreground (PR5: the background is not visibility).
    private(set) var isForeground = true
    /// The widget every screen draws (`:widget on`), fetched with its entry button (B16).
    private(set) var screenWidget: String?

    init(
        engine: AssistantEngine, output: REPLOutput, presenter: ChatPresenter, ticker: ImpressionTicker,
        widget: REPLWidget, settings: REPLSettings, activity: ActivityMonitor?
    ) {
        self.engine = engine
        self.output = output
        self.presenter = presenter
        self.ticker = ticker
        self.widget = widget
        self.assistantSelector = settings.assistantSelector
        waitsForScreens = !settings.interactive
        screens = ScreenController(
            engine: engine, output: output, entrySelector: settings.entrySelector,
            assistantSelector: settings.assistantSelector, activity: activity)
    }

    /// The screen the app is on.
    var page: PageContext? {
        get async { await screens.page }
    }

    /// The entry button's title while it is shown.
    var entryButton: String? {
        get async { await screens.entryButton }
    }

    // MARK: - Screens (E)

    /// `onScreenShown`: the user went to `page`, or the app navigated there.
    func show(_ page: PageContext) async {
        await ticker.screenChanged()  // the chat's cards are not on this screen
        await widget.screenChanged()  // nor the widget of the screen before
        output.line(.dim, "(screen: \(Self.describe(page)))")
        let onScreen = screenWidget.map { selector in
            ScreenController.Widget(selector: selector) { [widget] in await widget.present($0, selector: selector) }
        }
        await screens.show(page, widget: onScreen)
        if waitsForScreens { await screens.settle() }
    }

    /// `:widget on` / `:widget off`: every screen shown from now on draws the widget of
    /// `selector`, or none.
    func setScreenWidget(_ selector: String?) {
        screenWidget = selector
    }

    /// `onEntryTap`.
    func tapEntry() async {
        guard let result = await screens.tapEntry(presenter: presenter) else {
            output.line(.warning, "no entry button on this screen (yet)")
            return
        }
        await widget.chatPresented(presenter.isPresented)  // the chat covers the screen's widget
        if result != .opened { output.line(.warning, OutcomeWording.open(result)) }
    }

    /// Calls `prepareAssistant` for the current screen directly and shows the result.
    func prepare(selector: String?) async {
        guard let page = await screens.page else {
            output.line(.warning, "go to a screen first")
            return
        }
        let selector = selector ?? assistantSelector
        let result = await engine.prepareAssistant(assistantSelector: selector, pageContext: page)
        output.line(
            .dim, "(prepareAssistant \(TerminalSanitizer.sanitize(selector)): \(ScreenController.describe(result)))")
    }

    /// The action handler navigated (after the chat closed, PR10): the app is on `page` now.
    func navigated(to page: PageContext) async {
        await show(page)
    }

    // MARK: - Identity

    /// Logs in as `userID`: `onScreenHiddenOrIdentityChanged`, then the current screen shows
    /// again for the new identity, so its view reports the new user and the button is
    /// prepared for them.
    func logIn(_ userID: String, sessionID: String?) async {
        await changeIdentity(note: "(identity changed to \(TerminalSanitizer.sanitize(userID)))") {
            await $0.setUser(userId: userID, sessionId: sessionID)
        }
    }

    /// Forgets the user: a new anonymous identity, then the current screen shows again.
    func logOut() async {
        await changeIdentity(note: "(identity reset)") { await $0.resetIdentity() }
    }

    /// `:restore-uid UID`: the app hands back a uid it kept elsewhere (B14).
    func restoreUserId(_ uid: String) async {
        await changeIdentity(note: "(uid restored: \(TerminalSanitizer.sanitize(uid)))") {
            try? await $0.restoreUserId(uid)
        }
    }

    private func changeIdentity(note: String, _ change: @Sendable (AssistantEngine) async -> Void) async {
        await screens.hideOrIdentityChanged()
        await change(engine)
        output.line(.dim, note)
        if let page = await screens.page { await show(page) }
    }

    // MARK: - The app's presentation lock and window (B6, PR5)

    func lockPresentation() async { await engine.lockPresentation() }

    func unlockPresentation() async { await engine.unlockPresentation() }

    /// The window went to the background or came back; visibility starts again from zero (PR5).
    func setForeground(_ foreground: Bool) async {
        isForeground = foreground
        presenter.setAvailability(foreground ? .available : .notVisible)
        await ticker.windowMoved(toForeground: foreground)
        await widget.windowMoved(toForeground: foreground)
        output.line(.dim, foreground ? "(window in the foreground)" : "(window in the background)")
        if foreground {
            await ticker.visibleCardsChanged(presenter.visibleCards, chatPresented: presenter.isPresented)
        }
    }

    // MARK: - Pages

    static let homePage = PageContext(type: .homepage, location: "app://home")

    /// A product page: where `:product SKU` goes and where a product tap navigates.
    static func productPage(_ sku: String) -> PageContext {
        PageContext(type: .product, data: [sku], location: "app://product/\(sku)")
    }

    /// A category path such as `Посуда/Кружки`.
    static func categoryPage(_ path: String) -> PageContext {
        PageContext(
            type: .category, data: path.split(separator: "/").map(String.init), location: "app://category/\(path)")
    }

    static func searchPage(_ query: String) -> PageContext {
        PageContext(type: .search, data: [query], location: "app://search")
    }

    static func cartPage(_ skus: [String]) -> PageContext {
        PageContext(type: .cart, data: skus, location: "app://cart")
    }

    /// Any other screen, such as the web page of a product without a SKU.
    static func otherPage(_ location: String) -> PageContext {
        PageContext(type: .other, location: location.isEmpty ? "app://other" : location)
    }

    /// The screen as the prompt and `(screen: …)` show it: its type and data, and the location
    /// of an `other` screen, which has nothing else to tell it apart.
    static func describe(_ page: PageContext) -> String {
        var parts = [page.type.description]
        let data = page.data.joined(separator: ",")
        if !data.isEmpty { parts.append(data) }
        if page.type == .other, data.isEmpty, !page.location.isEmpty, page.location != "app://other" {
            parts.append(page.location)
        }
        return TerminalSanitizer.sanitize(parts.joined(separator: " "))
    }
}
