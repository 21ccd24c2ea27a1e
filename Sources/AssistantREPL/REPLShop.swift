import DemoStore
import Foundation
import ShoppingAssistant

/// The shop around the chat (`:cart`, `:buy`, `:wish`, `:login`, `:signup`, `:push`,
/// `:event`, `:widget`): what an e-commerce app does besides its screens, reported as the base
/// SDK's typed events (B10), the notification permission (B11) and the engagement of a widget
/// the app renders itself (B12), so the whole base SDK can be exercised from the prompt.
///
/// Every event carries the page context of the screen the app is on; before any screen there
/// is none, and nothing is sent. Prices come from the demo catalogue on the demo store (and in
/// a replay, which plays the demo store, as `:fault` does). Live services have no catalogue the
/// REPL could read: a price comes from a product the session has been shown (a reply's card or
/// a widget's slot, by exact SKU), or from the command (`@PRICE`).
actor REPLShop {
    /// Where a product's price comes from.
    enum Catalogue: Sendable, Hashable {
        /// The demo store's catalogue (`DemoCatalog`), in roubles.
        case demo
        /// None: the products the session was shown, or a price typed with the command.
        case live
    }

    /// A product with the price the cart and the events use.
    struct Priced: Sendable, Hashable {
        /// The SKU as the catalogue or the answer spells it (`productId` goes byte for byte).
        let sku: String
        let name: String?
        let unitPrice: Decimal
        let currency: String?
    }

    /// The currency of the demo catalogue's prices (its items carry `currency` `RUB`).
    static let demoCurrency = "RUB"

    private let engine: AssistantEngine
    private let output: REPLOutput
    private let host: REPLHost
    private let widget: REPLWidget
    private let catalogue: Catalogue
    private let newID: @Sendable () -> UUID
    /// The products of the chat's replies on screen, for prices on live services.
    private let chatProducts: @Sendable () -> [AssistantProduct]
    /// A product the session's replies showed with a price, on screen or not any more.
    private let shownProduct: @Sendable (String) -> AssistantProduct?
    private(set) var cart = REPLCart()
    /// The SKUs put on the wishlist, in order.
    private(set) var wishlist: [String] = []
    private(set) var permission = NotificationPermissionStatus.unknown

    init(
        engine: AssistantEngine, output: REPLOutput, host: REPLHost, widget: REPLWidget, catalogue: Catalogue,
        newID: @escaping @Sendable () -> UUID, chatProducts: @escaping @Sendable () -> [AssistantProduct],
        shownProduct: @escaping @Sendable (String) -> AssistantProduct?
    ) {
        self.engine = engine
        self.output = output
        self.host = host
        self.widget = widget
        self.catalogue = catalogue
        self.newID = newID
        self.chatProducts = chatProducts
        self.shownProduct = shownProduct
    }

    // MARK: - The cart (B10)

    /// `:cart`: the lines, their sums and the total; the wishlist, if any.
    func showCart() {
        if cart.isEmpty {
            output.line(.dim, "(the cart is empty: :cart add SKU [QTY] puts a product in it)")
        } else {
            output.line(
                "cart: \(Self.units(cart.units)), \(cart.lines.count == 1 ? "1 line" : "\(cart.lines.count) lines")")
            for line in cart.lines {
                let sum =
                    "\(line.quantity) × \(line.sku) at \(Self.amount(line.unitPrice, line.currency))"
                    + (line.quantity > 1 ? " = \(Self.amount(line.total, line.currency))" : "")
                output.untrusted(sum + (line.name.map { " — " + $0 } ?? ""), prefix: "  ", width: output.width)
            }
            output.line(.bold, "  total \(Self.amount(cart.total, cart.currency))")
        }
        if !wishlist.isEmpty {
            output.untrusted(wishlist.joined(separator: ", "), prefix: "wishlist: ", width: output.width)
        }
    }

    /// `:cart add`: puts `quantity` units of `sku` in the cart and reports `add-to-cart-v1`
    /// with the cart after it.
    func add(sku: String, quantity: Int, price given: Decimal?) async {
        guard let page = await eventPage() else { return }
        guard
            let product = await priced(
                sku, given: given, example: ":cart add \(TerminalSanitizer.sanitize(sku)) \(quantity)")
        else { return }
        switch cart.add(
            sku: product.sku, name: product.name, quantity: quantity, unitPrice: product.unitPrice,
            currency: product.currency)
        {
        case .changed(let added, let line):
            await report("add-to-cart-v1", added, of: line, on: page) { value, cart in
                AddToCartEvent(value: value, productId: line.sku, quantity: added, currency: line.currency, cart: cart)
            }
        case .otherPrice(let line):
            let sku = TerminalSanitizer.sanitize(line.sku)
            output.line(
                .warning,
                "\(sku) is in the cart at \(Self.amount(line.unitPrice, line.currency)): a line has one price; "
                    + ":cart remove \(sku) first to add it at another (nothing was sent)")
        case .tooMany:
            output.line(.warning, "that many units do not fit in one cart line (nothing was sent)")
        case .notInCart, .tooFew:
            preconditionFailure("an addition only changes a line or refuses its price or its size")
        }
    }

    /// `:cart remove`: takes `quantity` units of `sku` (the whole line when nil) out of the cart
    /// and reports `remove-from-cart-v1` with the cart after it.
    func remove(sku typed: String, quantity: Int?) async {
        // The line's SKU, typed in any case (a feed's SKUs differ by more than case).
        let sku =
            cart.line(typed)?.sku ?? cart.lines.first { $0.sku.caseInsensitiveCompare(typed) == .orderedSame }?.sku
        guard let sku else {
            output.line(.warning, "\(TerminalSanitizer.sanitize(typed)) is not in the cart (nothing was sent)")
            return
        }
        guard let page = await eventPage() else { return }
        switch cart.remove(sku: sku, quantity: quantity) {
        case .changed(let removed, let line):
            await report("remove-from-cart-v1", removed, of: line, on: page) { value, cart in
                RemoveFromCartEvent(
                    value: value, productId: line.sku, quantity: removed, currency: line.currency, cart: cart)
            }
        case .tooFew(let held):
            let sku = TerminalSanitizer.sanitize(sku)
            output.line(
                .warning,
                "the cart holds \(Self.units(held)) of \(sku): :cart remove \(sku) takes them all out (nothing was sent)"
            )
        case .notInCart, .otherPrice, .tooMany:
            preconditionFailure("a removal of a line the cart holds changes it or finds too few units")
        }
    }

    /// A cart change made: says it (`units` of `line`, their sum, the cart after) and sends
    /// the event of `type` that `event` makes of that sum and the cart after it.
    private func report(
        _ type: String, _ units: Int, of line: REPLCart.Line, on page: PageContext,
        _ event: (EventAmount, [CartItem]) -> any TriggerEvent
    ) async {
        let value = line.unitPrice * Decimal(units)
        output.untrusted(
            "\(units) × \(line.sku), \(Self.amount(value, line.currency)); \(cartSummary))",
            prefix: "(\(type): ", role: .dim, width: output.width)
        await engine.triggerEvent(events: [event(EventAmount(value), cart.items)], pageContext: page)
    }

    /// `:buy`: the cart bought, as `purchase-v1` with a fresh transaction id; then the cart is
    /// empty. An empty cart is no purchase, and nothing is sent.
    func buy() async {
        guard !cart.isEmpty else {
            output.line(.warning, "the cart is empty: :cart add SKU [QTY] first (nothing was sent)")
            return
        }
        guard let page = await eventPage() else { return }
        let order = newID().uuidString.lowercased()
        let bought = cart
        cart.empty()
        output.line(
            .dim,
            "(purchase-v1: order \(order), \(Self.units(bought.units)), \(Self.amount(bought.total, bought.currency)))")
        await engine.triggerEvent(
            events: [
                PurchaseEvent(
                    uniqueTransactionId: order, value: EventAmount(bought.total), cart: bought.items,
                    currency: bought.currency)
            ], pageContext: page)
        output.line(.dim, "(the cart is empty now)")
    }

    /// `:wish`: `add-to-wishlist-v1` for `sku` at its price.
    func wish(sku: String, price given: Decimal?) async {
        guard let page = await eventPage() else { return }
        guard let product = await priced(sku, given: given, example: ":wish \(TerminalSanitizer.sanitize(sku))") else {
            return
        }
        if !wishlist.contains(product.sku) { wishlist.append(product.sku) }
        output.untrusted(
            "\(product.sku), \(Self.amount(product.unitPrice, product.currency)))", prefix: "(add-to-wishlist-v1: ",
            role: .dim, width: output.width)
        await engine.triggerEvent(
            events: [AddToWishlistEvent(value: EventAmount(product.unitPrice), productId: product.sku)],
            pageContext: page)
    }

    // MARK: - The account (B10)

    /// `:login` and `:signup`: `login-v1` or `signup-v1` as the current identity, with the
    /// customer id `id` as the seed's standard has it: a phone number as its `phone_hash`, any
    /// other id as typed, none without one. The identity does not change (that is `:user`).
    func account(_ kind: AccountEvent, id: String?) async {
        guard let page = await eventPage() else { return }
        let phoneHash = id.flatMap(PhoneHash.cuid)
        let cuid = phoneHash ?? id
        let cuidType = phoneHash == nil ? nil : PhoneHash.cuidType
        let event: any TriggerEvent =
            kind == .login ? LoginEvent(cuid: cuid, cuidType: cuidType) : SignUpEvent(cuid: cuid, cuidType: cuidType)
        let what: String
        switch (cuid, cuidType) {
        case (nil, _): what = "no customer id"
        case (let cuid?, nil): what = "cuid \(cuid)"
        case (let cuid?, let type?): what = "cuid \(cuid) (\(type))"
        }
        output.untrusted(what + ")", prefix: "(\(event.type): ", role: .dim, width: output.width)
        await engine.triggerEvent(events: [event], pageContext: page)
    }

    /// Which account event `account(_:id:)` sends.
    enum AccountEvent: Sendable, Hashable {
        case login
        case signup
    }

    // MARK: - Push permission (B11)

    /// `:push STATUS`: the permission every later request carries; `:push` alone says which.
    func push(_ status: NotificationPermissionStatus?) async {
        guard let status else {
            output.line(
                .dim, "(notification permission: \(permission.rawValue); :push granted|denied|unknown changes it)")
            return
        }
        permission = status
        await engine.setNotificationPermissionStatus(status)
        output.line(.dim, "(notification permission: \(status.rawValue), sent as device.permission from now on)")
    }

    // MARK: - Events of the app's own (B10)

    /// `:event`: a `CustomEvent`.
    func custom(type: String, name: String, properties: [String: String]) async {
        guard let page = await eventPage() else { return }
        let props = properties.keys.sorted().map { "\($0)=\(properties[$0] ?? "")" }
        output.untrusted(
            ([name] + props).joined(separator: ", ") + ")", prefix: "(\(TerminalSanitizer.sanitize(type)): ",
            role: .dim,
            width: output.width)
        await engine.triggerEvent(
            events: [CustomEvent(type: type, name: name, customProps: properties)], pageContext: page)
    }

    // MARK: - The widget (B12)

    /// `:widget SELECTOR`: fetches and draws the widget on the current screen.
    func showWidget(selector: String) async {
        guard await !engine.isAssistantOpen else {
            output.line(.warning, "the chat is open: :close it first — a widget is on the app's screen, under the chat")
            return
        }
        guard let page = await host.page else {
            output.line(.warning, "go to a screen first (:home or :product SKU): a widget belongs to a screen")
            return
        }
        await widget.show(selector: selector, page: page)
    }

    /// `:widget on [SELECTOR]`, `:widget off`: the widget belongs to every screen from the next
    /// one on, its content fetched at the moment the entry button's is — one `/choose` for both
    /// (B16).
    func setScreenWidget(_ selector: String?) async {
        await host.setScreenWidget(selector)
        guard let selector else { return output.line(.dim, "(no widget on the screens from now on)") }
        output.untrusted(
            selector + " on every screen from the next one, fetched with its entry button)", prefix: "(widget ",
            role: .dim, width: output.width)
    }

    /// `:widget tap N`: reports the click, then the app goes to the product.
    func tapWidget(_ number: Int) async {
        switch await widget.tap(number) {
        case .navigate(let page):
            await host.show(page)
        case .noWidget:
            output.line(.warning, "no widget on screen: :widget fetches one")
        case .notOnScreen:
            output.line(.warning, "no card \(number) of the widget on screen to tap (:widget left and right scroll)")
        }
    }

    /// `:widget close`.
    func closeWidget() async {
        if await !widget.close() { output.line(.warning, "no widget on screen: :widget fetches one") }
    }

    /// `:widget left|right`.
    func scrollWidget(by pages: Int) async {
        await widget.scroll(by: pages)
    }

    // MARK: - Prices and pages

    /// The screen's page context for an event; says so when there is no screen yet.
    private func eventPage() async -> PageContext? {
        if let page = await host.page { return page }
        output.line(
            .warning,
            "go to a screen first (:home or :product SKU): an event carries the screen it happened on (nothing was sent)"
        )
        return nil
    }

    /// `sku` with its price: `given`, else the catalogue's (demo) or the one the session was
    /// shown (live); says why not and returns nil when there is none.
    private func priced(_ sku: String, given: Decimal?, example: String) async -> Priced? {
        let name = TerminalSanitizer.sanitize(sku)
        switch catalogue {
        case .demo:
            let product = DemoCatalog.product(sku: sku)
            let canonical = product?.sku ?? sku
            if let given {
                return Priced(sku: canonical, name: product?.name, unitPrice: given, currency: Self.demoCurrency)
            }
            guard let product else {
                output.line(.warning, "no product \(name) in the demo catalogue: Tab lists its SKUs (nothing was sent)")
                return nil
            }
            guard let price = product.price else {
                output.line(
                    .warning, "\(name) has no price in the demo catalogue: give one, \(example) @990 (nothing was sent)"
                )
                return nil
            }
            return Priced(sku: canonical, name: product.name, unitPrice: Decimal(price), currency: Self.demoCurrency)
        case .live:
            let seen = await shown(sku)
            if let given { return Priced(sku: sku, name: seen?.name, unitPrice: given, currency: nil) }
            if let seen, let price = seen.price, price.isFinite, price >= 0 {
                return Priced(sku: sku, name: seen.name, unitPrice: EventAmount(price).decimal, currency: seen.currency)
            }
            output.line(
                .warning,
                "no price known for \(name): live services have no catalogue here; add a product a reply or "
                    + ":widget has shown, or give its price: \(example) @PRICE (nothing was sent)")
            return nil
        }
    }

    /// The product `sku` (exactly) as the session last showed it: in the chat's replies on
    /// screen, newest first, else in the widget, else in a reply shown before (a new chat, a
    /// close); nil when none showed it with a number price.
    private func shown(_ sku: String) async -> REPLWidget.Product? {
        func priced(_ product: AssistantProduct) -> REPLWidget.Product? {
            guard case .amount(let price)? = product.price else { return nil }
            return REPLWidget.Product(sku: sku, name: product.name, price: price, currency: product.currency)
        }
        for product in chatProducts().reversed() where product.sku == sku {
            if let found = priced(product) { return found }
        }
        if let inWidget = await widget.products.first(where: { $0.sku == sku && $0.price != nil }) { return inWidget }
        return shownProduct(sku).flatMap(priced)
    }

    /// What the cart holds now, for the event lines.
    private var cartSummary: String {
        cart.isEmpty ? "cart empty" : "cart: \(Self.units(cart.units)), \(Self.amount(cart.total, cart.currency))"
    }

    /// `3980 RUB`, `19.99`.
    static func amount(_ value: Decimal, _ currency: String?) -> String {
        value.description + (currency.map { " " + TerminalSanitizer.sanitize($0) } ?? "")
    }

    /// `1 unit`, `2 units`.
    static func units(_ count: Int) -> String { count == 1 ? "1 unit" : "\(count) units" }
}
