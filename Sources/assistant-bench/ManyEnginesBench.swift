import Foundation
import ShoppingAssistant

/// Figure 5: what an idle engine costs in memory, with 10,000 alive in one process. Each is
/// created as a host creates it (its own identity store, builder and handler registered)
/// and does nothing; they share one transport, as engines of one app share a session. The
/// baseline is 10,000 actors holding one counter: the floor any actor-based design pays.
enum ManyEnginesBench {
    static func run(_ options: BenchOptions) async -> Verdict {
        let count = options.size(quick: 1_000, full: 10_000)
        Report.heading(5, "Many engines: memory per idle AssistantEngine")
        Report.line("inputs: \(Format.count(count)) engines alive at once, shared instant transport")

        let transport = InstantTransport()
        // Warm-up: lazily initialised globals and metadata are not per-engine costs.
        _ = await makeEngines(2, transport: transport)

        let before = Memory.sample()
        var engines: [AssistantEngine] = []
        let creation = await Timing.measure { engines = await makeEngines(count, transport: transport) }
        let after = Memory.sample()
        let perEngine = Memory.perItem(from: before, to: after, count: count)

        let probesBefore = Memory.sample()
        let probes = (0..<count).map { _ in IdleProbe() }
        let probesAfter = Memory.sample()
        let perProbe = Memory.perItem(from: probesBefore, to: probesAfter, count: count)

        let states = await engines.prefix(3).asyncMap { await $0.dialogState }
        guard states.allSatisfy({ $0 == .empty }) else { fatalError("an idle engine is not idle") }

        let heapEngine = perEngine.heap ?? perEngine.resident
        let heapProbe = perProbe.heap ?? perProbe.resident
        Report.line(
            "per engine: resident \(Format.bytes(perEngine.resident)), malloc in use "
                + "\(perEngine.heap.map { Format.bytes($0) } ?? "n/a"); created and registered in "
                + "\(Format.seconds(creation.seconds / Double(count))) each")
        if let first = engines.first, let size = Memory.blockSize(of: first) {
            Report.line(
                "  of which the actor object itself: \(Format.bytes(Double(size))); the rest is what it owns "
                    + "(logger, clients, tracker, identity store, registered host objects)")
        }
        Report.line(
            "per minimal actor (baseline): resident \(Format.bytes(perProbe.resident)), malloc in use "
                + "\(perProbe.heap.map { Format.bytes($0) } ?? "n/a")")
        Report.line(
            "ratio engine / minimal actor: \(Format.ratio(heapEngine / heapProbe)); "
                + "\(Format.count(count)) engines: \(Format.bytes(heapEngine * Double(count)))")
        withExtendedLifetime((engines, probes)) {}
        let verdict = Verdict(
            figure: 5, name: "memory per idle engine", value: "\(Format.bytes(heapEngine)) per engine", goal: nil,
            met: nil)
        Report.verdict(verdict)
        return verdict
    }

    private static func makeEngines(_ count: Int, transport: InstantTransport) async -> [AssistantEngine] {
        var engines: [AssistantEngine] = []
        engines.reserveCapacity(count)
        for _ in 0..<count { engines.append(await BenchEngine.make(transport: transport)) }
        return engines
    }
}

/// An actor holding one counter.
private actor IdleProbe {
    var value = 0
}

extension Sequence {
    /// `map` with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async -> T) async -> [T] {
        var result: [T] = []
        for element in self { result.append(await transform(element)) }
        return result
    }
}
