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

    public var description: String { "ref(o\(opening).d\(dialog).i\(identity).r\(reply).p\(item))" }
}

/// A price as the server sent it: a number or a preformatted string (PR1).
public enum AssistantPrice: Sendable, Hashable, CustomStringConvertible {
    case amount(Double)
    case text(String)

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
    public let itemId: String
    public let ref: AssistantProductRef
    public let name: String
    /// True when the product has a SKU or a URL; only then may the host report a tap (PR1, PR7).
    public let canOpen: Bool
    public let sku: String?
    public let url: String?
    public let imageUrl: String?
    public let price: AssistantPrice?
    public let oldPrice: AssistantPrice?
    public let currency: String?
    public let category: String?
    public let brand: String?
    /// Every other field of the server's item, keys as received.
    ///
    /// Kept as the item's JSON text until first read, since most hosts read few of them:
    /// the value is what decoding the item at once would have given.
    public var extra: [String: JSONValue] { extras.value }
    private let extras: LazyJSONObject

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
    public let title: String?
    public let products: [AssistantProduct]

    public init(title: String?, products: [AssistantProduct]) {
        self.title = title
        self.products = products
    }
}

/// The space a product block gets (PR3): exactly `availableWidth` (terminal columns in the
/// REPL) and a finite height that follows the content.
public struct AssistantProductLayout: Sendable, Hashable {
    public let availableWidth: Int
    /// When false, the block shows products but reports no taps (PR7).
    public let isInteractionEnabled: Bool

    public init(availableWidth: Int, isInteractionEnabled: Bool) {
        self.availableWidth = availableWidth
        self.isInteractionEnabled = isInteractionEnabled
    }
}
