import DemoStore
import Foundation
import ShoppingAssistant

// MARK: - The shop's commands

extension REPLCommandTable {
    /// The shop around the chat (`REPLShop`): the cart and its events, the purchase, the
    /// wishlist, the account events, the push permission, events of the app's own and the
    /// recommendation widget (B10–B12).
    static let shopCommands: [REPLCommand] = [
        REPLCommand(
            "cart", "add|remove SKU [QTY]",
            "show the cart; add/remove [@PRICE] send cart events; :cart SKU… is the cart screen",
            group: .shop, example: ":cart add KIT-1001 2", related: ["buy", "wish", "product"],
            completions: [["add", "remove"]], subcompletions: ["add": [[]], "remove": [[]]]
        ) { session, argument in
            let words = argument.split(separator: " ").map(String.init)
            switch words.first?.lowercased() {
            case nil:
                await session.shop.showCart()
            case "add":
                guard let parsed = ShopArguments(words.dropFirst(), allowsPrice: true) else {
                    return .usage(note: ShopArguments.note(price: true))
                }
                await session.shop.add(sku: parsed.sku, quantity: parsed.quantity ?? 1, price: parsed.price)
            case "remove":
                guard let parsed = ShopArguments(words.dropFirst(), allowsPrice: false) else {
                    return .usage(note: ShopArguments.note(price: false) + "; without QTY the whole line")
                }
                await session.shop.remove(sku: parsed.sku, quantity: parsed.quantity)
            case let word?:
                // `:cart ad KIT-1001` is a typo, not the cart screen for SKUs "ad" and KIT-1001.
                if let meant = mistypedSubcommand(word) {
                    let sku = words.dropFirst().first.map { " " + TerminalSanitizer.sanitize($0) } ?? " SKU"
                    session.output.line(.warning, "did you mean :cart \(meant)\(sku)? (nothing was sent)")
                } else {
                    // The cart screen, as before the shop had a cart: its SKUs in the page context.
                    await session.host.show(REPLHost.cartPage(words))
                }
            }
            return .done
        },
        .plain(
            "buy", "purchase-v1 of the cart (a fresh order id); empties it", group: .shop,
            related: ["cart"]
        ) { await $0.shop.buy() },
        REPLCommand(
            "wish", "SKU [@PRICE]", "add-to-wishlist-v1 for a product", group: .shop,
            example: ":wish ELC-2002", related: ["cart"]
        ) { session, argument in
            let words = argument.split(separator: " ").map(String.init)
            guard let parsed = ShopArguments(words[...], allowsPrice: true), parsed.quantity == nil else {
                return .usage(note: "a SKU; @PRICE gives its price")
            }
            await session.shop.wish(sku: parsed.sku, price: parsed.price)
            return .done
        },
        REPLCommand(
            "login", "[ID]",
            "login-v1 (a phone number as its phone_hash); no identity change",
            group: .shop, example: ":login +7 999 123-45-67", related: ["signup", "user"]
        ) { session, id in
            await session.shop.account(.login, id: id.isEmpty ? nil : id)
            return .done
        },
        REPLCommand(
            "signup", "[ID]", "signup-v1 (a phone number as its phone_hash)",
            group: .shop, example: ":signup +7 999 123-45-67", related: ["login"]
        ) { session, id in
            await session.shop.account(.signup, id: id.isEmpty ? nil : id)
            return .done
        },
        REPLCommand(
            "push", "[STATUS]", "set device.permission: granted, denied or unknown",
            group: .shop, example: ":push granted", related: ["state"],
            completions: [NotificationPermissionStatus.allCases.map(\.rawValue)]
        ) { session, argument in
            guard !argument.isEmpty else {
                await session.shop.push(nil)
                return .done
            }
            guard let status = NotificationPermissionStatus(rawValue: argument.lowercased()) else {
                return .usage(note: "granted, denied or unknown")
            }
            await session.shop.push(status)
            return .done
        },
        REPLCommand(
            "event", "TYPE NAME [k=v…]", "a CustomEvent; NAME runs up to the first k=v",
            group: .shop, example: ":event survey-completed-v1 Survey Completed score=9", related: ["cart", "log"]
        ) { session, argument in
            guard let event = CustomEventArguments(argument) else {
                return .usage(note: "a type, a name, then key=value properties, each key once")
            }
            await session.shop.custom(type: event.type, name: event.name, properties: event.properties)
            return .done
        },
        REPLCommand(
            "widget", "[SELECTOR]",
            "draw a recommendation widget; then tap N, left, right, close; on [SELECTOR] draws it on every screen",
            group: .shop, example: ":widget recommendations", related: ["cart", "log"],
            completions: [["tap", "left", "right", "close", "on", "off"]]
        ) { session, argument in
            let words = argument.split(separator: " ").map(String.init)
            switch (words.first?.lowercased(), words.count) {
            case ("tap", 2):
                guard let number = Int(words[1]) else { return .usage(note: ":widget tap N, N a card number") }
                await session.shop.tapWidget(number)
            case ("tap", _): return .usage(note: ":widget tap N, N a card number")
            case ("left", 1): await session.shop.scrollWidget(by: -1)
            case ("right", 1): await session.shop.scrollWidget(by: 1)
            case ("close", 1): await session.shop.closeWidget()
            case ("on", 1): await session.shop.setScreenWidget(DemoStore.Configuration().recommendationSelector)
            case ("on", 2): await session.shop.setScreenWidget(words[1])
            case ("off", 1): await session.shop.setScreenWidget(nil)
            case (nil, _): await session.shop.showWidget(selector: DemoStore.Configuration().recommendationSelector)
            case (_, 1): await session.shop.showWidget(selector: words[0])
            default: return .usage(note: "one selector, or tap N, left, right, close, on [SELECTOR], off")
            }
            return .done
        },
    ]
}

