/// An opaque handle for one appearance of a product in one opening of the chat.
///
/// It encodes the opening, dialog and identity epochs it was issued under, so the engine can
/// tell a stale ref from a current one without a lookup (PR6, PR8). Hosts pass it back through
/// `performAssistantProductAction` and never build one themselves.
public struct AssistantProductRef: Sendable, Hashable, CustomStringConvertible {
    let opening: UInt64
    let dialog: UInt64
    let identity: UInt64
    /// The reply's key in its dialog: stable while the dialog lives (PR8).
    let reply: UInt64
    /// Position of the product in that reply's block.
    let item: Int

    /// A readable form for logs and test failures; not a format to parse.
    public var description: String { "ref(o\(opening).d\(dialog).i\(identity).r\(reply).p\(item))" }
}

/// A price as the server sent it: a number or a preformatted string (PR1).
public enum AssistantPrice: Sendable, Hashable, CustomStringConvertible {
    /// A numeric price; the host formats it with `currency`.
    case amount(Double)
    /// A price the server formatted already; show it as is.
    case text(String)

    /// The price as text: a string price as sent, a whole amount without decimals, else two.
    public var description: String {
        switch self {
        case .text(let text): return text
        case .amount(let value):
            if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
            return String(format: "%.2f", value)
        }
    }
}

/// A product from a reply, as handed to the host's block builder (PR1).
///
/// Only `itemId`, `ref`, `name` and `canOpen` are guaranteed; everything else is optional and
/// kept, because a shop's catalogue is never complete and a missing picture must not hide a
/// product. Tracking URLs stay inside the engine (PR2).
public struct AssistantProduct: Sendable, Hashable {
    /// The shop's item ID; always present, so the host can key its cards on it (PR1).
    public let itemId: String
    /// Pass it back to `performAssistantProductAction`; it goes stale after a close, a new chat
    /// or an identity change (PR8).
    public let ref: AssistantProductRef
    /// The product's name, as the server sent it; always present (PR1).
    public let name: String
    /// True when the product has a SKU or a URL; only then may the host report a tap (PR1, PR7).
    public let canOpen: Bool
    /// The shop's SKU; with it the host can open the product even without a URL (PR1).
    public let sku: String?
    /// The product page, as sent; not validated, so check it before opening it outside the engine.
    public let url: String?
    /// The picture, when there is one; a product without one is still shown (PR1).
    public let imageUrl: String?
    /// The current price, when the server gave one.
    public let price: AssistantPrice?
    /// The price before a discount, to show struck through; `nil` when there is no discount.
    public let oldPrice: AssistantPrice?
    /// The currency of numeric prices, as sent (a code or a symbol).
    public let currency: String?
    /// The shop's category name, as sent.
    public let category: String?
    /// The brand, as sent.
    public let brand: String?
    /// Every other field of the server's item, keys as received.
    ///
    /// Kept as the item's JSON text until first read, since most hosts read few of them:
    /// the value is what decoding the item at once would have given.
    public var extra: [String: JSONValue] { extras.value }
    private let extras: LazyJSONObject

    /// For a host's builder tests and previews; `canOpen` follows from `sku` and `url` (PR1).
    /// Real products, with refs the engine accepts, come only from replies.
    public init(
        itemId: String, ref: AssistantProductRef, name: String, sku: String? = nil, url: String? = nil,
        imageUrl: String? = nil, price: AssistantPrice? = nil, oldPrice: AssistantPrice? = nil,
        currency: String? = nil, category: String? = nil, brand: String? = nil, extra: [String: JSONValue] = [:]
    ) {
        self.init(
            itemId: itemId, ref: ref, name: name, sku: sku, url: url, imageUrl: imageUrl, price: price,
            oldPrice: oldPrice, currency: currency, category: category, brand: brand, extras: LazyJSONObject(extra))
    }

    init(
        itemId: String, ref: AssistantProductRef, name: String, sku: String?, url: String?, imageUrl: String?,
        price: AssistantPrice?, oldPrice: AssistantPrice?, currency: String?, category: String?, brand: String?,
        extras: LazyJSONObject
    ) {
        self.itemId = itemId
        self.ref = ref
        self.name = name
        self.sku = sku
        self.url = url
        self.imageUrl = imageUrl
        self.price = price
        self.oldPrice = oldPrice
        self.currency = currency
        self.category = category
        self.brand = brand
        self.extras = extras
        self.canOpen = !(sku ?? "").isEmpty || !(url ?? "").isEmpty
    }
}

/// A reply's whole product selection, passed to the builder in one piece (PR2).
public struct AssistantProductBlock: Sendable, Hashable {
    /// The heading above the products, when the reply gives one.
    public let title: String?
    /// The products in the server's order; may be empty, and the builder then shows an empty state (PR2).
    public let products: [AssistantProduct]

    /// For a host's builder tests and previews.
    public init(title: String?, products: [AssistantProduct]) {
        self.title = title
        self.products = products
    }
}

/// The space a product block gets (PR3): exactly `availableWidth` (terminal columns in the
/// REPL) and a finite height that follows the content.
public struct AssistantProductLayout: Sendable, Hashable {
    /// The width the block must take exactly, in host units (columns in the REPL) (PR3).
    public let availableWidth: Int
    /// When false, the block shows products but reports no taps (PR7).
    public let isInteractionEnabled: Bool

    /// The presenter builds one per drawing, from its current width and whether the chat takes input.
    public init(availableWidth: Int, isInteractionEnabled: Bool) {
        self.availableWidth = availableWidth
        self.isInteractionEnabled = isInteractionEnabled
    }
}
