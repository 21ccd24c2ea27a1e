import ShoppingAssistant

/// One composed answer, before the store gives it IDs and tracking URLs.
struct DemoReply: Sendable {
    /// The reply text, in Russian.
    var text: String
    /// The carousel: `nil` for a reply without a product block, an empty list for an empty one.
    var products: [DemoProduct]?
    /// The carousel title.
    var productsTitle: String?
    /// Follow-up questions (`ui.suggests`).
    var suggests: [String]
    /// Reply buttons (`ui.buttons`), exactly as they go on the wire.
    var buttons: [DemoJSON]
}

/// Turns a question into a reply with keyword matching over the demo catalogue. Pure and
/// deterministic: the same question in the same thread state gives the same reply.
///
/// Order of precedence: support, delivery, SKU lookup, "cheaper" (relative to the last
/// carousel), popular, "similar", a greeting, explicit filters (category, gift, audience,
/// budget, product names),
/// the page the dialog started on (product or category page), then a gentle fallback.
struct DemoReplyComposer: Sendable {
    /// How many products a carousel shows at most.
    static let carouselLimit = 6
    /// How many products a carousel shows at least, when the catalogue allows.
    static let carouselMinimum = 3

    /// The page the dialog started on, read from `runtimeContext.page`.
    struct Page: Sendable {
        var type: String?
        var data: [String]

        init(_ json: JSONValue?) {
            type = json?["type"]?.stringValue
            data = json?["data"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }

        /// The catalogue product of a product page.
        var product: DemoProduct? {
            guard type == PageContext.PageType.product.rawValue else { return nil }
            return data.lazy.compactMap(DemoCatalog.product(sku:)).first
        }

        /// The department of a category page, matched by name or slug in any path segment.
        var category: DemoProduct.Category? {
            guard type == PageContext.PageType.category.rawValue else { return nil }
            let segments = data.flatMap { $0.split { "/>|".contains($0) } }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            return DemoProduct.Category.allCases.first { category in
                segments.contains {
                    $0.caseInsensitiveCompare(category.rawValue) == .orderedSame
                        || $0.caseInsensitiveCompare(category.slug) == .orderedSame
                }
            }
        }
    }

    func compose(text: String, page: Page, lastShown: [DemoProduct]) -> DemoReply {
        let query = DemoQuery(text)
        if query.mentions(DemoKeywords.support) { return supportReply() }
        if query.mentions(DemoKeywords.delivery) { return deliveryReply() }
        if let reply = skuReply(query) { return reply }
        let filters = Filters(query)
        if query.mentions(DemoKeywords.cheaper), filters.priceLimit == nil {
            return cheaperReply(filters: filters, lastShown: lastShown)
        }
        if query.mentions(DemoKeywords.popular), !filters.narrows {
            return popularReply(text: "Вот самые популярные товары магазина.")
        }
        if query.mentions(DemoKeywords.similar), let base = page.product ?? lastShown.first {
            return similarReply(to: base, onPage: page.product == base)
        }
        if query.mentions(DemoKeywords.greeting), !filters.narrows {
            return popularReply(
                text: "Здравствуйте! Я помогу выбрать товар: спросите про подарок, категорию или бюджет. "
                    + "Вот что сейчас популярно."
            )
        }
        if filters.narrows || !filters.nameStems.isEmpty, let reply = filteredReply(filters, page: page) {
            return reply
        }
        if let product = page.product { return similarReply(to: product, onPage: true) }
        if let category = page.category { return categoryPageReply(category) }
        return popularReply(
            text: "Не совсем понял запрос. Уточните, что ищете, для кого подарок или какой бюджет, "
                + "а пока посмотрите популярные товары."
        )
    }

    // MARK: - Filters

    /// What a question narrows the catalogue by.
    struct Filters: Sendable {
        var categories: [DemoProduct.Category] = []
        var gift = false
        var audience: DemoProduct.Tag?
        var priceLimit: Int?
        var nameStems: [String] = []

