import Foundation

/// Entry points for `assistant-bench` into the reply decoder, which is internal: the bench
/// compares it with `JSONDecoder` alone and weighs what a stored reply costs in memory.
package enum WireBenchmarks {
    /// Decodes a `/v1/messages` reply body as the engine does; the number of products, or -1
    /// when the envelope is rejected.
    package static func decodeReply(_ body: Data) -> Int {
        guard let reply = ReplyDecoder.decode(body, idKey: .assistantMessageId) else { return -1 }
        return reply.products?.count ?? 0
    }

    /// Decodes every body and keeps the replies, as the dialog of an engine without a dialog
    /// store keeps them: each reply's bytes as received are kept only to be saved (D18).
    package static func storeReplies(_ bodies: [Data]) -> StoredReplies {
        StoredReplies(
            replies: bodies.compactMap { ReplyDecoder.decode($0, idKey: .assistantMessageId, keepsReceived: false) })
    }
}

/// Decoded replies held alive for a memory measurement.
package struct StoredReplies: Sendable {
    let replies: [ReplyContent]

    /// How many bodies decoded into a reply.
    package var count: Int { replies.count }
}
