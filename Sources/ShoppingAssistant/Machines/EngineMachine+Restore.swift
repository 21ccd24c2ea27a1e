import Foundation

// MARK: - The dialog across restarts (D18–D20)

extension EngineMachine {
    /// The dialog store held `stored` when the engine was created: it waits for the first
    /// opening after a `.ready` preparation (D18). A store read by an engine without one to
    /// keep dialogs in is ignored.
    mutating func dialogStoreRead(_ stored: StoredDialog) {
        guard settings.keepsDialog, dialog.context == nil else { return }
        restorable = stored
    }

    /// What the store is to hold now: the current dialog, or nothing once it ended (D18, D20).
    /// Either way the dialog of an earlier run is no longer one to restore.
    mutating func dialogToStore() -> EngineAction {
        restorable = nil
        guard let context = dialog.context else { return .forgetStoredDialog }
        return .storeDialog(StoredDialog(context: context, turns: dialog.turns, lastActive: wallNow))
    }

    /// The opening under way restores the stored dialog when it is of the current identity
    /// and of the ready assistant, and recent enough (D18, D20); anything else is forgotten,
    /// never shown (D17). A message that was `sending` is reconciled (D19).
    mutating func restoreStoredDialog(canHandle: (AssistantAction) -> Bool) -> [EngineAction] {
        guard let stored = restorable, let ready = preparation.ready, dialog.context == nil else { return [] }
        restorable = nil
        let forget: (String) -> [EngineAction] = {
            [.log(.info, "the stored dialog \($0): not restored"), .forgetStoredDialog]
        }
        // D20, D17: nothing of one user is shown to another.
        guard let uid = identity.canonicalUID, stored.uid == uid else { return forget("is of another identity") }
        guard stored.selector == ready.selector, stored.campaignId == ready.campaignId else {
            return forget("is of another assistant")  // D20
        }
        let age = wallNow.timeIntervalSince(stored.lastActive)
        let retention = Double(settings.dialogRetention.components.seconds)
        guard age <= retention else { return forget("was last active \(Int(age)) s ago") }  // D20
        guard let actions = dialog.restore(stored, canHandle: canHandle) else {  // D18, AC4
            return [
                .log(.error, "dialog store: the stored dialog holds a message ID twice: not restored"),
                .forgetStoredDialog,
            ]  // D20
        }
        return [.log(.info, "dialog \(stored.context.threadId) restored (\(stored.turns.count) messages)")]
            + run(actions)  // D19
    }
}
