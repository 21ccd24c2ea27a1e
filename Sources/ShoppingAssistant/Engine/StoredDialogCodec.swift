import Foundation

/// Turns a `StoredDialog` into the bytes a `DialogStore` keeps, and back (D18).
///
/// The bytes are JSON: the dialog's identity, assistant, start screen and context, and each
/// turn with its message and its reply as received (base64 of the reply's bytes), read back
/// through the same decoder as the first time. A file that is not such a dialog — corrupt,
/// truncated, of another version, a reply that no longer decodes — is refused with a reason
/// (`Failure`), never a crash; reading costs time linear in its size.
enum StoredDialogCodec {
    /// Why stored bytes are not a dialog, for the `.error` log line (D20).
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The layout written now; another is not read.
    static let version = 1

    private struct File: Codable {
        var version: Int
        var uid: String
        var tenant: String
        var selector: String
        var campaignId: String?
        var enabled: Bool
        var title: String
        var subtitle: String?
        var suggests: [String]
        /// The preparation's page, as the host gave it.
        var page: StoredPage
        /// The page as sent (with the SDK attributes, B4).
        var sentPage: StoredPage
        var threadId: String
        /// Seconds since 1970 (D20).
        var lastActive: Double
        var turns: [Turn]
    }

    /// A page as the wire describes it (`ctx`), the one description of its JSON, read back
    /// through its `Decodable`.
    private struct StoredPage: Codable {
        var page: PageContext

        init(_ page: PageContext) { self.page = page }

        init(from decoder: any Decoder) throws { page = try PageContext(from: decoder) }

        func encode(to encoder: any Encoder) throws {
            guard let value = WireJSON.decode(WireJSON.encode(page)) else {
                throw EncodingError.invalidValue(page, .init(codingPath: encoder.codingPath, debugDescription: "ctx"))
            }
            try value.encode(to: encoder)
        }
    }

    private struct Turn: Codable {
        var messageId: String
        var text: String
        /// `sending`, `sent` or `failed`.
        var state: String
        var attempts: Int
        var errorCode: String?
        var errorMessage: String?
        var retryable: Bool?
        /// The reply's bytes as received.
        var reply: Data?
        /// `assistantMessageId` (`/v1/messages`) or `id` (history).
        var replyIdKey: String?
        var rating: String?
    }

    static func encode(_ dialog: StoredDialog) -> Data? {
        let context = dialog.context
        let prepared = context.start.prepared
        var turns: [Turn] = []
        turns.reserveCapacity(dialog.turns.count)
        for turn in dialog.turns {
            var stored = Turn(
                messageId: turn.user.messageId, text: turn.user.text, state: "sent", attempts: turn.user.attempts)
            switch turn.user.status {
            case .sending: stored.state = "sending"
            case .sent: break
            case .failed(let error, let retryable):
                stored.state = "failed"
                stored.errorCode = error.code.rawValue
                stored.errorMessage = error.message
                stored.retryable = retryable
            }
            if let reply = turn.reply, let received = reply.content.received {
                stored.reply = received.bytes
                stored.replyIdKey = received.idKey == .id ? "id" : "assistantMessageId"
                stored.rating = reply.rating?.rawValue
            }
            turns.append(stored)
        }
        let file = File(
            version: version, uid: context.start.uid, tenant: context.start.tenant, selector: prepared.selector,
            campaignId: prepared.campaignId, enabled: prepared.configuration.enabled,
            title: prepared.configuration.title, subtitle: prepared.configuration.subtitle,
            suggests: prepared.configuration.suggests, page: StoredPage(prepared.pageContext),
            sentPage: StoredPage(context.start.page),
            threadId: context.threadId, lastActive: dialog.lastActive.timeIntervalSince1970, turns: turns)
        return try? JSONEncoder().encode(file)
    }

    static func decode(_ data: Data) throws(Failure) -> StoredDialog {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw Failure(description: "is corrupt (\(data.count) bytes that are not a dialog)")
        }
        guard file.version == version else { throw Failure(description: "is of version \(file.version)") }
        guard !file.uid.isEmpty, !file.threadId.isEmpty else { throw Failure(description: "has no identity or thread") }
        let prepared = PreparedAssistant(
            id: PreparationID(value: 0), selector: file.selector, pageContext: file.page.page,
            configuration: AssistantConfiguration(
                enabled: file.enabled, title: file.title, subtitle: file.subtitle, suggests: file.suggests),
            campaignId: file.campaignId)
        let context = DialogContext(
            threadId: file.threadId,
            start: DialogStart(prepared: prepared, uid: file.uid, tenant: file.tenant, page: file.sentPage.page))
        var turns = ChunkedVector<DialogTurn>()
        var seen: Set<String> = []
        var sending = false
        for (index, turn) in file.turns.enumerated() {
            guard seen.insert(turn.messageId).inserted else {
                throw Failure(description: "holds message \(turn.messageId) twice")
            }
            let status: UserMessage.Status
            switch turn.state {
            case "sending": status = .sending
            case "sent": status = .sent
            case "failed":
                guard let code = turn.errorCode.flatMap(AssistantError.Code.init(rawValue:)) else {
                    throw Failure(description: "has a failed message \(index) without a known error code")
                }
                status = .failed(
                    AssistantError(code: code, message: turn.errorMessage ?? ""), retryable: turn.retryable ?? false)
            default:
                throw Failure(description: "has message \(index) in an unknown state \"\(turn.state)\"")
            }
            if case .sending = status {
                guard !sending else { throw Failure(description: "has two messages sending (D2)") }
                sending = true
            }
            var reply: ReplyMessage?
            if let bytes = turn.reply {
                let idKey: ReplyDecoder.IdentifierKey = turn.replyIdKey == "id" ? .id : .assistantMessageId
                guard let content = ReplyDecoder.decode(bytes, idKey: idKey) else {
                    throw Failure(description: "has a reply (\(index)) that does not decode")
                }
                var rating: AssistantRating?
                if let raw = turn.rating {
                    guard let known = AssistantRating(rawValue: raw) else {
                        throw Failure(description: "has an unknown rating \"\(raw)\"")
                    }
                    rating = known
                }
                reply = ReplyMessage(content: content, rating: rating, buttonsEnabled: [])
            }
            turns.append(
                DialogTurn(
                    user: UserMessage(
                        messageId: turn.messageId, text: turn.text, status: status, attempts: max(turn.attempts, 1),
                        request: nil),
                    reply: reply))
        }
        return StoredDialog(
            context: context, turns: turns, lastActive: Date(timeIntervalSince1970: file.lastActive))
    }
}