        init(_ query: DemoQuery) {
            categories = DemoKeywords.categories.filter { query.mentions($0.1) }.map(\.0)
            gift = query.mentions(DemoKeywords.gift)
            if query.mentions(DemoKeywords.kids) {
                audience = .kids
            } else if query.mentions(DemoKeywords.men) {
                audience = .men
            } else if query.mentions(DemoKeywords.women) {
                audience = .women
            }
            priceLimit = query.priceLimit
            nameStems = query.contentWords
                .filter { word in !DemoKeywords.intent.contains { DemoQuery.matches(word, stem: $0) } }
                .map(DemoQuery.nameStem)
        }

        /// Whether any filter beyond product-name words is set.
        var narrows: Bool {
            !categories.isEmpty || gift || audience != nil || priceLimit != nil
        }

        func fitsAudience(_ product: DemoProduct) -> Bool {
            guard let audience else { return true }
            return product.tags.contains(audience) || (audience == .kids && product.category == .toys)
        }

        func fitsBudget(_ product: DemoProduct) -> Bool {
            guard let priceLimit else { return true }
            guard let price = product.price else { return false }
            return price <= priceLimit
        }

        func nameMatches(_ product: DemoProduct) -> Int {
            let name = product.name.lowercased().replacingOccurrences(of: "ё", with: "е")
            let brand = product.brand?.lowercased() ?? ""
            return nameStems.filter { name.contains($0) || brand.hasPrefix($0) }.count
        }
    }

    private func filteredReply(_ filters: Filters, page: Page) -> DemoReply? {
        let catalogue = DemoCatalog.products
        func score(_ product: DemoProduct) -> Int {
            3 * filters.nameMatches(product) + (product.tags.contains(.popular) ? 1 : 0)
        }
        let strict = catalogue.filter { product in
            (filters.categories.isEmpty || product.category.map(filters.categories.contains) == true)
                && (!filters.gift || product.tags.contains(.gift))
                && filters.fitsAudience(product)
                && filters.fitsBudget(product)
        }
        var picked: [DemoProduct]
        if filters.narrows {
            picked = ranked(strict, by: score)
        } else {
            // Only product-name words: show what matches by name, or fall through.
            picked = ranked(catalogue.filter { filters.nameMatches($0) > 0 }, by: score)
            if picked.isEmpty { return nil }
        }
        if picked.count < Self.carouselMinimum, let first = picked.first, !filters.narrows {
            // Found by name only: complete with products like the best match.
            for product in Self.similar(to: first, limit: Self.carouselLimit) where picked.count < Self.carouselMinimum
            {
                if !picked.contains(product) { picked.append(product) }
            }
        } else if picked.count < Self.carouselMinimum, !(filters.priceLimit != nil && picked.isEmpty) {
            // Too narrow: drop the audience, keeping the category, the gift wish and the budget.
            let relaxed = catalogue.filter { product in
                (filters.categories.isEmpty || product.category.map(filters.categories.contains) == true)
                    && (!filters.gift || product.tags.contains(.gift) || !filters.categories.isEmpty)
                    && filters.fitsBudget(product)
            }
            for product in ranked(relaxed, by: score) where picked.count < Self.carouselMinimum {
                if !picked.contains(product) { picked.append(product) }
            }
        }
        let shown = Array(picked.prefix(Self.carouselLimit))
        let title = Self.title(for: filters)
        var text: String
        if shown.isEmpty {
            text = "К сожалению, ничего не нашлось"
            if let limit = filters.priceLimit { text += " до \(DemoProduct.formatPrice(limit))" }
            text += ". Попробуйте увеличить бюджет или выбрать другую категорию."
        } else if filters.gift {
            text = "Подобрал \(shown.count) \(Self.plural(shown.count, "идею", "идеи", "идей")) для подарка"
            text += Self.audiencePhrase(filters.audience).map { " \($0)" } ?? ""
            text += filters.priceLimit.map { " до \(DemoProduct.formatPrice($0))" } ?? ""
            text += ". Могу показать дешевле или из другой категории."
        } else if filters.categories.count == 1, let category = filters.categories.first {
            text = "Вот что есть в категории «\(category.rawValue)»: "
            text += "\(shown.count) \(Self.plural(shown.count, "товар", "товара", "товаров"))."
            text += filters.priceLimit.map { " Всё — до \(DemoProduct.formatPrice($0))." } ?? ""
        } else {
            text = "Вот что нашлось по вашему запросу. Уточните категорию или бюджет, и я подберу точнее."
        }
        if let product = page.product, let sku = product.sku, !shown.isEmpty {
            text += " Вы смотрите «\(product.name)» (артикул \(sku)) — могу подобрать к нему похожие."
        }
        var suggests = ["Покажи дешевле"]
        if filters.gift {
            suggests.append(filters.audience == .men ? "А для женщины?" : "А для мужчины?")
            suggests.append("Что-нибудь для дома")
        } else {
            suggests.append("Помогите выбрать подарок")
            let other = DemoProduct.Category.allCases.first { !filters.categories.contains($0) } ?? .home
            suggests.append(Self.categorySuggest(other))
        }
        if shown.isEmpty { suggests = ["Подарки до 3000 ₽", "Покажи популярное"] }
        let topic = filters.gift ? "gifts" : (filters.categories.first?.slug ?? "general")
        var buttons = [Self.supportButton(topic: topic)]
        if filters.categories.count == 1, let category = filters.categories.first {
            buttons.append(Self.linkButton("Все товары: \(category.rawValue)", DemoCatalog.url(for: category)))
        } else {
            buttons.append(Self.deliveryButton)
        }
        return DemoReply(text: text, products: shown, productsTitle: title, suggests: suggests, buttons: buttons)
    }

