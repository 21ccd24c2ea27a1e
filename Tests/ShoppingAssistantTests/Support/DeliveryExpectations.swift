import ShoppingAssistant
import Testing

/// What the fault matrices expect of a call once the queue's pauses have passed: a kept call
/// was delivered once more, from the queue (deferred, without a failure); one that was not kept
/// has its first record only (DL2, DL3).
func expectDeliveredFromTheQueueOnce(
    _ records: [TrackingRecord], kept: Bool, _ context: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(
        records.count == (kept ? 2 : 1), "\(context): kept for the queue, never more: \(records)",
        sourceLocation: sourceLocation)
    guard kept else { return }
    #expect(records.last?.deferred == true, "\(context)", sourceLocation: sourceLocation)
    #expect(records.last?.failure == nil, "\(context)", sourceLocation: sourceLocation)
}
