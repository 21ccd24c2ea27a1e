import ShoppingAssistant

/// The REPL's product block builder with scroll positions. The engine calls `builder`
/// (PR2, PR3); the REPL scrolls by changing the offset of a block and asking for a redraw.
final class CarouselState: Sendable {
    /// The narrowest layout: a terminal narrower than this gets lines this wide.
    static let minimumWidth = 20

    private struct Width {
        var columns: Int
        /// Set by `:width N` (or `--width`): the layout no longer follows the terminal.
        var isPinned: Bool
        /// The terminal's width as last reported, followed again by `:width auto`.
        var terminal: Int
        /// The newest resize applied, so a late notification cannot undo a newer one.
        var lastResize: UInt64 = 0
    }

    private let offsets = Locked<[String: Int]>([:])
    private let currentWidth: Locked<Width>
    let style: TerminalStyle

    /// Lays out for `width`, following the terminal's resizes; or, given the terminal's own
    /// `terminalWidth` (`--width` in a terminal), pinned to `width` until `followTerminal()`.
    init(width: Int, terminalWidth: Int? = nil, style: TerminalStyle) {
        let columns = max(Self.minimumWidth, width)
        currentWidth = Locked(
            Width(
                columns: columns, isPinned: terminalWidth != nil,
                terminal: terminalWidth.map { max(Self.minimumWidth, $0) } ?? columns))
        self.style = style
    }

    /// The width the chat is laid out for: a resize (or a phone's rotation) re-lays the blocks
    /// out (PR3).
    var width: Int { currentWidth.withLock { $0.columns } }

    /// An explicit width (`:width N`): kept until the next one or `:width auto`, whatever the
    /// terminal does.
    func setWidth(_ width: Int) {
        currentWidth.withLock {
            $0.columns = max(Self.minimumWidth, width)
            $0.isPinned = true
        }
    }

    /// `:width auto`: the terminal's width, followed from now on; returns it.
    func followTerminal() -> Int {
        currentWidth.withLock {
            $0.isPinned = false
            $0.columns = $0.terminal
            return $0.columns
        }
    }

    /// Notes the terminal's new width, and follows it unless a width was set explicitly or a
    /// newer resize was already applied. True when the layout width changed, so the chat must
    /// be drawn again.
    func terminalResized(_ resize: TerminalResize) -> Bool {
        currentWidth.withLock { width in
            guard resize.sequence > width.lastResize else { return false }
            width.lastResize = resize.sequence
            width.terminal = max(Self.minimumWidth, resize.columns)
            guard !width.isPinned else { return false }
            defer { width.columns = width.terminal }
            return width.terminal != width.columns
        }
    }

    var layout: AssistantProductLayout { AssistantProductLayout(availableWidth: width, isInteractionEnabled: true) }

    /// A builder that reads the current offsets at build time.
    var builder: Builder { Builder(state: self) }

    struct Builder: AssistantProductBlockBuilder {
        let state: CarouselState

        func build(block: AssistantProductBlock, layout: AssistantProductLayout) -> any AssistantProductBlockRendering {
            let offset = state.offsets.withLock { $0[CarouselState.key(block)] ?? 0 }
            return CarouselBuilder(scrollOffset: offset, style: state.style).render(block: block, layout: layout)
        }
    }

    /// Moves the viewport of `block` by one page of cards; false when it is at that end
    /// already, so nothing would change on screen.
    func scroll(_ block: AssistantProductBlock, by pages: Int) -> Bool {
        let offset = offsets.withLock { $0[Self.key(block)] ?? 0 }
        let shown = CarouselBuilder(scrollOffset: offset, style: style).render(block: block, layout: layout)
            .visibleRange
        let perPage = max(1, shown.count)
        if pages < 0, shown.lowerBound == 0 { return false }
        if pages > 0, shown.upperBound >= block.products.count { return false }
        offsets.withLock { offsets in
            offsets[Self.key(block)] = min(max(0, shown.lowerBound + pages * perPage), max(0, block.products.count - 1))
        }
        return true
    }

    /// Scroll positions survive redraws and reopenings: keyed by the reply, not the opening.
    static func key(_ block: AssistantProductBlock) -> String {
        guard let first = block.products.first else { return "empty" }
        return "\(first.ref.description.split(separator: ".").dropFirst().joined(separator: "."))"
    }
}
