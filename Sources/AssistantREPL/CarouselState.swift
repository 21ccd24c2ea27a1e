import ShoppingAssistant

/// The REPL's product block builder with scroll positions. The engine calls `builder`
/// (PR2, PR3); the REPL scrolls by changing the offset of a block and asking for a redraw.
final class CarouselState: Sendable {
    /// The narrowest layout: a terminal narrower than this gets lines this wide.
    static let minimumWidth = 20

    private struct Width {
        var columns: Int
        /// Set by `:width N`: the layout no longer follows the terminal.
        var isPinned = false
        /// The newest resize applied, so a late notification cannot undo a newer one.
        var lastResize: UInt64 = 0
    }

    private let offsets = Locked<[String: Int]>([:])
    private let currentWidth: Locked<Width>
    let style: TerminalStyle

    init(width: Int, style: TerminalStyle) {
        currentWidth = Locked(Width(columns: max(Self.minimumWidth, width)))
        self.style = style
    }

    /// The width the chat is laid out for: a resize (or a phone's rotation) re-lays the blocks
    /// out (PR3).
    var width: Int { currentWidth.withLock { $0.columns } }

    /// An explicit width (`:width N`): kept until the next one, whatever the terminal does.
    func setWidth(_ width: Int) {
        currentWidth.withLock {
            $0.columns = max(Self.minimumWidth, width)
            $0.isPinned = true
        }
    }

    /// Follows the terminal's new width unless a width was set explicitly or a newer resize
    /// was already applied. True when the width changed, so the chat must be drawn again.
    func terminalResized(_ resize: TerminalResize) -> Bool {
        currentWidth.withLock { width in
            guard !width.isPinned, resize.sequence > width.lastResize else { return false }
            width.lastResize = resize.sequence
            let columns = max(Self.minimumWidth, resize.columns)
            defer { width.columns = columns }
            return columns != width.columns
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

    /// Moves the viewport of `block` by one page of cards.
    func scroll(_ block: AssistantProductBlock, by pages: Int) {
        let perPage = max(1, CarouselBuilder(style: style).render(block: block, layout: layout).visibleRange.count)
        offsets.withLock { offsets in
            let current = offsets[Self.key(block)] ?? 0
            offsets[Self.key(block)] = min(max(0, current + pages * perPage), max(0, block.products.count - 1))
        }
    }

    /// Scroll positions survive redraws and reopenings: keyed by the reply, not the opening.
    static func key(_ block: AssistantProductBlock) -> String {
        guard let first = block.products.first else { return "empty" }
        return "\(first.ref.description.split(separator: ".").dropFirst().joined(separator: "."))"
    }
}