    // MARK: - Intents

    private func skuReply(_ query: DemoQuery) -> DemoReply? {
        let product = query.codes.lazy.compactMap(DemoCatalog.product(sku:)).first
        guard let product, let sku = product.sku else {
            guard query.mentions(DemoKeywords.skuMarkers) else { return nil }
            var reply = popularReply(
                text: "Не нашёл товар с таким артикулом. Проверьте написание, например KIT-1001. "
                    + "А пока — популярные товары."
            )
            reply.suggests = ["Артикул KIT-1001", "Помогите выбрать подарок"]
            return reply
        }
        var text = "Нашёл по артикулу \(sku): «\(product.name)»"
        if let price = product.price { text += ", \(DemoProduct.formatPrice(price))" }
        text += ". Рядом — похожие товары."
        let similar = Self.similar(to: product, limit: Self.carouselLimit - 1)
        return DemoReply(
            text: text,
            products: [product] + similar,
            productsTitle: "Артикул \(sku)",
            suggests: ["Покажи дешевле", "Условия доставки"],
            buttons: [
                Self.addToCartButton(sku: sku),
                Self.supportButton(topic: "product"),
                Self.linkButton("Открыть на сайте", product.url ?? DemoCatalog.url(for: product.category ?? .home)),
            ]
        )
    }

