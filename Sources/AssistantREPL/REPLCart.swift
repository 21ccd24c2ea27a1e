import Foundation
import ShoppingAssistant

/// The shopper's cart the REPL plays (`:cart`, `:buy`): one line per SKU, each with its units
/// and the price of one unit, added up as exact decimals. A value type: the shop changes it
/// and sends the event that says what happened (B10), with the cart as it is after the change.
///
/// A line is `CartItem(productId:quantity:itemPrice:)` on the wire: two units of `KIT-1001` at
/// 1990 are one line of quantity 2 with `itemPrice` 1990, as the seed's `CartItem` and the
/// SDKs read it (the price of one item), not two lines.
struct REPLCart: Sendable, Hashable {
    /// One product in the cart.
    struct Line: Sendable, Hashable {
        /// The SKU exactly as the catalogue (or the answer the price came in) spells it.
        let sku: String
        /// The product's name, when the REPL knows it, for `:cart`.
        let name: String?
        var quantity: Int
        /// The price of one unit.
        let unitPrice: Decimal
        /// The currency of `unitPrice`, when known.
        let currency: String?

        /// The line's sum.
        var total: Decimal { unitPrice * Decimal(quantity) }

        /// The line on the wire.
        var item: CartItem { CartItem(productId: sku, quantity: quantity, itemPrice: EventAmount(unitPrice)) }
    }

    /// What an addition or removal did, or why it did nothing.
    enum Change: Sendable, Hashable {
        /// `quantity` units changed; `line` is the line after the change (its quantity is zero
        /// when the line is gone).
        case changed(quantity: Int, line: Line)
        /// The SKU is in the cart at another price: a line has one price.
        case otherPrice(Line)
        /// The SKU is not in the cart.
        case notInCart
        /// The cart holds fewer units than asked to remove.
        case tooFew(held: Int)
        /// The line would hold more units than a quantity can count.
        case tooMany
    }

    /// The lines in the order their SKUs first went in.
    private(set) var lines: [Line] = []

    var isEmpty: Bool { lines.isEmpty }

    /// How many units the cart holds.
    var units: Int { lines.reduce(0) { $0 + $1.quantity } }

    /// The cart's sum.
    var total: Decimal { lines.reduce(Decimal(0)) { $0 + $1.total } }

    /// The cart on the wire.
    var items: [CartItem] { lines.map(\.item) }

    /// The currency of every line, when they all have the same one; nil when none is known or
    /// they differ (an event then leaves `currency` out).
    var currency: String? {
        let currencies = Set(lines.map(\.currency))
        guard currencies.count == 1 else { return nil }
        return currencies.first ?? nil
    }

    /// The line of `sku`, if the cart holds it.
    func line(_ sku: String) -> Line? { lines.first { $0.sku == sku } }

    /// Puts `quantity` (at least one) units of `sku` at `unitPrice` in the cart.
    mutating func add(sku: String, name: String?, quantity: Int, unitPrice: Decimal, currency: String?) -> Change {
        guard let index = lines.firstIndex(where: { $0.sku == sku }) else {
            let line = Line(sku: sku, name: name, quantity: quantity, unitPrice: unitPrice, currency: currency)
            lines.append(line)
            return .changed(quantity: quantity, line: line)
        }
        guard lines[index].unitPrice == unitPrice, lines[index].currency == currency else {
            return .otherPrice(lines[index])
        }
        let (sum, overflow) = lines[index].quantity.addingReportingOverflow(quantity)
        guard !overflow else { return .tooMany }
        lines[index].quantity = sum
        return .changed(quantity: quantity, line: lines[index])
    }

    /// Takes `quantity` units of `sku` out of the cart, or the whole line when nil.
    mutating func remove(sku: String, quantity: Int?) -> Change {
        guard let index = lines.firstIndex(where: { $0.sku == sku }) else { return .notInCart }
        let held = lines[index].quantity
        let removed = quantity ?? held
        guard removed <= held else { return .tooFew(held: held) }
        lines[index].quantity = held - removed
        let line = lines[index]
        if line.quantity == 0 { lines.remove(at: index) }
        return .changed(quantity: removed, line: line)
    }

    /// Empties the cart (after a purchase).
    mutating func empty() {
        lines = []
    }
}
