import Foundation

/// Where the current dialog survives a restart (D18): the engine saves it on every change of
/// the dialog and reads it once, when it is created, to restore it on the first opening after
/// a `.ready` preparation of the same assistant under the same identity.
///
/// The store keeps opaque bytes; the engine encodes and decodes them, so a store never needs to
/// know what a dialog holds, and a corrupt file is the engine's to reject (logged at `.error`,
/// never a crash). The read comes from the engine's creation; saves and removals come one at a
/// time from a queue of the engine's own, never its actor, so a store may flush to disk before
/// it returns. A store that throws costs only the restore, never the chat (D20).
public protocol DialogStore: Sendable {
    /// The bytes last saved, or `nil` when there is no stored dialog.
    func loadDialog() throws -> Data?
    /// Replaces the stored dialog with `data`; after a crash the store holds the old bytes or
    /// the new ones, never a mix.
    func saveDialog(_ data: Data) throws
    /// Forgets the stored dialog: "new chat", an identity or assistant change, or a dialog the
    /// engine will never show (D20).
    func removeDialog() throws
}

/// Keeps the dialog in memory only: for tests (pass one store to two engines to play a
/// restart) and for hosts that want no conversation on disk.
public final class InMemoryDialogStore: DialogStore {
    private let data: Locked<Data?>

    /// Starts with `data`, as if an earlier engine had saved it; `nil` is a first start.
    public init(data: Data? = nil) { self.data = Locked(data) }

    /// The bytes last saved, as saved.
    public func loadDialog() -> Data? { data.withLock { $0 } }
    /// Keeps `data` until the process ends.
    public func saveDialog(_ data: Data) { self.data.withLock { $0 = data } }
    /// Forgets the stored bytes.
    public func removeDialog() { data.withLock { $0 = nil } }

    /// What the store holds now, for tests that look at it.
    public var storedData: Data? { data.withLock { $0 } }
}
