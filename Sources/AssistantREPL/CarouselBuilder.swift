import ShoppingAssistant

/// The REPL's product block: one horizontal row of boxed cards that scrolls left and right,
/// drawn for exactly `layout.availableWidth` terminal columns (PR2, PR3).
///
/// ```
/// Подборка для вас (1–3 of 5)
/// ┌─ 1 ──────────────────┐ ┌─ 2 ──────────────────┐ ┌──────────────────────┐
/// │ [image]              │ │ [no image]           │ │ [no image]           │
/// │ Кроссовки беговые    │ │ Носки                │ │ Подарочная карта     │
/// │ 1990 RUB  was 2490   │ │ — no price —         │ │ 500 RUB              │
/// │ Nike · Обувь         │ │                      │ │                      │
/// └──────────────────────┘ └──────────────────────┘ └─ not available ─────┘
///                                                                    2 more ›
/// ```
///
/// - Every line is at most `availableWidth` columns as a terminal counts them (wide characters
///   two, combining marks none); cards are 24 columns, shrunk to fit widths of 20…23.
/// - The height follows the content and is finite and positive for any width and any block,
///   including an empty one, which renders a one-line empty state.
/// - Missing fields show placeholders; a product is never hidden for lacking one (PR1).
/// - Cards that cannot be tapped (PR7: `canOpen` false, or interaction disabled) carry no
///   number and a footer saying why, so `:tap N` only ever names tappable cards.
/// - Every string from the server is sanitised before it is measured or drawn.
/// - The rendering reports which products are in the viewport, because only those may count
///   towards a visible impression (PR5).
///
/// A value type with no state beyond its settings: the REPL scrolls by building again with
/// another `scrollOffset`, and the engine may call `build` from its actor at any time.
package struct CarouselBuilder: AssistantProductBlockBuilder {
    /// The characters boxes are drawn with.
    package enum Borders: Sendable, Hashable {
        /// Unicode box drawing, ellipsis and arrows.
        case unicode
        /// Plain ASCII, for terminals and fonts without box drawing.
        case ascii
    }

    /// The nominal card width in columns, borders included.
    package static let standardCardWidth = 24
    /// Columns between two cards.
    package static let gap = 1
    /// Below this card width the content cannot be laid out; the block falls back to a
    /// one-line summary.
    package static let minimumCardWidth = 12

    /// Index of the first card shown. Clamped when the block is built, so the REPL can add or
    /// subtract a page without knowing how many cards fit.
    package var scrollOffset: Int
    /// Box-drawing characters or ASCII.
    package var borders: Borders
    /// Colour for titles, numbers and unavailable cards; `.plain` for deterministic output.
    package var style: TerminalStyle
    /// The card width used when the terminal is wide enough.
    package var cardWidth: Int

    /// A builder showing cards from `scrollOffset` on.
    package init(
        scrollOffset: Int = 0, borders: Borders = .unicode, style: TerminalStyle = .plain,
        cardWidth: Int = CarouselBuilder.standardCardWidth
    ) {
        self.scrollOffset = scrollOffset
        self.borders = borders
        self.style = style
        self.cardWidth = cardWidth
    }

    /// Whether a product may be tapped in this layout (PR7).
    package static func isTappable(_ product: AssistantProduct, layout: AssistantProductLayout) -> Bool {
        layout.isInteractionEnabled && product.canOpen
    }

    /// The number a card shows and `:tap N` takes for the product at `index` in its block.
    /// Numbers follow the block, not the viewport, so they stay the same while scrolling.
    package static func number(forIndex index: Int) -> Int { index + 1 }

    /// `AssistantProductBlockBuilder`: the same as `render(block:layout:)`.
    package func build(block: AssistantProductBlock, layout: AssistantProductLayout)
        -> any AssistantProductBlockRendering
    {
        render(block: block, layout: layout)
    }

    /// Draws the block.
    package func render(block: AssistantProductBlock, layout: AssistantProductLayout) -> CarouselRendering {
        let products = block.products
        let cards = products.map { CarouselCard($0, layout: layout) }
        let drawn = draw(cards, title: block.title, width: layout.availableWidth)
        var tappable: [Int: AssistantProductRef] = [:]
        for index in drawn.visible where cards[index].isTappable {
            tappable[Self.number(forIndex: index)] = products[index].ref
        }
        return CarouselRendering(
            lines: drawn.lines, width: drawn.width, productCount: products.count, visibleRange: drawn.visible,
            visibleRefs: drawn.visible.map { products[$0].ref }, tappableRefs: tappable)
    }

    /// Draws `cards` as one row under `title`, from `scrollOffset` on, for `width` columns (at
    /// least one): the lines, the width they were drawn for, and which cards are in the
    /// viewport (none when no card fits, and then one summary line stands for them all).
    package func draw(_ cards: [CarouselCard], title: String?, width: Int) -> (
        lines: [String], width: Int, visible: Range<Int>
    ) {
        let glyphs = Glyphs(borders)
        let width = max(1, width)
        let title = title.map { TerminalSanitizer.sanitize($0) }.flatMap { $0.isEmpty ? nil : $0 }
        let card = min(max(1, cardWidth), width)
        guard !cards.isEmpty, card >= Self.minimumCardWidth else {
            let summary =
                cards.isEmpty
                ? title.map { "\($0) \(glyphs.separator) no products" } ?? "No products"
                : "\(title ?? "Products") (\(cards.count))"
            let line = style.apply(.dim, DisplayWidth.truncate(summary, to: width, ellipsis: glyphs.ellipsis))
            return ([line], width, 0..<0)
        }

        let fitting = max(1, (width + Self.gap) / (card + Self.gap))
        let count = min(fitting, cards.count)
        let offset = min(max(0, scrollOffset), cards.count - count)
        let visible = offset..<(offset + count)

        let drawn = visible.map { index in drawCard(cards[index], index: index, width: card, glyphs: glyphs) }
        let cardHeight = drawn.map(\.count).max() ?? 0
        let gap = String(repeating: " ", count: Self.gap)
        var lines = [titleLine(title, visible: visible, total: cards.count, width: width, glyphs: glyphs)]
        for row in 0..<cardHeight {
            lines.append(drawn.map { $0.line(row, height: cardHeight) }.joined(separator: gap))
        }
        let rowWidth = count * card + (count - 1) * Self.gap
        if let navigation = navigationLine(
            before: visible.lowerBound, after: cards.count - visible.upperBound, width: rowWidth, glyphs: glyphs)
        {
            lines.append(style.apply(.dim, navigation))
        }
        return (lines, width, visible)
    }

    // MARK: - Pieces

    private func titleLine(_ title: String?, visible: Range<Int>, total: Int, width: Int, glyphs: Glyphs) -> String {
        let range: String
        if visible.count == total {
            range = " (\(total))"
        } else if visible.count == 1 {
            range = " (\(visible.upperBound) of \(total))"
        } else {
            range = " (\(visible.lowerBound + 1)\(glyphs.rangeDash)\(visible.upperBound) of \(total))"
        }
        let room = width - DisplayWidth.of(range)
        let text =
            room >= 4
            ? DisplayWidth.truncate(title ?? "Products", to: room, ellipsis: glyphs.ellipsis) + range
            : DisplayWidth.truncate((title ?? "Products") + range, to: width, ellipsis: glyphs.ellipsis)
        return style.apply(.bold, text)
    }

    private func navigationLine(before: Int, after: Int, width: Int, glyphs: Glyphs) -> String? {
        let left = before > 0 ? "\(glyphs.left) \(before) more" : ""
        let right = after > 0 ? "\(after) more \(glyphs.right)" : ""
        if left.isEmpty, right.isEmpty { return nil }
        let used = DisplayWidth.of(left) + DisplayWidth.of(right)
        // Right-aligned under the last card, so "more" sits on the side it scrolls to; no
        // trailing spaces after a lone left indicator.
        let spaces = right.isEmpty ? 0 : max(left.isEmpty ? 0 : 1, width - used)
        return DisplayWidth.truncate(
            left + String(repeating: " ", count: spaces) + right, to: width, ellipsis: glyphs.ellipsis)
    }

    /// One card as lines of exactly `width` columns: top border, content, bottom border.
    /// Cards of one row may differ in height; the row pads them with blank content lines.
    private func drawCard(_ card: CarouselCard, index: Int, width: Int, glyphs: Glyphs) -> CardLines {
        let inner = width - 4
        let fit = { (text: String) in DisplayWidth.truncate(text, to: inner, ellipsis: glyphs.ellipsis) }
        var content: [String] = []

        let hasImage = !(card.imageUrl ?? "").isEmpty
        content.append(hasImage ? "[image]" : "[no image]")

        let name = TerminalSanitizer.sanitize(card.name)
        let nameLines = DisplayWidth.wrap(name, width: inner, maxLines: 2, ellipsis: glyphs.ellipsis)
        content += nameLines.isEmpty ? ["(no name)"] : nameLines

        let currency = card.currency.map { TerminalSanitizer.sanitize($0) }.flatMap { $0.isEmpty ? nil : $0 }
        let price = card.price.map { Self.format($0, currency: currency) } ?? glyphs.noPrice
        if let oldPrice = card.oldPrice {
            let was = "was " + Self.format(oldPrice, currency: nil)
            let together = price + "  " + was
            content += DisplayWidth.of(together) <= inner ? [together] : [fit(price), fit(was)]
        } else {
            content.append(fit(price))
        }

        let details = [card.brand, card.category]
            .compactMap { $0.map { TerminalSanitizer.sanitize($0) } }
            .filter { !$0.isEmpty }
            .joined(separator: " \(glyphs.separator) ")
        if !details.isEmpty { content.append(fit(details)) }

        let tappable = card.isTappable
        let horizontal = width - 2
        let top: String
        if tappable {
            let label = "\(glyphs.horizontal) \(Self.number(forIndex: index)) "
            let labelled = DisplayWidth.truncate(label, to: horizontal, ellipsis: "")
            top =
                glyphs.topLeft + style.apply(.accent, labelled) + glyphs.line(horizontal - DisplayWidth.of(labelled))
                + glyphs.topRight
        } else {
            top = glyphs.topLeft + glyphs.line(horizontal) + glyphs.topRight
        }
        let bottom: String
        if tappable {
            bottom = glyphs.bottomLeft + glyphs.line(horizontal) + glyphs.bottomRight
        } else {
            let reason = TerminalSanitizer.sanitize(card.unavailable ?? "")
            let label = DisplayWidth.truncate("\(glyphs.horizontal) \(reason) ", to: horizontal, ellipsis: "")
            bottom = glyphs.bottomLeft + label + glyphs.line(horizontal - DisplayWidth.of(label)) + glyphs.bottomRight
        }
        return CardLines(
            top: top,
            content: content.map { glyphs.vertical + " " + DisplayWidth.pad($0, to: inner) + " " + glyphs.vertical },
            blank: glyphs.vertical + String(repeating: " ", count: width - 2) + glyphs.vertical,
            bottom: bottom, dimmed: !tappable, style: style)
    }

    /// A price as the server sent it; a number gets the currency after it, a preformatted text
    /// is shown as is because it usually carries its own currency sign.
    static func format(_ price: AssistantPrice, currency: String?) -> String {
        switch price {
        case .amount:
            return currency.map { "\(price) \($0)" } ?? price.description
        case .text(let text):
            return TerminalSanitizer.sanitize(text)
        }
    }
}

