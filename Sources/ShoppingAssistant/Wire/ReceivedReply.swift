import Foundation

/// A reply's bytes exactly as the service sent them, kept beside the decoded reply so that the
/// dialog store can keep each reply as received (D18) and a restore decodes it the same way
/// the first run did. Held behind one reference: a reply is copied with its dialog often.
final class ReceivedReply: Sendable {
    /// The reply object's JSON, as received.
    let bytes: Data
    /// Which member names the reply's ID (`/v1/messages` or history).
    let idKey: ReplyDecoder.IdentifierKey

    init(bytes: Data, idKey: ReplyDecoder.IdentifierKey) {
        self.bytes = bytes
        self.idKey = idKey
    }
}
