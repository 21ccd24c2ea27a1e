import DemoStore

extension CommandCompletion {
    /// This table with the demo store's catalogue: its SKUs after `:product` and `:cart` (each
    /// of the cart's SKUs), its categories after `:category`. For a session on the demo store,
    /// where those are the only SKUs and categories that exist.
    package func addingDemoCatalogue() -> CommandCompletion {
        let skus = DemoCatalog.products.compactMap(\.sku)
        let categories = DemoProduct.Category.allCases.map(\.rawValue)
        return adding(arguments: skus, to: ":product")
            .adding(arguments: skus, to: ":cart", repeats: true)
            .adding(arguments: categories, to: ":category")
    }
}
