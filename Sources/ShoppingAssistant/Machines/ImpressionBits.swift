/// Which items of which replies had their visible impression reported in one opening (PR6):
/// a bit per item, in words per reply. Replies and items are dense indices of the dialog
/// (`AssistantProductRef.reply`, `.item`), so a lookup is two array reads and a mask, where a
/// set of refs hashed five fields twice per impression.
///
/// Only replies that exist get words: `insert` runs once the ref's product was found, so no
/// ref can make it grow past the dialog it names.
struct ImpressionBits: Sendable, Hashable {
    private var words: [[UInt64]] = []

    /// Whether `item` of `reply` was inserted.
    func contains(reply: UInt64, item: Int) -> Bool {
        guard let (row, word, bit) = Self.position(reply: reply, item: item), row < words.count,
            word < words[row].count
        else { return false }
        return words[row][word] & bit != 0
    }

    /// Marks `item` of `reply`; false when it was marked already (or cannot be).
    mutating func insert(reply: UInt64, item: Int) -> Bool {
        guard let (row, word, bit) = Self.position(reply: reply, item: item) else { return false }
        if row >= words.count { words.append(contentsOf: repeatElement([], count: row - words.count + 1)) }
        if word >= words[row].count {
            words[row].append(contentsOf: repeatElement(0, count: word - words[row].count + 1))
        }
        guard words[row][word] & bit == 0 else { return false }
        words[row][word] |= bit
        return true
    }

    /// Forgets every mark: a new opening.
    mutating func removeAll() { words.removeAll(keepingCapacity: true) }

    private static func position(reply: UInt64, item: Int) -> (row: Int, word: Int, bit: UInt64)? {
        guard let row = Int(exactly: reply), item >= 0 else { return nil }
        return (row, item >> 6, 1 << UInt64(item & 63))
    }
}