    private func cheaperReply(filters: Filters, lastShown: [DemoProduct]) -> DemoReply {
        let priced = DemoCatalog.products.filter { $0.price != nil }
        // "Cheaper" means below the typical (lower median) price of the last carousel.
        let shownPrices = lastShown.compactMap(\.price).sorted()
        let median = shownPrices.isEmpty ? nil : shownPrices[(shownPrices.count - 1) / 2]
        guard let threshold = median else {
            // Nothing shown yet: the cheapest products, within the asked categories if any.
            let base = priced.filter { product in
                filters.categories.isEmpty || product.category.map(filters.categories.contains) == true
            }
            let cheapest = Array(base.sorted { ($0.price ?? 0) < ($1.price ?? 0) }.prefix(Self.carouselLimit))
            return DemoReply(
                text: "Вот самые доступные товары.",
                products: cheapest,
                productsTitle: "Недорого",
                suggests: ["Помогите выбрать подарок", "Нужны наушники"],
                buttons: [Self.supportButton(topic: "general"), Self.deliveryButton]
            )
        }
        let categories = Set(lastShown.compactMap(\.category))
        let shownIds = Set(lastShown.map(\.itemId))
        let giftsOnly = lastShown.allSatisfy { $0.tags.contains(.gift) }
        let cheaper = priced.filter { ($0.price ?? .max) < threshold && !shownIds.contains($0.itemId) }
            .sorted { ($0.price ?? 0) > ($1.price ?? 0) }
        // Closest first: same departments (and still gifts, if only gifts were shown).
        var picked = cheaper.filter { product in
            product.category.map(categories.contains) == true && (!giftsOnly || product.tags.contains(.gift))
        }
        for product in cheaper where picked.count < Self.carouselMinimum && !picked.contains(product) {
            picked.append(product)
        }
        if picked.isEmpty {
            let cheapest = Array(priced.sorted { ($0.price ?? 0) < ($1.price ?? 0) }.prefix(Self.carouselLimit))
            return DemoReply(
                text: "Дешевле показанных товаров ничего нет. Вот самые доступные в магазине.",
                products: cheapest,
                productsTitle: "Самые доступные",
                suggests: ["Помогите выбрать подарок", "Покажи популярное"],
                buttons: [Self.supportButton(topic: "general"), Self.deliveryButton]
            )
        }
        let shown = Array(picked.prefix(Self.carouselLimit))
        return DemoReply(
            text: "Вот варианты дешевле \(DemoProduct.formatPrice(threshold)).",
            products: shown,
            productsTitle: "Дешевле \(DemoProduct.formatPrice(threshold))",
            suggests: ["Ещё дешевле", "Помогите выбрать подарок"],
            buttons: [Self.supportButton(topic: "general"), Self.deliveryButton]
        )
    }

    private func similarReply(to product: DemoProduct, onPage: Bool) -> DemoReply {
        let similar = Self.similar(to: product, limit: Self.carouselLimit)
        let skuText = product.sku.map { " (артикул \($0))" } ?? ""
        let categoryText = product.category.map { " из категории «\($0.rawValue)»" } ?? ""
        let text =
            onPage
            ? "Вы смотрите «\(product.name)»\(skuText). Вот похожие товары\(categoryText)."
            : "Похожие на «\(product.name)»\(skuText) товары\(categoryText)."
        var buttons: [DemoJSON] = []
        if let sku = product.sku { buttons.append(Self.addToCartButton(sku: sku)) }
        buttons.append(Self.supportButton(topic: "product"))
        buttons.append(
            product.category.map { Self.linkButton("Все товары: \($0.rawValue)", DemoCatalog.url(for: $0)) }
                ?? Self.deliveryButton)
        return DemoReply(
            text: text,
            products: similar,
            productsTitle: "Похожие на «\(product.name)»",
            suggests: ["Покажи дешевле", "Помогите выбрать подарок", "Условия доставки"],
            buttons: buttons
        )
    }

    private func categoryPageReply(_ category: DemoProduct.Category) -> DemoReply {
        let products = ranked(DemoCatalog.products.filter { $0.category == category }) {
            $0.tags.contains(.popular) ? 1 : 0
        }
        return DemoReply(
            text: "В разделе «\(category.rawValue)» советую посмотреть эти товары. Подскажите бюджет — подберу точнее.",
            products: Array(products.prefix(Self.carouselLimit)),
            productsTitle: category.rawValue,
            suggests: ["Покажи дешевле", "Помогите выбрать подарок"],
            buttons: [
                Self.supportButton(topic: category.slug),
                Self.linkButton("Все товары: \(category.rawValue)", DemoCatalog.url(for: category)),
            ]
        )
    }

    private func popularReply(text: String) -> DemoReply {
        let popular = DemoCatalog.products.filter { $0.tags.contains(.popular) }
        return DemoReply(
            text: text,
            products: Array(popular.prefix(Self.carouselLimit)),
            productsTitle: "Популярное",
            suggests: ["Помогите выбрать подарок", "Нужны наушники", "Покажи кружки"],
            buttons: [Self.supportButton(topic: "general"), Self.deliveryButton]
        )
    }

