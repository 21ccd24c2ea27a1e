import Foundation
import Testing

@testable import ShoppingAssistant

/// The batching window of content calls as a value (B16): which calls of an instant share a
/// `/choose`, how identical ones share an item, how one selector with two options splits into
/// waves, and that the order in which the calls came changes nothing that is sent.
@Suite struct ContentBatcherTests {
    private typealias F = MachineFixtures
    private typealias Call = ContentBatcher.Call

    private static let skusOnly = GravityContentSettings(skusOnly: true)

    private static func call(
        _ number: UInt64, _ selector: String, settings: GravityContentSettings = GravityContentSettings(),
        envelope: GravityClient.Envelope = F.envelope(), epoch: UInt64 = 1
    ) -> Call {
        Call(
            id: .host(F.call(number)), selector: selector, settings: settings, envelope: envelope,
            identityEpoch: epoch)
    }

    /// What the departures ask for, without the IDs of merged requests: the selectors and
    /// options of each request, in order.
    private static func asked(_ departures: [ContentBatcher.Departure]) -> [[String]] {
        departures.map { departure in
            switch departure.call {
            case .choose(let selector, let settings, _): return ["\(selector)\(settings.skusOnly ? "+skus" : "")"]
            case .chooseTogether(let items, _):
                return items.map { "\($0.selector)\($0.options.skusOnly ? "+skus" : "")" }
            default: return []
            }
        }
    }

    private static func ended(_ calls: [Call]) -> (ContentBatcher, [ContentBatcher.Departure]) {
        var batcher = ContentBatcher()
        for call in calls { _ = batcher.called(call) }
        let departures = batcher.windowEnded()
        return (batcher, departures)
    }

