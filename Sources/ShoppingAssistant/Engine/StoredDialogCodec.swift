import Foundation

/// Turns a `StoredDialog` into the bytes a `DialogStore` keeps, and back (D18).
///
/// The layout is binary, so that each reply is kept exactly as received, its bytes copied in
/// and out as they are, and a restore reads a long dialog without decoding its replies
/// (`RestoredReplies` decodes each when it is first read):
///
/// - a header: `SADIALOG`, the layout's version (`UInt16`), the XXH64 of the index (`UInt64`)
///   and the index's length (`UInt32`);
/// - the index: the dialog (identity, tenant, assistant (selector, campaign, configuration),
///   the page as the host gave it and as it was sent (every field of each), the thread, and
///   when it was last active), the distinct button objects of all its replies, each once, and
///   each turn: its message (ID, text, attempts, state and error) and its reply, if one landed:
///   which member names its ID, its rating, its ID, its buttons (indices into the objects), and
///   the length and XXH64 of its bytes;
/// - the replies' bytes as received, one after another in the order of their turns.
///
/// Numbers are little-endian, texts and byte strings follow their length (`UInt32`). What the
/// turn says about its reply (its ID, its buttons) is what this build's decoder found in its
/// bytes; a build whose decoder finds otherwise must write another version.
///
/// Bytes that are not such a dialog — foreign, of another version, truncated, a damaged index
/// (its checksum), inconsistent, a reply or button that is not a JSON object — are refused with
/// a reason (`Failure`), never a crash (a message ID held twice is the restore's to refuse, as
/// its lookups are built). A reply's own checksum is checked when the reply is first read
/// (`RestoredReplies`), so that a restore reads the index and not the replies' bytes: a damaged
/// reply is then shown empty and logged, and the rest of the dialog is not lost with it.
/// Reading costs time linear in the dialog's messages and in the index's bytes. Version 2,
/// whose checksum covered the whole file, and the JSON layout (version 1) of development builds
/// were never released and are refused as of another version and as foreign.
enum StoredDialogCodec {
    /// Why stored bytes are not a dialog, for the `.error` log line (D20).
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The first bytes of every dialog file.
    static let magic: [UInt8] = Array("SADIALOG".utf8)
    /// The layout written now; another is not read.
    static let version: UInt16 = 3
    /// The signature, the version, the index's checksum and its length.
    static let headerBytes = magic.count + 2 + 8 + 4

    private enum State: UInt8 {
        case sent = 0
        case sending = 1
        case failed = 2
    }

    private enum ReplyIdKey: UInt8 {
        case assistantMessageId = 0
        case id = 1
    }

    // MARK: - Writing