    private func supportReply() -> DemoReply {
        DemoReply(
            text: "Передам ваш вопрос специалисту поддержки: нажмите кнопку ниже, и мы ответим в чате.",
            products: nil,
            productsTitle: nil,
            suggests: ["Помогите выбрать подарок", "Условия доставки"],
            buttons: [
                Self.supportButton(topic: "general"),
                Self.linkButton("Контакты", "https://\(DemoCatalog.shopHost)/contacts"),
            ]
        )
    }

    private func deliveryReply() -> DemoReply {
        DemoReply(
            text: "Доставляем по всей России за 1–5 дней курьером или в пункт выдачи. "
                + "Бесплатно при заказе от 3 000 ₽. Вернуть товар можно в течение 14 дней.",
            products: nil,
            productsTitle: nil,
            suggests: ["Помогите выбрать подарок", "Нужны наушники"],
            buttons: [Self.deliveryButton, Self.supportButton(topic: "delivery")]
        )
    }

    // MARK: - Helpers

    /// Products sorted by descending score; ties keep catalogue order.
    private func ranked(_ products: [DemoProduct], by score: (DemoProduct) -> Int) -> [DemoProduct] {
        products.enumerated()
            .sorted { lhs, rhs in
                let left = score(lhs.element)
                let right = score(rhs.element)
                return left != right ? left > right : lhs.offset < rhs.offset
            }
            .map(\.element)
    }

    /// Other products of the same department, then popular ones, never the product itself.
    static func similar(to product: DemoProduct, limit: Int) -> [DemoProduct] {
        var result = DemoCatalog.products.filter { $0.category == product.category && $0 != product }
        if result.count < carouselMinimum {
            result += DemoCatalog.products.filter {
                $0.tags.contains(.popular) && $0 != product && !result.contains($0)
            }
        }
        return Array(result.prefix(limit))
    }

    private static func title(for filters: Filters) -> String {
        var title: String
        if filters.gift {
            title = "Подарки"
            if let phrase = audiencePhrase(filters.audience) { title += " \(phrase)" }
        } else if filters.categories.count == 1, let category = filters.categories.first {
            title = category.rawValue
        } else if let phrase = audiencePhrase(filters.audience) {
            title = phrase.prefix(1).uppercased() + phrase.dropFirst()
        } else {
            title = "Подборка"
        }
        if let limit = filters.priceLimit { title += " до \(DemoProduct.formatPrice(limit))" }
        return title
    }

    private static func audiencePhrase(_ audience: DemoProduct.Tag?) -> String? {
        switch audience {
        case .men: "для мужчины"
        case .women: "для женщины"
        case .kids: "для ребёнка"
        default: nil
        }
    }

    private static func categorySuggest(_ category: DemoProduct.Category) -> String {
        switch category {
        case .kitchen: "Покажи кружки"
        case .electronics: "Нужны наушники"
        case .clothing: "Что есть из одежды?"
        case .home: "Что-нибудь для дома"
        case .sport: "Товары для спорта"
        case .books: "Посоветуй книгу"
        case .toys: "Игрушки для ребёнка"
        case .cosmetics: "Подарочная косметика"
        }
    }

    /// Russian plural form for `count`.
    static func plural(_ count: Int, _ one: String, _ few: String, _ many: String) -> String {
        let lastTwo = count % 100
        let last = count % 10
        if (11...14).contains(lastTwo) { return many }
        if last == 1 { return one }
        if (2...4).contains(last) { return few }
        return many
    }

    static func supportButton(topic: String) -> DemoJSON {
        .object([
            "type": "button", "value": "Написать в поддержку", "action": "open_support_chat", "topic": .string(topic),
        ])
    }

    static func linkButton(_ title: String, _ url: String) -> DemoJSON {
        .object(["type": "button", "value": .string(title), "action": "follow_url", "url": .string(url)])
    }

    static var deliveryButton: DemoJSON {
        linkButton("Условия доставки", "https://\(DemoCatalog.shopHost)/delivery")
    }

    static func addToCartButton(sku: String) -> DemoJSON {
        .object(["type": "button", "value": "Добавить в корзину", "action": "add_to_cart", "sku": .string(sku)])
    }
}
