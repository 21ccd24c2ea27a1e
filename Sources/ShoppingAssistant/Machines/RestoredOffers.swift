/// Which of a restored dialog's distinct button objects are offered (AC3, AC4) under the
/// current handler. A button's action is made from its object alone (AC2, AC3), and a long
/// dialog's replies mostly carry the same few buttons, so the handler is asked once per object,
/// from its bytes, when the dialog is restored (D18) and when the handler changes; a restored
/// reply's buttons are looked up here, and restoring a dialog writes nothing into its replies.
struct RestoredOffers: Sendable, Hashable {
    let replies: RestoredReplies
    /// By index into `replies.buttonObjects`.
    let offered: [Bool]

    /// Asks `canHandle` about each distinct object: one that is not a button, or whose route
    /// offers nothing (AC3), is not offered.
    init(_ replies: RestoredReplies, canHandle: (AssistantAction) -> Bool) {
        self.replies = replies
        offered = replies.buttonObjects.indices.map { object in
            replies.withButtonObject(object) { ReplyDecoder.button($0) }?.action.map(canHandle) ?? false
        }
    }

    /// Whether button `button` of restored reply `reply` of `table` is offered.
    func isOffered(_ button: Int, ofReply reply: Int, in table: RestoredReplies) -> Bool {
        guard table === replies else { return false }
        let objects = table.buttons(reply)
        guard button >= 0, button < objects.count else { return false }
        return offered[objects[objects.startIndex + button]]
    }

    static func == (lhs: RestoredOffers, rhs: RestoredOffers) -> Bool {
        lhs.replies === rhs.replies && lhs.offered == rhs.offered
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(replies))
        hasher.combine(offered)
    }
}