// MARK: - Rendering

/// A drawn product block: terminal lines plus what the REPL needs to act on them.
package struct CarouselRendering: AssistantProductBlockRendering, Sendable, Hashable {
    /// The lines to print, none wider than `width` columns and none ending in a newline.
    package let lines: [String]
    /// The `availableWidth` the block was drawn for.
    package let width: Int
    /// How many products the block has, shown or not.
    package let productCount: Int
    /// Indices (in the block) of the cards in the viewport. Only these can earn a visible
    /// impression (PR5); empty when no card fits at all.
    package let visibleRange: Range<Int>
    /// The refs of the cards in the viewport, in display order, for the impression timer.
    package let visibleRefs: [AssistantProductRef]
    /// The number printed on each tappable visible card, to the product it taps.
    package let tappableRefs: [Int: AssistantProductRef]

    /// Lines of output: never zero, never unbounded (PR3).
    package var height: Int { lines.count }
    /// Cards scrolled off to the left.
    package var hiddenBefore: Int { visibleRange.lowerBound }
    /// Cards scrolled off to the right.
    package var hiddenAfter: Int { productCount - visibleRange.upperBound }
    /// The whole block as one string with `\n` between lines.
    package var text: String { lines.joined(separator: "\n") }
}

// MARK: - Drawing helpers

