import ShoppingAssistant

/// A product block builder that records what the engine asked it to build and answers with
/// a height of the test's choosing, so a test reaches the height check (PR3) and sees the
/// layout the engine passed on without a real renderer.
public final class RecordingProductBlockBuilder: AssistantProductBlockBuilder {
    /// What the builder returns: nothing but the height the engine checks.
    public struct Rendering: AssistantProductBlockRendering {
        /// The height the builder was told to report.
        public let height: Int
    }

    /// One build request, as the engine made it.
    public struct Build: Sendable {
        /// The block to render.
        public let block: AssistantProductBlock
        /// The layout it was to be rendered in.
        public let layout: AssistantProductLayout
    }

    private let builds = Locked<[Build]>([])
    private let height: @Sendable (AssistantProductBlock) -> Int

    /// A builder whose rendering is one line per product plus a title line, as a terminal
    /// would draw it.
    public convenience init() {
        self.init { 1 + max(1, $0.products.count) }
    }

    /// A builder that reports `height` for every block (`0` or less: an unusable rendering).
    public convenience init(height: Int) {
        self.init { _ in height }
    }

    /// A builder that computes the height of each block.
    public init(height: @escaping @Sendable (AssistantProductBlock) -> Int) {
        self.height = height
    }

    /// Every build request so far, in order.
    public var received: [Build] { builds.withLock { $0 } }

    /// Records the request and answers with the configured height.
    public func build(block: AssistantProductBlock, layout: AssistantProductLayout)
        -> any AssistantProductBlockRendering
    {
        builds.withLock { $0.append(Build(block: block, layout: layout)) }
        return Rendering(height: height(block))
    }
}