// MARK: - Arguments

/// `SKU [QTY] [@PRICE]` of `:cart add`, `:cart remove` and `:wish`: a quantity from 1 to
/// `maximumQuantity`, a price as a plain decimal (`@1990`, `@19.99`) after an `@`.
struct ShopArguments: Sendable, Hashable {
    /// The most units one command moves: more is a typo, and a line's sum stays exact.
    static let maximumQuantity = 1_000_000

    let sku: String
    let quantity: Int?
    let price: Decimal?

    init?(_ words: ArraySlice<String>, allowsPrice: Bool) {
        guard let sku = words.first, !sku.hasPrefix("@") else { return nil }
        var quantity: Int?
        var price: Decimal?
        for word in words.dropFirst() {
            if word.hasPrefix("@"), allowsPrice, price == nil, let amount = Self.price(word.dropFirst()) {
                price = amount
            } else if quantity == nil, let count = Int(word), (1...Self.maximumQuantity).contains(count) {
                quantity = count
            } else {
                return nil
            }
        }
        self.sku = sku
        self.quantity = quantity
        self.price = price
    }

    /// The usage note.
    static func note(price: Bool) -> String {
        "a SKU, then a quantity from 1 to \(maximumQuantity)" + (price ? "; @PRICE gives the price of one unit" : "")
    }

    /// `1990`, `19.99`: digits with at most one decimal point inside, at most 18 characters
    /// (exact as a decimal); nil for anything else.
    static func price(_ text: Substring) -> Decimal? {
        guard (1...18).contains(text.count), text.first != ".", text.last != ".",
            text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), text.filter({ $0 == "." }).count <= 1
        else { return nil }
        return Decimal(string: String(text), locale: Locale(identifier: "en_US_POSIX"))
    }
}

/// `TYPE NAME [key=value…]` of `:event`: the name is every word up to the first with an `=`,
/// so it may have spaces (`Survey Completed`); a property's value may be empty, its key not, and
/// no key comes twice.
struct CustomEventArguments: Sendable, Hashable {
    let type: String
    let name: String
    let properties: [String: String]

    init?(_ argument: String) {
        let words = argument.split(separator: " ").map(String.init)
        guard let type = words.first, !type.contains("=") else { return nil }
        let nameWords = words.dropFirst().prefix { !$0.contains("=") }
        guard !nameWords.isEmpty else { return nil }
        var properties: [String: String] = [:]
        for word in words.dropFirst(1 + nameWords.count) {
            guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { return nil }
            let key = String(word[..<equals])
            guard properties[key] == nil else { return nil }
            properties[key] = String(word[word.index(after: equals)...])
        }
        self.type = type
        self.name = nameWords.joined(separator: " ")
        self.properties = properties
    }
}

/// The subcommand a word after `:cart` is a slip of, if it is no SKU: no digit (a SKU has
/// one), and a prefix of `add` or `remove` or an edit away (two for the longer word).
private func mistypedSubcommand(_ word: String) -> String? {
    let word = word.lowercased()
    guard word.count >= 2, !word.contains(where: \.isNumber) else { return nil }
    if "add".hasPrefix(word) || EditDistance.between(word, "add") <= 1 { return "add" }
    if "remove".hasPrefix(word) || EditDistance.between(word, "remove") <= 2 { return "remove" }
    return nil
}
