import DemoStore

extension CommandCompletion {
    /// This table with the demo store's catalogue: its SKUs after `:product`, `:cart` (each of
    /// the cart screen's SKUs), `:cart add`, `:cart remove` and `:wish`, its categories after
    /// `:category`, its widget's selector after `:widget`. For a session on the demo store,
    /// where those are the only SKUs, categories and widgets that exist.
    package func addingDemoCatalogue() -> CommandCompletion {
        let skus = DemoCatalog.products.compactMap(\.sku)
        let categories = DemoProduct.Category.allCases.map(\.rawValue)
        return adding(arguments: skus, to: ":product")
            .adding(arguments: skus, to: ":cart")
            .adding(arguments: skus, to: ":cart", at: 1, repeats: true)
            .adding(arguments: skus, to: ":cart", after: ["add", "remove"])
            .adding(arguments: skus, to: ":wish")
            .adding(arguments: categories, to: ":category")
            .adding(arguments: [DemoStore.Configuration().recommendationSelector], to: ":widget")
    }
}
