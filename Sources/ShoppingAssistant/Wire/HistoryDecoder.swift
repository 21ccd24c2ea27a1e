import Foundation

/// Reads a thread's history (wire.md § GET /v1/threads/{threadId}/messages) from its bytes.
///
/// Reconciliation (D5) needs only each message's `role`, `id` and `replyTo` to find the reply
/// to one message, so those are read and every message object is kept as its bytes; only the
/// one adopted is decoded as a reply (`HistoryMessage.reply`). A message that is not an
/// object or has no `role` string is left out; the envelope must be an object with a
/// `messages` array, or the history is `nil` (`invalid_response`).
enum HistoryDecoder {
    static func decode(_ data: some ContiguousBytes) -> [HistoryMessage]? {
        do throws(JSONReadError) {
            return try JSONReader.read(data) { reader throws(JSONReadError) in
                guard try reader.peek() == .object else { return nil }
                var messages: [HistoryMessage]?
                try reader.readObject { reader, key throws(JSONReadError) in
                    guard reader.text(key, is: "messages") else { return try reader.skipValue() }
                    guard try reader.peek() == .array else {
                        messages = nil
                        return try reader.skipValue()
                    }
                    var list: [HistoryMessage] = []
                    try reader.readArray { reader throws(JSONReadError) in
                        if let message = try self.message(&reader) { list.append(message) }
                    }
                    messages = list
                }
                try reader.finish()
                return messages
            }
        } catch {
            return nil
        }
    }

    private static func message(_ reader: inout JSONReader) throws(JSONReadError) -> HistoryMessage? {
        guard try reader.peek() == .object else {
            try reader.skipValue()
            return nil
        }
        let start = reader.position
        var id: String?
        var role: String?
        var replyTo: String?
        try reader.readObject { reader, key throws(JSONReadError) in
            if reader.text(key, is: "role") {
                role = try reader.readStringOrSkip()
            } else if reader.text(key, is: "id") {
                id = try reader.readStringOrSkip()
            } else if reader.text(key, is: "replyTo") {
                replyTo = try reader.readStringOrSkip()
            } else {
                try reader.skipValue()
            }
        }
        guard let role else { return nil }
        // Only an assistant message can be adopted; it is read as a reply here, once (D5).
        let reply =
            role == "assistant"
            ? ReplyDecoder.decode(Data(reader.bytes(from: start, to: reader.position)), idKey: .id) : nil
        return HistoryMessage(id: id, role: role, replyTo: replyTo, reply: reply)
    }
}