/// One card: its borders and content lines, stretched to the height of its row.
private struct CardLines {
    let top: String
    let content: [String]
    let blank: String
    let bottom: String
    let dimmed: Bool
    let style: TerminalStyle

    /// The card's own height, borders included.
    var count: Int { content.count + 2 }

    /// Line `row` of the card drawn `height` lines high: a shorter card gets blank lines above
    /// its bottom border, so all borders of a row line up.
    func line(_ row: Int, height: Int) -> String {
        let line: String
        if row == 0 {
            line = top
        } else if row == height - 1 {
            line = bottom
        } else if row - 1 < content.count {
            line = content[row - 1]
        } else {
            line = blank
        }
        return dimmed ? style.apply(.dim, line) : line
    }
}

/// The characters one border style draws with.
private struct Glyphs {
    let horizontal: String
    let vertical: String
    let topLeft: String
    let topRight: String
    let bottomLeft: String
    let bottomRight: String
    let ellipsis: String
    let left: String
    let right: String
    let separator: String
    let rangeDash: String
    let noPrice: String

    init(_ borders: CarouselBuilder.Borders) {
        switch borders {
        case .unicode:
            (horizontal, vertical, topLeft, topRight, bottomLeft, bottomRight) = ("─", "│", "┌", "┐", "└", "┘")
            (ellipsis, left, right, separator, rangeDash) = ("…", "‹", "›", "·", "–")
            noPrice = "— no price —"
        case .ascii:
            (horizontal, vertical, topLeft, topRight, bottomLeft, bottomRight) = ("-", "|", "+", "+", "+", "+")
            (ellipsis, left, right, separator, rangeDash) = ("...", "<", ">", "-", "-")
            noPrice = "- no price -"
        }
    }

    func line(_ count: Int) -> String { String(repeating: horizontal, count: max(0, count)) }
}
