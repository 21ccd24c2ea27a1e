/// A shopper's question, split into lowercase words for keyword matching.
///
/// Matching is deliberately simple and predictable: a keyword stem matches a word that starts
/// with it ("подар" matches "подарок", "подарки", "подарить"); a stem written with a leading `=`
/// must equal the word ("=son" matches "son" but not "sony").
struct DemoQuery: Sendable {
    /// Lowercased words (letters and digits), `ё` folded to `е`.
    let words: [String]
    /// Lowercased words that may contain hyphens, for SKU lookups (`kit-1001`).
    let codes: [String]

    init(_ text: String) {
        let folded = text.lowercased().replacingOccurrences(of: "ё", with: "е")
        words = Self.split(folded) { $0.isLetter || $0.isNumber }
        codes = Self.split(folded) { $0.isLetter || $0.isNumber || $0 == "-" }
            .map { $0.trimmingCharacters(in: ["-"]) }
            .filter { !$0.isEmpty }
    }

    /// Whether any word matches any of the stems.
    func mentions(_ stems: [String]) -> Bool {
        words.contains { word in stems.contains { Self.matches(word, stem: $0) } }
    }

    /// Words worth comparing with product names: not stop words, at least four letters.
    var contentWords: [String] {
        words.filter { $0.count >= 4 && !$0.allSatisfy(\.isNumber) && !Self.stopWords.contains($0) }
    }

    /// The stem used to compare a content word with product names ("наушники" → "наушни").
    static func nameStem(_ word: String) -> String {
        String(word.prefix(max(4, word.count - 2)))
    }

    /// An explicit budget: "до 3000", "до 3 000 ₽", "under 3000", "дешевле 2000".
    var priceLimit: Int? {
        let markers: Set<String> = ["до", "under", "below", "дешевле", "cheaper", "within", "максимум"]
        for (index, word) in words.enumerated() where markers.contains(word) {
            var digits = ""
            var next = index + 1
            while next < words.count, words[next].allSatisfy(\.isNumber) {
                // "3 000": a group of exactly three digits continues the number.
                if !digits.isEmpty, words[next].count != 3 { break }
                digits += words[next]
                next += 1
            }
            if let amount = Int(digits), amount > 0 {
                if next < words.count, ["тыс", "тысяч", "тысячи", "k", "к"].contains(words[next]) {
                    return amount * 1000
                }
                return amount
            }
        }
        return nil
    }

    /// Whether `word` matches `stem` (prefix, or equality for `=`-stems).
    static func matches(_ word: String, stem: String) -> Bool {
        if stem.hasPrefix("=") { return word == stem.dropFirst() }
        return word.hasPrefix(stem)
    }

    private static func split(_ text: String, keeping isPart: (Character) -> Bool) -> [String] {
        text.split { !isPart($0) }.map(String.init)
    }

    private static let stopWords: Set<String> = [
        "покажи", "покажите", "помогите", "помоги", "выбрать", "подобрать", "подберите", "хочу", "нужен",
        "нужна", "нужно", "нужны", "какой", "какая", "какие", "какую", "есть", "можно", "пожалуйста",
        "что-нибудь", "нибудь", "чтото", "что-то", "этот", "этого", "такой", "товар", "товары", "show", "want",
        "need", "please", "something", "some", "with", "have", "what", "this", "that", "найди", "найти",
        "посоветуй", "посоветуйте", "ищу", "будет", "тоже", "также", "очень", "было", "хороший", "хорошую",
    ]
}

/// The keyword stems the reply composer recognises.
enum DemoKeywords {
    static let gift = ["подар", "сувенир", "gift", "present"]
    static let men = [
        "муж", "папе", "папы", "=папа", "отц", "отец", "брат", "парн", "дедушк", "=men", "=man", "=mens", "=dad",
        "father", "husband", "boyfriend", "=him",
    ]
    static let women = [
        "жен", "мам", "девуш", "сестр", "подруг", "бабушк", "women", "woman", "=mom", "mother", "=wife",
        "girlfriend",
    ]
    static let kids = [
        "ребен", "дет", "сын", "дочк", "дочер", "малыш", "школьн", "=kid", "=kids", "child", "=son", "daughter",
        "=baby",
    ]
    static let cheaper = ["дешевл", "подешев", "cheaper", "cheap", "бюджетн", "недорог", "эконом"]
    static let support = ["поддержк", "оператор", "support", "operator", "жалоб", "консультант"]
    static let delivery = ["достав", "delivery", "shipping", "возврат", "=return", "returns", "самовывоз"]
    static let similar = ["похож", "аналог", "similar", "alternativ"]
    static let popular = ["популяр", "хит", "popular", "bestseller", "=top"]
    static let skuMarkers = ["=sku", "артикул"]
    static let greeting = ["привет", "здравств", "=добрый", "=доброе", "=hello", "=hi", "=hey"]
    /// Words that say who or why rather than what; never compared with product names.
    static let intent = gift + men + women + kids + cheaper + popular + similar + greeting

    static let categories: [(DemoProduct.Category, [String])] = [
        (
            .kitchen,
            [
                "посуд", "кружк", "кружек", "кружеч", "чашк", "чашек", "стакан", "тарел", "сковород", "кастрюл",
                "чайник", "кухн", "термокружк", "френч", "=mug", "=mugs", "=cup", "=cups", "kitchen", "cookware",
                "teapot",
            ]
        ),
        (
            .electronics,
            [
                "телефон", "смартфон", "айфон", "наушник", "гаджет", "электрон", "техник", "колонк", "аккумулятор",
                "браслет", "phone", "smartphone", "headphone", "earphone", "earbud", "gadget", "electronic",
                "speaker",
            ]
        ),
        (
            .clothing,
            [
                "одежд", "свитер", "кофт", "куртк", "футболк", "плать", "шарф", "шапк", "носк", "носоч", "перчат",
                "clothes", "clothing", "sweater", "jacket", "shirt", "dress", "scarf", "=hat", "socks", "gloves",
            ]
        ),
        (
            .home,
            [
                "=дом", "дома", "домой", "домаш", "интерьер", "уют", "плед", "подушк", "ламп", "свеч", "полотен",
                "декор", "увлажнит", "=home", "interior", "blanket", "pillow", "lamp", "candle", "towel", "cozy",
            ]
        ),
        (
            .sport,
            [
                "спорт", "фитнес", "йог", "=бег", "бегов", "трениров", "гантел", "кроссовк", "=мяч", "мяча",
                "sport", "fitness", "yoga", "running", "=gym", "workout", "sneaker",
            ]
        ),
        (
            .books,
            [
                "книг", "книж", "чтени", "почитат", "роман", "литератур", "ежедневник", "=book", "books", "=read",
                "reading", "novel",
            ]
        ),
        (
            .toys,
            [
                "игрушк", "игруш", "конструктор", "лего", "кукл", "пазл", "настолк", "=игра", "=игры", "=игру",
                "=toy", "toys", "lego", "=doll", "puzzle", "boardgame",
            ]
        ),
        (
            .cosmetics,
            [
                "космет", "крем", "уход", "парфюм", "духи", "духов", "туалетн", "помад", "бальзам", "шампун",
                "макияж", "сыворотк", "cosmetic", "cream", "beauty", "perfume", "makeup", "skincare", "shampoo",
            ]
        ),
    ]
}
