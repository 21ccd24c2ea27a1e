import ShoppingAssistant

/// The demo store's catalogue: a fixed list in source, so every run (and every recorded
/// transcript) sees the same products in the same order.
package enum DemoCatalog {
    /// The demo shop site that product and category URLs point to.
    package static let shopHost = "demo-store.example"

    /// Screens whose page view (`/visit`) answers with an auto-shown in-app campaign, as a live
    /// section that runs campaigns does: the headphones' product page (where the demo's gift
    /// question leads, so a tap on a card hands over to a screen that is showing a campaign,
    /// rule H1) and the cart.
    package static let campaignScreens: [DemoCampaignScreen] = [
        DemoCampaignScreen(type: .product, data: "ELC-2001", campaignId: "demo-c-promo-headphones"),
        DemoCampaignScreen(type: .cart, data: nil, campaignId: "demo-c-cart-reminder"),
    ]

    /// Events whose `/event` answers with an auto-shown in-app campaign (its trigger is the
    /// event type), as a section whose campaigns react to events: a cart reminder after a
    /// product goes into the cart (the same campaign the cart's page view brings), a thank-you
    /// after a purchase.
    package static let eventCampaigns: [(type: String, campaignId: String)] = [
        ("add-to-cart-v1", "demo-c-cart-reminder"),
        ("purchase-v1", "demo-c-purchase-thanks"),
    ]

    /// Every product, in display order.
    package static let products: [DemoProduct] = [
        // MARK: Посуда
        item(
            1, "KIT-1001", "Термокружка 450 мл", "Hot&Cold", .kitchen, price: 1990, old: 2490,
            tags: [.gift, .popular], tracking: .twoClickHosts, rating: 4.8),
        item(2, "KIT-1002", "Кружка керамическая «Утро» 350 мл", "Дулёво", .kitchen, price: 690, tags: [.gift]),
        item(
            3, "KIT-1003", "Набор кружек для капучино, 2 шт", "Luminarc", .kitchen, price: 1290, asText: true,
            tags: [.gift, .women]),
        item(
            4, "KIT-1004", "Сковорода антипригарная 28 см", "Tefal", .kitchen, price: 3490, old: 4290,
            tags: [.popular], rating: 4.7),
        item(5, "KIT-1005", "Кастрюля из нержавеющей стали 3 л", "Fissman", .kitchen, price: 2790, url: false),
        item(
            6, "KIT-1006", "Френч-пресс 1 л", "Bodum", .kitchen, price: 2590, tags: [.gift, .men],
            tracking: .duplicatedClick),
        item(
            7, "KIT-1007", "Чайник заварочный «Гжель» 600 мл", "Гжельский фарфор", .kitchen, price: 1850,
            image: false, tags: [.gift, .women]),
        item(8, "KIT-1008", "Набор тарелок, 6 шт", "Luminarc", .kitchen, price: nil, tracking: .none),

        // MARK: Электроника
        item(
            9, "ELC-2001", "Наушники беспроводные Tune 520BT", "JBL", .electronics, price: 4990, old: 5990,
            tags: [.gift, .men, .popular], rating: 4.6),
        item(
            10, "ELC-2002", "Наушники с шумоподавлением WH-1000XM5", "Sony", .electronics, price: 32990,
            old: 36990, tags: [.gift, .men], tracking: .twoClickHosts),
        item(
            11, "ELC-2003", "Смартфон Redmi Note 13 8/256 ГБ", "Xiaomi", .electronics, price: 21990,
            tags: [.popular], rating: 4.5),
        item(
            12, "ELC-2004", "Смартфон Galaxy A55 8/128 ГБ", "Samsung", .electronics, price: 38990, old: 42990,
            asText: true),
        item(
            13, "ELC-2005", "Умная колонка Станция Мини", "Яндекс", .electronics, price: 7990,
            tags: [.gift, .popular]),
        item(
            14, "ELC-2006", "Фитнес-браслет Smart Band 8", "Xiaomi", .electronics, price: 3490,
            tags: [.gift, .women], tracking: .duplicatedClick),
        item(
            15, "ELC-2007", "Внешний аккумулятор 10000 мА·ч", "Baseus", .electronics, price: 2190, url: false,
            tags: [.men]),
        item(
            16, "ELC-2008", "Чехол для телефона силиконовый", "Red Line", .electronics, price: 590,
            image: false, tracking: .none),

        // MARK: Одежда
        item(
            17, "CLO-3001", "Свитер мужской шерстяной", "O'stin", .clothing, price: 3990, old: 4990,
            tags: [.gift, .men]),
        item(18, "CLO-3002", "Платье трикотажное миди", "Zarina", .clothing, price: 2999, tags: [.women]),
        item(
            19, "CLO-3003", "Куртка демисезонная мужская", "Gloria Jeans", .clothing, price: 5999, old: 7499,
            tags: [.men]),
        item(
            20, "CLO-3004", "Шарф кашемировый", "Sela", .clothing, price: 2490, asText: true,
            tags: [.gift, .women]),
        item(21, "CLO-3005", "Футболка хлопковая базовая", "Befree", .clothing, price: 799, tags: [.popular]),
        item(
            22, "CLO-3006", "Носки шерстяные, 3 пары", "Брестские", .clothing, price: 690, url: false,
            tags: [.gift, .men]),
        item(23, "CLO-3007", "Шапка вязаная", "Finn Flare", .clothing, price: 1490, image: false, tags: [.gift]),
        item(
            24, "CLO-3008", "Перчатки кожаные мужские", "Eleganzza", .clothing, price: 3290, tags: [.gift, .men],
            tracking: .none),

        // MARK: Дом
        item(
            25, "HOM-4001", "Плед флисовый 150×200", "Cozy Home", .home, price: 1990,
            tags: [.gift, .women, .popular], rating: 4.9),
        item(
            26, "HOM-4002", "Аромасвеча «Хвоя и мандарин»", "Ароматика", .home, price: 890,
            tags: [.gift, .women]),
        item(
            27, "HOM-4003", "Настольная лампа светодиодная", "Xiaomi", .home, price: 2990, old: 3490,
            tags: [.men]),
        item(28, "HOM-4004", "Подушка ортопедическая", "Аскона", .home, price: 3590),
        item(
            29, "HOM-4005", "Набор полотенец, 3 шт", "Cleanelly", .home, price: 1590, asText: true,
            tracking: .duplicatedClick),
        item(30, "HOM-4006", "Органайзер для хранения", "Attribute", .home, price: 990, url: false),
        item(31, "HOM-4007", "Увлажнитель воздуха", "Polaris", .home, price: 4490, old: 5290, tags: [.gift]),
        item(32, "HOM-4008", "Фоторамка деревянная 21×30", "Hoff", .home, price: nil, tracking: .none),

        // MARK: Спорт
        item(
            33, "SPT-5001", "Коврик для йоги 6 мм", "Demix", .sport, price: 1990, old: 2490,
            tags: [.women, .popular]),
        item(34, "SPT-5002", "Гантели разборные 2×10 кг", "Torneo", .sport, price: 5990, tags: [.men]),
        item(35, "SPT-5003", "Бутылка для воды спортивная 750 мл", "Demix", .sport, price: 590),
        item(36, "SPT-5004", "Кроссовки беговые", "Puma", .sport, price: 7990, old: 9990, tags: [.gift, .men]),
        item(37, "SPT-5005", "Скакалка скоростная", "Torneo", .sport, price: 490, image: false),
        item(
            38, "SPT-5006", "Рюкзак спортивный 25 л", "Outventure", .sport, price: 3990, asText: true,
            tags: [.gift]),
        item(
            39, "SPT-5007", "Мяч футбольный", "Adidas", .sport, price: 2490, tags: [.gift, .kids],
            tracking: .twoClickHosts),
        item(
            40, "SPT-5008", "Эспандер ленточный, набор", "Starfit", .sport, price: 890, url: false,
            tracking: .none),

        // MARK: Книги
        item(
            41, "BKS-6001", "«Мастер и Маргарита», М. Булгаков", "Азбука", .books, price: 490,
            tags: [.gift, .popular]),
        item(42, "BKS-6002", "«Атомные привычки», Дж. Клир", "МИФ", .books, price: 899, old: 1099, tags: [.gift]),
        item(
            43, "BKS-6003", "«Гарри Поттер и философский камень»", "Махаон", .books, price: 790,
            tags: [.gift, .kids]),
        item(44, "BKS-6004", "«Кухня без границ. 100 рецептов»", "Эксмо", .books, price: 1290, tags: [.women]),
        item(
            45, "BKS-6005", "«Война и мир», комплект в 2 томах", "АСТ", .books, price: 1490, old: 1790,
            asText: true),
        item(
            46, "BKS-6006", "Ежедневник недатированный А5", "Эксмо", .books, price: 690, url: false,
            tags: [.gift]),
        item(47, "BKS-6007", "«Краткая история времени», С. Хокинг", "АСТ", .books, price: 650, tags: [.men]),
        item(48, "BKS-6008", "Раскраска-антистресс", "Эксмо", .books, price: 390, image: false),

        // MARK: Игрушки
        item(
            49, "TOY-7001", "Конструктор City «Пожарная станция»", "LEGO", .toys, price: 6990, old: 7990,
            tags: [.gift, .kids, .popular], rating: 4.9),
        item(
            50, "TOY-7002", "Мягкая игрушка «Медведь» 40 см", "Мякиши", .toys, price: 1290,
            tags: [.gift, .kids]),
        item(
            51, "TOY-7003", "Настольная игра «Имаджинариум»", "Cosmodrome Games", .toys, price: 2490,
            tags: [.gift, .popular]),
        item(52, "TOY-7004", "Пазл «Москва», 1000 элементов", "Step Puzzle", .toys, price: 790),
        item(
            53, "TOY-7005", "Радиоуправляемая машинка", "1TOY", .toys, price: 3290, asText: true,
            tags: [.gift, .kids], tracking: .duplicatedClick),
        item(54, "TOY-7006", "Кукла с аксессуарами", "Mattel", .toys, price: 2190, url: false, tags: [.kids]),
        item(
            55, "TOY-7007", "Набор для творчества «Слайм-лаборатория»", "Волшебная мастерская", .toys,
            price: nil, tags: [.kids]),
        item(
            56, "TOY-7008", "Деревянный сортер", "Мир деревянных игрушек", .toys, price: 990, tags: [.kids],
            tracking: .none),

        // MARK: Косметика
        item(
            57, "CSM-8001", "Крем для рук, набор 3 шт", "Natura Siberica", .cosmetics, price: 890,
            tags: [.gift, .women, .popular]),
        item(
            58, "CSM-8002", "Подарочный набор для бритья", "Nivea Men", .cosmetics, price: 1490, old: 1890,
            tags: [.gift, .men]),
        item(59, "CSM-8003", "Туалетная вода, 50 мл", "Brocard", .cosmetics, price: 2490, tags: [.gift, .women]),
        item(
            60, "CSM-8004", "Сыворотка для лица с витамином C", "Librederm", .cosmetics, price: 1190,
            tags: [.women], tracking: .twoClickHosts),
        item(61, "CSM-8005", "Бальзам для губ", "Бархатные ручки", .cosmetics, price: 190, image: false),
        item(62, "CSM-8006", "Шампунь укрепляющий", "Чистая линия", .cosmetics, price: 349, asText: true),
        item(
            63, "CSM-8007", "Набор кистей для макияжа", "Relouis", .cosmetics, price: 1290, url: false,
            tags: [.women]),

        // MARK: Без артикула
        // A product page without a SKU: it still opens, by URL.
        DemoProduct(
            itemId: "p-064", sku: nil, name: "Подарочная упаковка",
            url: "https://\(shopHost)/p/gift-wrap", imageUrl: "https://\(shopHost)/i/gift-wrap.jpg",
            price: 190, category: .home, brand: nil, tags: [.gift]
        ),
        // Neither SKU nor URL: shown in the carousel, never tappable (PR1).
        DemoProduct(
            itemId: "p-065", sku: nil, name: "Подарочный сертификат на 3000 ₽",
            url: nil, imageUrl: "https://\(shopHost)/i/certificate.jpg",
            price: 3000, category: nil, brand: nil, tags: [.gift, .popular]
        ),
    ]

    /// The product with this SKU; exact match first, then ignoring case.
    package static func product(sku: String) -> DemoProduct? {
        products.first { $0.sku == sku }
            ?? products.first { $0.sku?.caseInsensitiveCompare(sku) == .orderedSame }
    }

    /// The product with this `itemId`.
    package static func product(itemId: String) -> DemoProduct? {
        products.first { $0.itemId == itemId }
    }

    /// The category page on the demo shop site.
    package static func url(for category: DemoProduct.Category) -> String {
        "https://\(shopHost)/c/\(category.slug)"
    }

    private static func item(
        _ number: Int,
        _ sku: String,
        _ name: String,
        _ brand: String,
        _ category: DemoProduct.Category,
        price: Int?,
        old: Int? = nil,
        asText: Bool = false,
        url: Bool = true,
        image: Bool = true,
        tags: Set<DemoProduct.Tag> = [],
        tracking: DemoProduct.Tracking = .standard,
        rating: Double? = nil
    ) -> DemoProduct {
        let itemId = "p-" + String(repeating: "0", count: max(0, 3 - String(number).count)) + String(number)
        return DemoProduct(
            itemId: itemId,
            sku: sku,
            name: name,
            url: url ? "https://\(shopHost)/p/\(sku)" : nil,
            imageUrl: image ? "https://\(shopHost)/i/\(sku).jpg" : nil,
            price: price,
            oldPrice: old,
            pricesAsText: asText,
            category: category,
            brand: brand,
            tags: tags,
            tracking: tracking,
            rating: rating
        )
    }
}

/// A screen whose page view brings an in-app campaign (`DemoCatalog.campaignScreens`).
package struct DemoCampaignScreen: Sendable, Hashable {
    /// The page type, as the engine sends it (`ctx.type`, upper case on the wire).
    package let type: PageContext.PageType
    /// The first `ctx.data` value the screen must have (a SKU); `nil` matches any.
    package let data: String?
    /// The campaign the page view announces.
    package let campaignId: String

    /// Whether a page view's `ctx` is this screen.
    func matches(_ ctx: JSONValue?) -> Bool {
        guard ctx?["type"]?.stringValue == type.rawValue else { return false }
        guard let data else { return true }
        return ctx?["data"]?.arrayValue?.first?.stringValue == data
    }
}
