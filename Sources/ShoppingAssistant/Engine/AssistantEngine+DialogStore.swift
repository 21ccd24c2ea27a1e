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

    /// Returns once the dialog store has taken every change of the dialog so far: a process
    /// that ends without `shutdown()` (a piped session, a bench) waits for it first.
    package func dialogStoreWritten() async { await dialogWriter?.flush() }

    /// Saves the dialog as the machine decided (D18); a failure is logged, the chat goes on (D20).
    func storeDialog(_ dialog: StoredDialog) { dialogWriter?.save(dialog) }

    /// Empties the dialog store (D20); a failure is logged.
    func forgetStoredDialog() { dialogWriter?.remove() }
}