    static func encode(_ dialog: StoredDialog) -> Data {
        let context = dialog.context
        let prepared = context.start.prepared
        // The replies' bytes, and their buttons' places among the distinct objects: one walk.
        var buttons = ButtonTable()
        var received: [Received?] = []
        var replyButtons: [Range<Int>] = []
        var buttonIndices: [Int] = []
        received.reserveCapacity(dialog.turns.count)
        replyButtons.reserveCapacity(dialog.turns.count)
        var room = 4096  // everything at once: the replies' bytes and a generous bound on the rest
        dialog.turns.forEachElement { _, turn in
            let start = buttonIndices.count
            var bytes: Received?
            if let reply = turn.reply, let kept = reply.received {
                reply.forEachButtonObject { buttonIndices.append(buttons.index(of: $0)) }
                room += 64 + kept.bytes.count + 4 * (buttonIndices.count - start)
                // A restored reply keeps the checksum it was read with, so that damage it came
                // back with is still found when it is read after this save.
                let checksum = reply.storedChecksum ?? kept.bytes.withUnsafeBytes { Checksum.xxh64($0) }
                bytes = Received(bytes: kept.bytes, idKey: kept.idKey, checksum: checksum)
            }
            received.append(bytes)
            replyButtons.append(start..<buttonIndices.count)
            room += 64 + turn.user.messageId.utf8.count + turn.user.text.utf8.count
        }
        var file = ByteWriter()
        file.bytes.reserveCapacity(room + buttons.objects.bytes.count)
        file.bytes += magic
        file.uint16(version)
        file.uint64(0)  // the index's checksum and length, once it is written
        file.uint32(0)
        file.string(context.start.uid)
        file.string(context.start.tenant)
        file.string(prepared.selector)
        file.optionalString(prepared.campaignId)
        file.byte(prepared.configuration.enabled ? 1 : 0)
        file.string(prepared.configuration.title)
        file.optionalString(prepared.configuration.subtitle)
        file.uint32(UInt32(prepared.configuration.suggests.count))
        for suggest in prepared.configuration.suggests { file.string(suggest) }
        file.page(prepared.pageContext)
        file.page(context.start.page)
        file.string(context.threadId)
        file.uint64(dialog.lastActive.timeIntervalSince1970.bitPattern)
        file.uint32(UInt32(buttons.count))
        file.bytes += buttons.objects.bytes
        file.uint32(UInt32(dialog.turns.count))
        dialog.turns.forEachElement { index, turn in
            write(turn, received: received[index], buttons: buttonIndices[replyButtons[index]], to: &file)
        }
        let indexLength = file.bytes.count - headerBytes
        let checksum = file.bytes.withUnsafeBytes {
            Checksum.xxh64(UnsafeRawBufferPointer(rebasing: $0[headerBytes...]))
        }
        withUnsafeBytes(of: checksum.littleEndian) {
            file.bytes.replaceSubrange((headerBytes - 12)..<(headerBytes - 4), with: $0)
        }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: indexLength).littleEndian) {
            file.bytes.replaceSubrange((headerBytes - 4)..<headerBytes, with: $0)
        }
        for case let reply? in received { reply.bytes.withUnsafeBytes { file.bytes.append(contentsOf: $0) } }
        return Data(file.bytes)
    }

    /// A reply's bytes as the file keeps them.
    private struct Received {
        let bytes: Data
        let idKey: ReplyDecoder.IdentifierKey
        let checksum: UInt64
    }

    private static func write(
        _ turn: DialogTurn, received: Received?, buttons: ArraySlice<Int>, to file: inout ByteWriter
    ) {
        file.string(turn.user.messageId)
        file.string(turn.user.text)
        file.uint32(UInt32(clamping: turn.user.attempts))
        switch turn.user.status {
        case .sent: file.byte(State.sent.rawValue)
        case .sending: file.byte(State.sending.rawValue)
        case .failed(let error, let retryable):
            file.byte(State.failed.rawValue)
            file.string(error.code.rawValue)
            file.string(error.message)
            file.byte(retryable ? 1 : 0)
        }
        // A reply without its bytes (an engine without a store made it) cannot be kept.
        guard let reply = turn.reply, let received else { return file.byte(0) }
        file.byte(1)
        file.byte(received.idKey == .id ? ReplyIdKey.id.rawValue : ReplyIdKey.assistantMessageId.rawValue)
        file.optionalString(reply.rating?.rawValue)
        file.optionalString(reply.assistantMessageId)
        file.uint32(UInt32(buttons.count))
        for index in buttons { file.uint32(UInt32(index)) }
        file.uint32(UInt32(truncatingIfNeeded: received.bytes.count))
        file.uint64(received.checksum)
    }

    /// The distinct button objects of a dialog's replies, each written once.
    private struct ButtonTable {
        /// The objects, each after its length, in the order first met.
        private(set) var objects = ByteWriter()
        private(set) var count = 0
        /// Where each object lies in `objects`, by its checksum (objects that share one are
        /// told apart by their bytes).
        private var known: [UInt64: [(range: Range<Int>, index: Int)]] = [:]

        mutating func index(of object: UnsafeRawBufferPointer) -> Int {
            let digest = Checksum.xxh64(object)
            let found = known[digest]?.first { entry in
                objects.bytes.withUnsafeBytes {
                    UnsafeRawBufferPointer(rebasing: $0[entry.range]).hasSameBytes(as: object)
                }
            }
            if let found { return found.index }
            objects.uint32(UInt32(object.count))
            let start = objects.bytes.count
            objects.bytes.append(contentsOf: object)
            known[digest, default: []].append((start..<objects.bytes.count, count))
            count += 1
            return count - 1
        }
    }

    // MARK: - Reading

    /// The dialog in `data`; its replies share `data`'s bytes and are decoded when first read,
    /// a failure then logged to `logger`.
    static func decode(_ data: Data, logger: AssistantLogger? = nil) throws(Failure) -> StoredDialog {
        guard data.count >= headerBytes else {
            throw Failure(description: data.isEmpty ? "is empty" : "is truncated (\(data.count) bytes)")
        }
        guard data.prefix(magic.count).elementsEqual(magic) else {
            throw Failure(description: "is not a dialog file (\(data.count) bytes without its signature)")
        }
        do throws(ByteReader.Failure) {
            return try ByteReader.read(data) { header throws(ByteReader.Failure) in
                _ = try header.skip(magic.count)
                let found = try header.uint16()
                guard found == version else {
                    throw ByteReader.Failure(reason: "is of version \(found), which this build does not read")
                }
                let checksum = try header.uint64()
                let indexLength = Int(try header.uint32())
                guard indexLength <= data.count - headerBytes else {
                    throw ByteReader.Failure(reason: "is truncated: its index runs past its end")
                }
                let index = headerBytes..<(headerBytes + indexLength)
                guard Checksum.xxh64(header.bytes(index)) == checksum else {
                    throw ByteReader.Failure(reason: "is damaged: its index's checksum does not match its bytes")
                }
                let file = header.bytes(0..<data.count)
                // The index read on its own, so that no field of it can reach into the replies.
                return try ByteReader.read(header.bytes(0..<index.upperBound)) { reader throws(ByteReader.Failure) in
                    _ = try reader.skip(headerBytes)
                    return try dialog(&reader, replies: file, from: index.upperBound, in: data, logger: logger)
                }
            }
        } catch {
            throw Failure(description: error.reason)
        }
    }

    private static func dialog(
        _ reader: inout ByteReader, replies file: UnsafeRawBufferPointer, from repliesStart: Int, in data: Data,
        logger: AssistantLogger?
    ) throws(ByteReader.Failure) -> StoredDialog {
        let uid = try reader.string()
        let tenant = try reader.string()
        let selector = try reader.string()
        let campaignId = try reader.optionalString()
        let enabled = try flag(&reader)
        let title = try reader.string()
        let subtitle = try reader.optionalString()
        let suggestCount = try reader.count(minimumBytesEach: 4)
        var suggests: [String] = []
        suggests.reserveCapacity(suggestCount)
        for _ in 0..<suggestCount { suggests.append(try reader.string()) }
        let page = try self.page(&reader)
        let sentPage = try self.page(&reader)
        let threadId = try reader.string()
        let lastActive = Double(bitPattern: try reader.uint64())
        guard !uid.isEmpty, !threadId.isEmpty else { throw ByteReader.Failure(reason: "has no identity or thread") }
        guard lastActive.isFinite else { throw ByteReader.Failure(reason: "has no time it was last active") }
        let prepared = PreparedAssistant(
            id: PreparationID(value: 0), selector: selector, pageContext: page,
            configuration: AssistantConfiguration(
                enabled: enabled, title: title, subtitle: subtitle, suggests: suggests),
            campaignId: campaignId)
        let context = DialogContext(
            threadId: threadId, start: DialogStart(prepared: prepared, uid: uid, tenant: tenant, page: sentPage))

        let objectCount = try reader.count(minimumBytesEach: 4)
        var objects: [Range<Int>] = []
        objects.reserveCapacity(objectCount)
        for _ in 0..<objectCount {
            let object = try reader.lengthPrefixed()
            guard isObject(reader.bytes(object)[...]) else {
                throw ByteReader.Failure(reason: "has a button that is not one")
            }
            objects.append(object)
        }
        // A turn takes at least its two lengths, its attempts, its state and its reply flag.
        let count = try reader.count(minimumBytesEach: 14)
        let replies = RestoredReplies(file: data, buttonObjects: objects, capacity: count, logger: logger)
        var replyBytes = ReplyBytes(file: file, next: repliesStart)
        var sending = false
        let turns = try ChunkedVector(count: count) { index throws(ByteReader.Failure) in
            let messageId = try reader.string()
            let text = try reader.string()
            let attempts = Int(try reader.uint32())
            let status = try self.status(&reader, index: index)
            if case .sending = status {
                guard !sending else { throw ByteReader.Failure(reason: "has two messages sending (D2)") }
                sending = true
            }
            let reply: ReplyMessage?
            switch try reader.byte() {
            case 0: reply = nil
            case 1:
                reply = try self.reply(&reader, index: index, bytes: &replyBytes, into: replies, objects: objectCount)
            default: throw ByteReader.Failure(reason: "has a malformed reply (\(index))")
            }
            return DialogTurn(
                user: UserMessage(
                    messageId: messageId, text: text, status: status, attempts: max(attempts, 1), request: nil),
                reply: reply)
        }
        guard reader.isAtEnd else { throw ByteReader.Failure(reason: "has bytes after its last message") }
        guard replyBytes.next == file.count else { throw ByteReader.Failure(reason: "has bytes after its last reply") }
        return StoredDialog(context: context, turns: turns, lastActive: Date(timeIntervalSince1970: lastActive))
    }

    private static func flag(_ reader: inout ByteReader) throws(ByteReader.Failure) -> Bool {
        switch try reader.byte() {
        case 0: return false
        case 1: return true
        default: throw ByteReader.Failure(reason: "has a malformed flag")
        }
    }

    private static func page(_ reader: inout ByteReader) throws(ByteReader.Failure) -> PageContext {
        let raw = try reader.string()
        guard let type = PageContext.PageType(rawValue: raw) else {
            throw ByteReader.Failure(reason: "has a page of an unknown type \"\(raw)\"")
        }
        let itemCount = try reader.count(minimumBytesEach: 4)
        var data: [String] = []
        data.reserveCapacity(itemCount)
        for _ in 0..<itemCount { data.append(try reader.string()) }
        let location = try reader.string()
        let lng = try reader.optionalString()
        let pageNumber = try flag(&reader) ? try reader.int() : nil
        let referrer = try reader.optionalString()
        return PageContext(
            type: type, data: data, location: location, lng: lng, pageNumber: pageNumber, referrer: referrer,
            utm: try dictionary(&reader), attributes: try dictionary(&reader))
    }

    private static func dictionary(_ reader: inout ByteReader) throws(ByteReader.Failure) -> [String: String]? {
        guard try flag(&reader) else { return nil }
        let count = try reader.count(minimumBytesEach: 8)
        var dictionary: [String: String] = [:]
        dictionary.reserveCapacity(count)
        for _ in 0..<count { dictionary[try reader.string()] = try reader.string() }
        return dictionary
    }

    private static func status(_ reader: inout ByteReader, index: Int) throws(ByteReader.Failure)
        -> UserMessage.Status
    {
        switch State(rawValue: try reader.byte()) {
        case .sent: return .sent
        case .sending: return .sending
        case .failed:
            let raw = try reader.string()
            guard let code = AssistantError.Code(rawValue: raw) else {
                throw ByteReader.Failure(
                    reason: "has a failed message (\(index)) with an unknown error code \"\(raw)\"")
            }
            let message = try reader.string()
            return .failed(AssistantError(code: code, message: message), retryable: try flag(&reader))
        case nil:
            throw ByteReader.Failure(reason: "has a message (\(index)) in an unknown state")
        }
    }

    /// The replies' bytes after the index, taken one reply after another.
    private struct ReplyBytes {
        let file: UnsafeRawBufferPointer
        /// Where the next reply's bytes start.
        var next: Int

        mutating func take(_ count: Int) throws(ByteReader.Failure) -> Range<Int> {
            guard count <= file.count - next else {
                throw ByteReader.Failure(reason: "is truncated: its replies run past its end")
            }
            defer { next += count }
            return next..<(next + count)
        }
    }

    private static func reply(
        _ reader: inout ByteReader, index: Int, bytes replyBytes: inout ReplyBytes, into replies: RestoredReplies,
        objects: Int
    ) throws(ByteReader.Failure) -> ReplyMessage {
        let idKey: ReplyDecoder.IdentifierKey
        switch ReplyIdKey(rawValue: try reader.byte()) {
        case .assistantMessageId: idKey = .assistantMessageId
        case .id: idKey = .id
        case nil: throw ByteReader.Failure(reason: "has a reply (\(index)) with an unknown kind of ID")
        }
        var rating: AssistantRating?
        if let raw = try reader.optionalString() {
            guard let known = AssistantRating(rawValue: raw) else {
                throw ByteReader.Failure(reason: "has an unknown rating \"\(raw)\"")
            }
            rating = known
        }
        let assistantMessageId = try reader.optionalString()
        let buttons = try reader.count(minimumBytesEach: 4)
        for _ in 0..<buttons {
            let object = Int(try reader.uint32())
            guard object < objects else {
                throw ByteReader.Failure(reason: "has a reply (\(index)) with a button the file does not hold")
            }
            replies.appendButton(object)
        }
        let length = Int(try reader.uint32())
        let checksum = try reader.uint64()
        let bytes = try replyBytes.take(length)
        guard bytes.count <= ReplyDecoder.maximumSize, isObject(replyBytes.file[bytes]) else {
            throw ByteReader.Failure(reason: "has a reply (\(index)) that is not one")
        }
        let stored = replies.append(
            bytes: bytes, checksum: checksum, idKey: idKey, assistantMessageId: assistantMessageId, buttons: buttons)
        return ReplyMessage(restored: replies, index: stored, rating: rating)
    }

    /// A quick look that bytes hold a JSON object: `{` first and `}` last, past white space and
    /// a byte order mark. Whether they are one is found when the reply is decoded.
    private static func isObject(_ bytes: UnsafeRawBufferPointer.SubSequence) -> Bool {
        func isWhiteSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        var content = bytes.drop(while: isWhiteSpace)
        if content.starts(with: [0xEF, 0xBB, 0xBF]) { content = content.dropFirst(3) }
        guard let last = content.lastIndex(where: { !isWhiteSpace($0) }) else { return false }
        return content.first == UInt8(ascii: "{") && content[last] == UInt8(ascii: "}")
    }
}

extension ByteWriter {
    /// Every field of `page`, in the order `StoredDialogCodec` reads them back.
    fileprivate mutating func page(_ page: PageContext) {
        string(page.type.rawValue)
        uint32(UInt32(page.data.count))
        for item in page.data { string(item) }
        string(page.location)
        optionalString(page.lng)
        if let pageNumber = page.pageNumber {
            byte(1)
            int64(Int64(pageNumber))
        } else {
            byte(0)
        }
        optionalString(page.referrer)
        dictionary(page.utm)
        dictionary(page.attributes)
    }

    /// Sorted by key, so that the same dialog is always the same bytes.
    private mutating func dictionary(_ dictionary: [String: String]?) {
        guard let dictionary else { return byte(0) }
        byte(1)
        uint32(UInt32(dictionary.count))
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            string(key)
            string(value)
        }
    }
}
