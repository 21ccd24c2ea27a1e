import AssistantREPL
import Foundation
import ShoppingAssistant

/// Figure 8: the REPL drawing a carousel in which one product's name is 10,000 characters
/// without a space, against the same carousel with an ordinary name.
///
/// The block comes from a real reply through the engine; each iteration asks the engine to
/// render it with the REPL's `CarouselBuilder` (as a redraw after `:right` does) and prints
/// every line through a `REPLOutput` fitted to the width, at 20, 80 and 200 columns. A draw
/// with such a name used to take 18–26 s (the layout was quadratic in the length of a word);
/// the goal is an absolute 20 ms for the slowest width, the ordinary name is the context.
enum CarouselDrawingBench {
    static let goalSeconds = 0.020
    static let nameLength = 10_000
    static let widths = [20, 80, 200]

    static func run(_ options: BenchOptions) async -> Verdict {
        let warmup = options.size(quick: 2, full: 5)
        let iterations = options.size(quick: 10, full: 60)
        let longName = String(
            String(repeating: "ТермокружкаHot&Cold450мл", count: nameLength / 24 + 1).prefix(nameLength))
        Report.heading(8, "Drawing a carousel with a \(Format.count(nameLength))-character name, vs an ordinary name")
        Report.line(
            "inputs: 6-product reply, product 1 named \(Format.count(longName.count)) characters without spaces; "
                + "widths \(widths.map(String.init).joined(separator: ", ")); \(iterations) draws per width after "
                + "\(warmup) warm-up; the engine renders with CarouselBuilder, REPLOutput fits each line")

        let long = await block(named: longName)
        let ordinary = await block(named: "Термокружка Hot&Cold 1, 450 мл")
        var worstLong = 0.0
        var worstRatio = 0.0
        for width in widths {
            let engine = long.engine
            let layout = AssistantProductLayout(availableWidth: width, isInteractionEnabled: true)
            let output = REPLOutput(style: .plain) { line in Sink.consume(line.utf8.count) }
            output.fitLines { width }
            var longTimes = Samples()
            var ordinaryTimes = Samples()
            var lines = 0
            for iteration in 0..<(warmup + iterations) {
                let drawnLong = await Timing.measure { lines = await draw(long.block, on: engine, layout, output) }
                let drawnOrdinary = await Timing.measure { _ = await draw(ordinary.block, on: engine, layout, output) }
                guard iteration >= warmup else { continue }
                longTimes.append(drawnLong)
                ordinaryTimes.append(drawnOrdinary)
            }
            let ratio = longTimes.median / ordinaryTimes.median
            worstLong = max(worstLong, longTimes.median)
            worstRatio = max(worstRatio, ratio)
            Report.line("width \(width) (\(lines) lines): long name \(longTimes.summary)")
            Report.line(
                "          ordinary name \(ordinaryTimes.summary); ratio \(Format.ratio(ratio))")
        }
        Report.line("slowest width: \(Format.seconds(worstLong)) per draw; largest ratio \(Format.ratio(worstRatio))")
        let verdict = Verdict(
            figure: 8, name: "carousel with a 10,000-character name", value: Format.seconds(worstLong),
            goal: "≤ \(Format.seconds(goalSeconds))", met: worstLong <= goalSeconds)
        Report.verdict(verdict)
        return verdict
    }

    /// One draw: the engine renders the block with the REPL's builder, the output prints it.
    private static func draw(
        _ block: AssistantProductBlock, on engine: AssistantEngine, _ layout: AssistantProductLayout,
        _ output: REPLOutput
    ) async -> Int {
        guard let rendering = await engine.renderProductBlock(block, layout: layout) as? CarouselRendering else {
            fatalError("the engine did not render with CarouselBuilder")
        }
        for line in rendering.lines { output.line(line) }
        return rendering.lines.count
    }

    /// The product block of a real reply whose first product is called `name`, and the
    /// engine it came through (with `CarouselBuilder` registered).
    private static func block(named name: String) async -> (block: AssistantProductBlock, engine: AssistantEngine) {
        let presenter = BenchPresenter()
        let engine = await BenchEngine.openChat(
            transport: InstantTransport(replyBody: reply(named: name)), presenter: presenter)
        await engine.setAssistantProductBlockBuilder(CarouselBuilder())
        presenter.expectReply(messages: 2)
        await BenchEngine.send(engine, "Подарок для мамы")
        _ = await presenter.replyObserved()
        guard let block = presenter.latest?.messages.last?.productBlock, block.products.first?.name == name else {
            fatalError("the reply has no product named as sent")
        }
        return (block, engine)
    }

    private static func reply(named name: String) -> Data {
        guard var reply = try? JSONSerialization.jsonObject(with: BenchFixtures.reply(products: 6)) as? [String: Any],
            var products = reply["products"] as? [String: Any], var items = products["items"] as? [[String: Any]],
            !items.isEmpty
        else { fatalError("the reply fixture has no products") }
        items[0]["name"] = name
        products["items"] = items
        reply["products"] = products
        guard let data = try? JSONSerialization.data(withJSONObject: reply, options: [.sortedKeys]) else {
            fatalError("the reply does not encode")
        }
        return data
    }
}
