import Foundation

/// The current dialog as the dialog store keeps it (D18): its identity, assistant and context
/// (in `context`), every turn with its message ID, text and state and its reply as received,
/// and when it was last active (D20's retention).
///
/// The machine makes one on every change of the dialog and takes one back on restore; the
/// actor turns it into bytes and back (`StoredDialogCodec`). Saving shares the dialog's turn
/// storage: making one copies nothing. Its replies read back from a store are all of one
/// table (`RestoredReplies`), that of the file they were read from: a dialog is restored once,
/// from one file, and the replies that land after it are kept decoded.
struct StoredDialog: Sendable, Hashable {
    let context: DialogContext
    let turns: ChunkedVector<DialogTurn>
    /// The wall-clock time of the change that saved it (D20).
    let lastActive: Date

    var uid: String { context.start.uid }
    var selector: String { context.start.prepared.selector }
    var campaignId: String? { context.start.prepared.campaignId }

    static func == (lhs: StoredDialog, rhs: StoredDialog) -> Bool {
        lhs.context == rhs.context && lhs.lastActive == rhs.lastActive && lhs.turns.elementsEqual(rhs.turns)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(context)
        hasher.combine(turns.count)
    }
}