    // covers: B16
    @Test func aCallAloneLeavesAsARequestOfItsOwnWhenItsInstantEnds() {
        var batcher = ContentBatcher()
        let opened = batcher.called(Self.call(1, "entry"))
        #expect(opened, "the first call of an instant opens the window")
        #expect(batcher.isWindowOpen)
        let departures = batcher.windowEnded()
        #expect(
            departures == [
                ContentBatcher.Departure(
                    id: .host(F.call(1)),
                    call: .choose(selector: "entry", settings: GravityContentSettings(), envelope: F.envelope()))
            ])
        #expect(!batcher.isWindowOpen)
        #expect(batcher.merged.isEmpty, "a request of its own is answered as before")
    }

    // covers: B16
    @Test func callsOfOneInstantLeaveAsOneRequestWithAnItemPerSelectorEachWithItsOwnOption() {
        var batcher = ContentBatcher()
        let first = batcher.called(Self.call(1, "recommendations", settings: Self.skusOnly))
        let second = batcher.called(Self.call(2, "entry"))
        #expect(first && !second, "the second call finds the window open")
        let departures = batcher.windowEnded()
        #expect(
            departures == [
                ContentBatcher.Departure(
                    id: .contents(1),
                    call: .chooseTogether(
                        [
                            GravitySelectorRequest(selector: "entry", options: GravityContentSettings()),
                            GravitySelectorRequest(selector: "recommendations", options: Self.skusOnly),
                        ], envelope: F.envelope()))
            ])
        let answered = batcher.answered(1)
        let again = batcher.answered(1)
        #expect(answered.map(\.id) == [.host(F.call(2)), .host(F.call(1))], "in the order of the items")
        #expect(again.isEmpty, "answered once")
    }

    // Mirrors flutter choose_wire_test "identical concurrent calls are deduplicated into one POST
    // and share one response".
    // covers: B16
    @Test func identicalCallsShareOneItemAndOneAnswer() {
        var (batcher, departures) = Self.ended([Self.call(1, "dup"), Self.call(2, "dup")])
        #expect(Self.asked(departures) == [["dup"]])
        #expect(departures.first?.id == .contents(1))
        let answered = batcher.answered(1)
        #expect(answered.map(\.id) == [.host(F.call(1)), .host(F.call(2))])
    }

    // Mirrors flutter choose_wire_test "same selector with different contentSettings is NOT
    // deduplicated and NOT merged" and "colliding identifiers still merge with other selectors
    // inside each wave": the answer names only the selector, so one selector's two options
    // cannot share a request; each wave still merges the other selectors.
    // covers: B16
    @Test func oneSelectorWithTwoOptionsGoesInTwoRequestsEachMergedWithTheOtherSelectors() {
        let (_, departures) = Self.ended([
            Self.call(1, "wave-a"), Self.call(2, "wave-a", settings: Self.skusOnly), Self.call(3, "wave-b"),
            Self.call(4, "wave-b", settings: Self.skusOnly),
        ])
        #expect(Self.asked(departures) == [["wave-a", "wave-b"], ["wave-a+skus", "wave-b+skus"]])
        let (_, alone) = Self.ended([Self.call(1, "wave"), Self.call(2, "wave", settings: Self.skusOnly)])
        #expect(Self.asked(alone) == [["wave"], ["wave+skus"]])
        #expect(alone.map(\.id) == [.host(F.call(1)), .host(F.call(2))], "each a request of its own")
    }

    // Mirrors flutter choose_batch_keys_test: the group key is the user, ctx and options; ours
    // adds the identity (B16: never across an identity change) and the push permission, which
    // travels in `device` and is the one of the moment each call was made.
    // covers: B16, B11
    @Test func callsOfAnotherUserPageOptionsPermissionOrIdentityNeverShareARequest() {
        let base = F.envelope()
        var otherOptions = base
        otherOptions.options = GravityOptions(isReturnCounter: true)
        var otherPermission = base
        otherPermission.permission = .granted
        let variants = [
            Self.call(2, "b", envelope: F.envelope(user: GravityUser(custom: "alice", ses: "ses-a"))),
            Self.call(2, "b", envelope: F.envelope(F.otherPage)),
            Self.call(2, "b", envelope: otherOptions),
            Self.call(2, "b", envelope: otherPermission),
            Self.call(2, "b", epoch: 2),
        ]
        for variant in variants {
            let (_, departures) = Self.ended([Self.call(1, "a"), variant])
            #expect(departures.count == 2, "\(variant)")
            #expect(departures.map(\.id) == [.host(F.call(1)), .host(F.call(2))])
        }
    }

    // Mirrors flutter choose_batch_keys_test "is stable across attribute insertion order".
    // covers: B16
    @Test func theSamePageWithItsAttributesInAnotherOrderIsTheSameEnvelope() {
        var first = F.page
        first.attributes = ["a": "1", "b": "2"]
        var second = F.page
        second.attributes = ["b": "2", "a": "1"]
        let (_, departures) = Self.ended([
            Self.call(1, "s", envelope: F.envelope(first)), Self.call(2, "s", envelope: F.envelope(second)),
        ])
        #expect(Self.asked(departures) == [["s"]])
    }

    // covers: B16
    @Test func aCallMadeAfterItsInstantEndedOpensTheNextWindowAndNeverJoinsARequestOnItsWay() {
        var batcher = ContentBatcher()
        _ = batcher.called(Self.call(1, "a"))
        _ = batcher.called(Self.call(2, "b"))
        _ = batcher.windowEnded()
        let opened = batcher.called(Self.call(3, "a"))
        #expect(opened, "a new window")
        let departures = batcher.windowEnded()
        #expect(departures.map(\.id) == [.host(F.call(3))])
        #expect(batcher.merged[1]?.map(\.id) == [.host(F.call(1)), .host(F.call(2))], "request 1 unchanged")
    }

    // covers: B16
    @Test func aWithdrawnCallNeverLeavesAndTheLastCallOfAMergedRequestLetsItGo() {
        var batcher = ContentBatcher()
        _ = batcher.called(Self.call(1, "a"))
        _ = batcher.called(Self.call(2, "b"))
        _ = batcher.called(Self.call(3, "c"))
        let fromWindow = batcher.withdrawn(.host(F.call(3)))
        #expect(fromWindow == .fromWindow)
        let departures = batcher.windowEnded()
        #expect(Self.asked(departures) == [["a", "b"]])
        let first = batcher.withdrawn(.host(F.call(1)))
        let last = batcher.withdrawn(.host(F.call(2)))
        #expect(first == .fromMerged(1, wasLast: false))
        #expect(last == .fromMerged(1, wasLast: true))
        #expect(batcher.merged.isEmpty)
        let answered = batcher.answered(1)
        let unknown = batcher.withdrawn(.host(F.call(9)))
        #expect(answered.isEmpty)
        #expect(unknown == .notHere)
    }

    // The property that keeps replays free of scheduling: whatever order the calls of an
    // instant reach the engine in, the same requests leave with the same items; every call is
    // answered by exactly one of them, with the calls of its own envelope, one item per
    // selector. Exhaustive over every order of a small instant, then over random instants.
    // covers: B16
    @Test func theOrderInWhichTheCallsOfAnInstantCameChangesNothingThatIsSent() {
        let home = F.envelope(F.otherPage)
        let calls = [
            Self.call(1, "entry"), Self.call(2, "widget"), Self.call(3, "entry"),
            Self.call(4, "widget", settings: Self.skusOnly), Self.call(5, "entry", envelope: home),
        ]
        let expected = Self.wire(Self.ended(calls).1)
        for order in Self.permutations(calls) {
            #expect(Self.wire(Self.ended(order).1) == expected, "\(order.map(\.id))")
        }

        var random = SplitMix64(seed: 16)
        let selectors = ["a", "b", "c"]
        let envelopes = [F.envelope(), home]
        for _ in 0..<500 {
            let count = Int(random.next() % 7) + 1
            let instant = (0..<count).map { index in
                Self.call(
                    UInt64(index + 1), selectors[Int(random.next() % 3)],
                    settings: random.next() % 4 == 0 ? Self.skusOnly : GravityContentSettings(),
                    envelope: envelopes[Int(random.next() % 2)])
            }
            var shuffled = instant
            for index in shuffled.indices.reversed() {
                shuffled.swapAt(index, Int(random.next() % UInt64(index + 1)))
            }
            let (batcher, departures) = Self.ended(instant)
            #expect(Self.wire(Self.ended(shuffled).1) == Self.wire(departures))
            Self.checkEveryCallIsAnsweredOnce(instant, batcher, departures)
        }
    }

    /// The requests as the wire sees them: what each asks, of which envelope, in order.
    private static func wire(_ departures: [ContentBatcher.Departure]) -> [String] {
        departures.map { departure in
            switch departure.call {
            case .choose(let selector, let settings, let envelope):
                return "\(envelope.context.location) \(selector)/\(settings.skusOnly)"
            case .chooseTogether(let items, let envelope):
                return "\(envelope.context.location) "
                    + items.map { "\($0.selector)/\($0.options.skusOnly)" }.joined(separator: ",")
            default: return "?"
            }
        }
    }

    private static func checkEveryCallIsAnsweredOnce(
        _ calls: [Call], _ batcher: ContentBatcher, _ departures: [ContentBatcher.Departure],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var answeredBy: [RequestID: Int] = [:]
        for departure in departures {
            if case .contents(let merged) = departure.id {
                guard case .chooseTogether(let items, let envelope) = departure.call,
                    let members = batcher.merged[merged]
                else {
                    Issue.record("merged request \(merged) unknown", sourceLocation: sourceLocation)
                    continue
                }
                #expect(Set(items.map(\.selector)).count == items.count, sourceLocation: sourceLocation)
                for member in members {
                    answeredBy[member.id, default: 0] += 1
                    #expect(member.envelope == envelope, sourceLocation: sourceLocation)
                    #expect(
                        items.contains { $0.selector == member.selector && $0.options == member.settings },
                        sourceLocation: sourceLocation)
                }
            } else {
                answeredBy[departure.id, default: 0] += 1
            }
        }
        #expect(
            answeredBy == Dictionary(uniqueKeysWithValues: calls.map { ($0.id, 1) }), sourceLocation: sourceLocation)
    }

    private static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index -> [[T]] in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }
}
