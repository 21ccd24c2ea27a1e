import Foundation

/// The replies of a dialog read back from the dialog store (D18), sharing the file's bytes:
/// each reply exactly as received, and the little a restore needs without reading them — its
/// ID, which ratings find it by (D11), and which of the file's distinct button objects it
/// carries, which the handler is asked about once each (AC4). A reply is decoded from its
/// bytes, by the same decoder as when it landed, the first time anything reads it, so a long
/// dialog comes back without decoding the replies nobody scrolls back to.
///
/// One table for all of a dialog's replies, not an object each: restoring costs no allocation
/// per reply. The bytes were replies when they were saved, and each reply's checksum, checked
/// when it is first read rather than by the restore, says they are the bytes saved; a reply
/// whose bytes are damaged, or that still does not read back as the file describes it (a file
/// made by hand, a decoder that changed), is shown empty and logged at `.error`: the chat goes
/// on (D20).
final class RestoredReplies: @unchecked Sendable {
    // @unchecked: `replies` is filled while the file is read, before the table is shared, and
    // never changed after; `decoded` is only touched under `lock`.

    /// One reply: where its bytes lie in `file`, their checksum as saved, which member names
    /// its ID, its ID, and its run of `buttonIndices`.
    struct Reply {
        let bytes: Range<Int>
        let checksum: UInt64
        let idKey: ReplyDecoder.IdentifierKey
        let assistantMessageId: String?
        let buttons: Range<Int>
    }

    /// The dialog file the replies were read from.
    let file: Data
    /// Where each distinct button object lies in `file`.
    let buttonObjects: [Range<Int>]
    /// The replies' buttons, as indices into `buttonObjects`: one run a reply.
    // Unchecked: written only by `append`, while the codec alone holds the table.
    @exclusivity(unchecked) private(set) var buttonIndices: [Int] = []
    @exclusivity(unchecked) private(set) var replies: [Reply] = []
    private let logger: AssistantLogger?
    private var decoded: [Int: ReplyContent] = [:]
    /// Guards every table's `decoded`: a reply is decoded once and then only read.
    private static let lock = Locked(0)

    /// A table for the replies of `file`, room made for `capacity` of them.
    init(file: Data, buttonObjects: [Range<Int>], capacity: Int, logger: AssistantLogger?) {
        self.file = file
        self.buttonObjects = buttonObjects
        self.logger = logger
        replies.reserveCapacity(capacity)
    }

    /// Adds a button of the next reply while the file is read, before `append` adds the reply.
    func appendButton(_ object: Int) { buttonIndices.append(object) }

    /// Adds a reply while the file is read, its `buttons` the last ones `appendButton` added;
    /// returns its index.
    func append(
        bytes: Range<Int>, checksum: UInt64, idKey: ReplyDecoder.IdentifierKey, assistantMessageId: String?,
        buttons: Int
    ) -> Int {
        replies.append(
            Reply(
                bytes: bytes, checksum: checksum, idKey: idKey, assistantMessageId: assistantMessageId,
                buttons: (buttonIndices.count - buttons)..<buttonIndices.count))
        return replies.count - 1
    }

    /// Whether reply `index`'s bytes are those saved: its checksum matches them.
    func isIntact(_ index: Int) -> Bool {
        let reply = replies[index]
        return file.withUnsafeBytes { Checksum.xxh64(UnsafeRawBufferPointer(rebasing: $0[reply.bytes])) }
            == reply.checksum
    }

    /// Reply `index`'s bytes as received, unchecked: for saving them again with their checksum.
    func bytes(_ index: Int) -> Data {
        let range = replies[index].bytes
        return file[(file.startIndex + range.lowerBound)..<(file.startIndex + range.upperBound)]
    }

    /// The indices into `buttonObjects` of reply `index`'s buttons, in order.
    func buttons(_ index: Int) -> ArraySlice<Int> { buttonIndices[replies[index].buttons] }

    /// Runs `body` over the distinct button object `object`, as bytes.
    func withButtonObject<Result>(_ object: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        file.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[buttonObjects[object]])) }
    }

    /// Reply `index`, decoded on its first read from any thread (a presenter reads a snapshot's
    /// messages wherever it likes) and kept.
    func content(_ index: Int) -> ReplyContent {
        if let content = Self.lock.withLock({ _ in decoded[index] }) { return content }
        let content = decode(index)
        return Self.lock.withLock { _ in
            if let earlier = decoded[index] { return earlier }
            decoded[index] = content
            return content
        }
    }

    /// Reply `index`'s suggests (C7): those of its decoded content once it was read, until then
    /// read from its bytes alone, so that the chat of a restored dialog shows its last reply's
    /// suggests without decoding the reply (D18). A reply that is damaged or not one, or whose
    /// ID does not read back as stored, offers none, as it is shown empty.
    func suggests(_ index: Int) -> [String] {
        if let content = Self.lock.withLock({ _ in decoded[index] }) { return content.suggests }
        guard isIntact(index) else { return [] }
        let reply = replies[index]
        let found = file.withUnsafeBytes {
            ReplyDecoder.suggests(UnsafeRawBufferPointer(rebasing: $0[reply.bytes]), idKey: reply.idKey)
        }
        guard let found, found.assistantMessageId == reply.assistantMessageId else { return [] }
        return found.suggests
    }

    /// How many replies have been decoded so far: a restore itself decodes none (D18).
    var decodedCount: Int { Self.lock.withLock { _ in decoded.count } }

    private func decode(_ index: Int) -> ReplyContent {
        let reply = replies[index]
        let received = ReceivedReply(bytes: bytes(index), idKey: reply.idKey)
        let intact = isIntact(index)
        let decoded = intact ? ReplyDecoder.decode(received.bytes, idKey: reply.idKey, keepsReceived: false) : nil
        if var content = decoded, content.assistantMessageId == reply.assistantMessageId, sameButtons(content, index) {
            content.received = received
            return content
        }
        let reason =
            !intact
            ? "damaged: its checksum does not match its bytes"
            : decoded == nil ? "not a reply" : "another ID or other buttons"
        logger?.log(
            .error,
            "dialog store: restored reply \(reply.assistantMessageId ?? "without an ID") does not read back as "
                + "stored (\(reason)); it is shown empty")
        guard var empty = ReplyDecoder.decode(Data("{}".utf8), idKey: reply.idKey, keepsReceived: false) else {
            preconditionFailure("an empty object is a reply")
        }
        empty.received = received
        return empty
    }

    /// Whether the decoded reply's buttons are the objects the file says it carries.
    private func sameButtons(_ content: ReplyContent, _ index: Int) -> Bool {
        let objects = buttons(index)
        guard content.buttons.count == objects.count else { return false }
        return zip(content.buttons, objects).allSatisfy { button, object in
            button.withObject { decoded in withButtonObject(object) { stored in decoded.hasSameBytes(as: stored) } }
        }
    }
}
