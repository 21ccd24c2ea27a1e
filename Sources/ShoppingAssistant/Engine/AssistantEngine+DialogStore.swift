import Foundation

// MARK: - The dialog store (D18, D20)

extension AssistantEngine {
    /// The dialog `store` holds, decoded; `nil` when it holds none, or none that can be read:
    /// that costs only the restore, logged at `.error` (D20), and a corrupt dialog is removed
    /// so that it is not read again.
    nonisolated static func readDialog(from store: any DialogStore, logger: AssistantLogger) -> StoredDialog? {
        let data: Data
        do {
            guard let stored = try store.loadDialog() else { return nil }
            data = stored
        } catch {
            logger.log(.error, "dialog store: the stored dialog cannot be read, it is not restored: \(error)")
            return nil
        }
        do throws(StoredDialogCodec.Failure) {
            return try StoredDialogCodec.decode(data, logger: logger)
        } catch {
            logger.log(
                .error, "dialog store: the stored dialog \(error.description); it is not restored and is removed")
            do { try store.removeDialog() } catch {
                logger.log(.error, "dialog store: the corrupt dialog could not be removed: \(error)")
            }
            return nil
        }
    }

    /// Saves the dialog as the machine decided (D18); a failure is logged, the chat goes on (D20).
    func storeDialog(_ dialog: StoredDialog) {
        guard let dialogStore else { return }
        do { try dialogStore.saveDialog(StoredDialogCodec.encode(dialog)) } catch {
            logger.log(.error, "dialog store: the dialog could not be saved, it will not survive a restart: \(error)")
        }
    }

    /// Empties the dialog store (D20); a failure is logged.
    func forgetStoredDialog() {
        guard let dialogStore else { return }
        do { try dialogStore.removeDialog() } catch {
            logger.log(.error, "dialog store: the stored dialog could not be removed: \(error)")
        }
    }
}
