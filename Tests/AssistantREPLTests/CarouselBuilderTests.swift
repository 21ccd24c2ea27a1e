import Testing

@testable import AssistantREPL
@testable import ShoppingAssistant

@Suite(.timeLimit(.minutes(2))) struct CarouselBuilderTests {
    // MARK: - Fixtures

    private static func ref(_ item: Int) -> AssistantProductRef {
        AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: item)
    }

    private static func product(
        _ item: Int, name: String? = nil, sku: String? = "SKU", url: String? = nil,
        imageUrl: String? = nil, price: AssistantPrice? = nil, oldPrice: AssistantPrice? = nil,
        currency: String? = nil, category: String? = nil, brand: String? = nil
    ) -> AssistantProduct {
        AssistantProduct(
            itemId: "item-\(item)", ref: ref(item), name: name ?? "Product \(item)", sku: sku, url: url,
            imageUrl: imageUrl, price: price, oldPrice: oldPrice, currency: currency, category: category, brand: brand)
    }

    /// Products that exercise every field combination and awkward text.
    private static func assorted(_ count: Int) -> [AssistantProduct] {
        let names = [
            "Кроссовки беговые Nike Air Zoom Pegasus 40 мужские, размер 42",
            "日本語の商品名前テスト長い名前の商品",
            "Evil\u{1b}[2J\u{1b}]8;;http://evil\u{7}name\r\nwith\u{202e}tricks",
            "e\u{301}te\u{301} 👨\u{200d}👩\u{200d}👧 family pack",
            "Supercalifragilisticexpialidocious-without-spaces-at-all",
            "",
            "Носки",
        ]
        return (0..<count).map { index in
            product(
                index, name: names[index % names.count], sku: index % 3 == 2 ? nil : "SKU-\(index)",
                imageUrl: index % 2 == 0 ? "https://img/\(index).jpg" : nil,
                price: index % 4 == 3 ? nil : index % 5 == 1 ? .text("1 990 ₽") : .amount(Double(index) * 1000.5),
                oldPrice: index % 3 == 0 ? .amount(999_999_999) : nil, currency: index % 2 == 0 ? "RUB" : nil,
                category: index % 2 == 0 ? "Обувь и аксессуары для бега" : nil, brand: index % 3 == 1 ? "日本ブランド" : nil)
        }
    }

    private func render(
        _ products: [AssistantProduct], width: Int, offset: Int = 0, interactive: Bool = true, title: String? = "Picks",
        borders: CarouselBuilder.Borders = .unicode
    ) -> CarouselRendering {
        CarouselBuilder(scrollOffset: offset, borders: borders)
            .render(
                block: AssistantProductBlock(title: title, products: products),
                layout: AssistantProductLayout(availableWidth: width, isInteractionEnabled: interactive))
    }

    // MARK: - Size (PR3)

    // covers: PR3
    @Test func everyLineFitsTheWidthAndTheHeightIsFiniteForAnyWidthAndBlock() {
        let counts = [0, 1, 2, 3, 5, 8, 13, 21, 34, 60]
        let products = Self.assorted(60)
        for width in 20...300 {
            for count in counts {
                checkBounds(Array(products.prefix(count)), width: width, offset: count / 2)
            }
        }
        for count in 0...60 {
            for width in [20, 21, 22, 23, 24, 48, 49, 50, 80, 121, 300] {
                checkBounds(Array(products.prefix(count)), width: width, offset: count - 1)
            }
        }
    }

    private func checkBounds(
        _ products: [AssistantProduct], width: Int, offset: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let rendering = render(products, width: width, offset: offset)
        #expect(rendering.height > 0, "width \(width), \(products.count) products", sourceLocation: sourceLocation)
        #expect(rendering.height <= 12, "width \(width), \(products.count) products", sourceLocation: sourceLocation)
        #expect(rendering.height == rendering.lines.count, sourceLocation: sourceLocation)
        for line in rendering.lines {
            #expect(
                DisplayWidth.of(line) <= width, "width \(width), \(products.count) products: \(line)",
                sourceLocation: sourceLocation)
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 }, sourceLocation: sourceLocation)
        }
        #expect(rendering.visibleRange.isEmpty == products.isEmpty, sourceLocation: sourceLocation)
        #expect(rendering.visibleRange.upperBound <= products.count, sourceLocation: sourceLocation)
    }

    @Test func cardRowsUseExactlyTheWidthForNarrowTerminals() {
        for width in 20...24 {
            let rendering = render(Self.assorted(3), width: width)
            #expect(rendering.visibleRange.count == 1)
            let cardRows = rendering.lines.dropFirst().dropLast()
            #expect(cardRows.allSatisfy { DisplayWidth.of($0) == width }, "width \(width)")
        }
    }

    @Test func visibleCardCountIsWhatFitsTheWidth() {
        let products = Self.assorted(20)
        #expect(render(products, width: 48).visibleRange == 0..<1)
        #expect(render(products, width: 49).visibleRange == 0..<2)
        #expect(render(products, width: 80).visibleRange == 0..<3)
        #expect(render(products, width: 300).visibleRange == 0..<12)
        #expect(render(Array(products.prefix(2)), width: 300).visibleRange == 0..<2)
    }

    @Test func largerBlocksDoNotGrowTheHeightBeyondOneRow() {
        let few = render(Self.assorted(3), width: 80).height
        let many = render(Self.assorted(60), width: 80).height
        #expect(many <= few + 1)  // at most the scroll indicator line
    }

    // MARK: - Empty state (PR2)

    @Test func emptyBlockRendersOneLineEmptyState() {
        #expect(render([], width: 80).lines == ["Picks · no products"])
        #expect(render([], width: 80, title: nil).lines == ["No products"])
        #expect(render([], width: 20, title: String(repeating: "Long title ", count: 5)).lines.count == 1)
    }

    // MARK: - Card content

    @Test func fullRenderingIsPinned() {
        let products = [
            Self.product(
                0, name: "Кроссовки беговые Nike Air Zoom Pegasus 40", imageUrl: "https://img/1.jpg",
                price: .amount(1990), oldPrice: .amount(2490), currency: "RUB", category: "Обувь", brand: "Nike"),
            Self.product(1),
            Self.product(2, name: "Подарочная карта", sku: nil, price: .amount(500), currency: "RUB"),
            Self.product(3, name: "Hidden"),
        ]
        let expected = [
            "Picks (1–3 of 4)",
            "┌─ 1 ──────────────────┐ ┌─ 2 ──────────────────┐ ┌──────────────────────┐",
            "│ [image]              │ │ [no image]           │ │ [no image]           │",
            "│ Кроссовки беговые    │ │ Product 1            │ │ Подарочная карта     │",
            "│ Nike Air Zoom Pegas… │ │ — no price —         │ │ 500 RUB              │",
            "│ 1990 RUB  was 2490   │ │                      │ │                      │",
            "│ Nike · Обувь         │ │                      │ │                      │",
            "└──────────────────────┘ └──────────────────────┘ └─ not available ──────┘",
            "                                                                  1 more ›",
        ]
        #expect(render(products, width: 80).lines == expected)
    }

    @Test func oldPriceIsLabelledAsSuch() {
        let rendering = render(
            [Self.product(0, price: .amount(1990), oldPrice: .amount(2490), currency: "RUB")], width: 80)
        #expect(rendering.text.contains("1990 RUB  was 2490"))
    }

    @Test func oldPriceMovesToItsOwnLineWhenBothDoNotFit() {
        let rendering = render(
            [Self.product(0, price: .amount(129_990.5), oldPrice: .amount(149_990.25), currency: "RUB")], width: 80)
        #expect(rendering.text.contains("│ 129990.50 RUB "))
        #expect(rendering.text.contains("│ was 149990.25 "))
    }

    @Test func missingFieldsShowPlaceholdersAndTheProductStays() {
        let rendering = render([Self.product(0, name: "Bare")], width: 80)
        #expect(rendering.text.contains("— no price —"))
        #expect(rendering.text.contains("[no image]"))
        #expect(rendering.text.contains("Bare"))
        #expect(rendering.visibleRange == 0..<1)
    }

    @Test func longNamesWrapToTwoLinesAndEndWithAnEllipsis() {
        let name = "one two three four five six seven eight nine ten eleven twelve"
        let rendering = render([Self.product(0, name: name)], width: 80)
        #expect(rendering.lines[3] == "│ one two three four   │")
        #expect(rendering.lines[4] == "│ five six seven eigh… │")
    }

    @Test func serverTextIsSanitisedBeforeDrawing() {
        let rendering = render(
            [Self.product(0, name: "A\u{1b}[2J\u{1b}]52;c;Zm9v\u{7}B", brand: "\u{9b}31mX")], width: 80,
            title: "T\u{1b}]0;pwned\u{7}itle")
        #expect(!rendering.text.unicodeScalars.contains { $0 == "\u{1b}" || $0 == "\u{9b}" || $0 == "\u{7}" })
        #expect(rendering.lines[0].hasPrefix("Title"))
        #expect(rendering.text.contains("│ AB "))
    }

    @Test func asciiBordersUseNoBoxDrawingCharacters() {
        let rendering = render((0..<5).map { Self.product($0, name: "Plain name") }, width: 80, borders: .ascii)
        #expect(rendering.text.unicodeScalars.allSatisfy { $0.isASCII })
        #expect(rendering.lines[1].hasPrefix("+- 1 "))
    }

    // MARK: - Tappability (PR7)

    // covers: PR7
    @Test func cardsThatCannotOpenHaveNoNumberAndSayWhy() {
        let products = [
            Self.product(0), Self.product(1, sku: nil, url: nil), Self.product(2, sku: nil, url: "https://x"),
        ]
        let rendering = render(products, width: 80)
        #expect(rendering.lines[1].contains("─ 1 "))
        #expect(!rendering.lines[1].contains("─ 2 "))
        #expect(rendering.lines[1].contains("─ 3 "))
        #expect(rendering.lines.last { $0.contains("└") }?.contains("not available") == true)
        #expect(Set(rendering.tappableRefs.keys) == [1, 3])
        #expect(rendering.tappableRefs[3] == Self.ref(2))
    }

    // covers: PR7
    @Test func disabledInteractionMakesEveryCardViewOnly() {
        let rendering = render((0..<3).map { Self.product($0) }, width: 80, interactive: false)
        #expect(rendering.tappableRefs.isEmpty)
        #expect(!rendering.lines[1].contains("─ 1 "))
        #expect(rendering.text.contains("view only"))
    }

    // MARK: - Scrolling and viewport (PR5)

    @Test func scrollIndicatorsCountTheHiddenCards() {
        let products = (0..<8).map { Self.product($0) }
        let start = render(products, width: 80)
        #expect(start.lines.last == String(repeating: " ", count: 66) + "5 more ›")
        let middle = render(products, width: 80, offset: 3)
        #expect(middle.lines[0] == "Picks (4–6 of 8)")
        #expect(middle.lines.last == "‹ 3 more" + String(repeating: " ", count: 58) + "2 more ›")
        let end = render(products, width: 80, offset: 5)
        #expect(end.lines.last == "‹ 5 more")
        #expect(end.hiddenBefore == 5)
        #expect(end.hiddenAfter == 0)
    }

    @Test func scrollOffsetIsClampedToTheBlock() {
        let products = (0..<8).map { Self.product($0) }
        #expect(render(products, width: 80, offset: 100).visibleRange == 5..<8)
        #expect(render(products, width: 80, offset: -4).visibleRange == 0..<3)
    }

    @Test func cardNumbersFollowTheBlockNotTheViewport() {
        let products = (0..<8).map { Self.product($0) }
        let rendering = render(products, width: 80, offset: 4)
        #expect(rendering.lines[1].hasPrefix("┌─ 5 "))
        #expect(Set(rendering.tappableRefs.keys) == [5, 6, 7])
    }

    // covers: PR5
    @Test func onlyCardsInsideTheViewportAreReportedVisible() {
        let products = (0..<8).map { Self.product($0) }
        let rendering = render(products, width: 80, offset: 2)
        #expect(rendering.visibleRange == 2..<5)
        #expect(rendering.visibleRefs == [Self.ref(2), Self.ref(3), Self.ref(4)])
        #expect(render([], width: 80).visibleRefs.isEmpty)
    }

    @Test func builderProtocolReturnsTheSameRendering() {
        let block = AssistantProductBlock(title: "Picks", products: Self.assorted(4))
        let layout = AssistantProductLayout(availableWidth: 60, isInteractionEnabled: true)
        let built = CarouselBuilder().build(block: block, layout: layout) as? CarouselRendering
        #expect(built == CarouselBuilder().render(block: block, layout: layout))
    }
}
