import Foundation

/// One request the engine accepted and keeps until Gravity has it (DL2): an `/event` or
/// `/visit` body, or a tracking `GET`. It holds exactly what is sent again, byte for byte, on
/// every later attempt, and never the API key (which is added as each attempt leaves, and only
/// for the Gravity origin).
public struct DeliveryRecord: Sendable, Hashable {
    /// What a record is, which decides where it goes and in which lane it waits.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `POST /event` to the Gravity base URL configured when it leaves.
        case event
        /// `POST /visit` to the Gravity base URL configured when it leaves.
        case visit
        /// `GET` of a tracking URL taken from the server's data.
        case tracking
    }

    /// Unique across processes, so that a record moved between two stores (a crashed
    /// process's queue adopted by the next) is recognised and never kept twice.
    public let id: UUID
    /// Which request this is.
    public let kind: Kind
    /// The endpoint's name under the Gravity base URL (`event`, `visit`) or, for a tracking
    /// record, the absolute URL.
    public let target: String
    /// The exact body, for `/event` and `/visit`; `nil` for a `GET`.
    public let body: Data?
    /// When the engine accepted it, on the wall clock: what `maxAge` is measured from (DL4).
    public let createdAt: Date
    /// Server failures so far (408, 429, 5xx); the fifth drops the record (DL3).
    public var attempts: Int
    /// What the record is, for logs and the REPL's `:queue` (the event types, or the URL).
    public let label: String
    /// Who it is sent as (`uid`, or the app's id), for logs; never used to build a request.
    public let owner: String?

    /// A record as the engine writes it; stores give it back unchanged.
    public init(
        id: UUID, kind: Kind, target: String, body: Data?, createdAt: Date, attempts: Int = 0, label: String,
        owner: String?
    ) {
        self.id = id
        self.kind = kind
        self.target = target
        self.body = body
        self.createdAt = createdAt
        self.attempts = attempts
        self.label = label
        self.owner = owner
    }
}

/// Where accepted requests wait until Gravity has them (DL2–DL5): a file store by default
/// (`FileDeliveryStore`), an in-memory one for tests and for apps that accept losing the
/// queue with the process.
///
/// The engine calls a store from one task at a time, never from its actor, so a store may
/// block on the disk. Every method that changes the store returns once the change outlives
/// the process, and all but `remove` once it outlives a power cut too: after `append`
/// returns, a process killed at any moment keeps the records (DL5). An error
/// thrown by `append` means the records are not protected; the engine logs it and still sends
/// them once (DL5).
///
/// A store is meant for one engine at a time. Two engines (or two processes) opening one store
/// must never both send a record, nor lose one; how a store ensures that is its own
/// (`FileDeliveryStore` gives each engine a journal of its own and adopts the journals of
/// engines that are gone).
public protocol DeliveryStore: Sendable {
    /// Opens the store for the engine and returns every record waiting, oldest first: this
    /// store's own from an earlier run, and those of earlier engines that are gone. Called
    /// once, before any other method. An unreadable part is reported through the warning
    /// handler and costs only itself.
    func open() throws -> [DeliveryRecord]
    /// Adds records after those already kept, durably, all or none. A record whose id is kept
    /// replaces it in its place (a call let through the session gate with new bytes, B8); a
    /// store that keeps the first instead sends the bytes the call was held as.
    func append(_ records: [DeliveryRecord]) throws
    /// Keeps a record's new count of server failures (DL3).
    func updateAttempts(of id: UUID, to attempts: Int) throws
    /// Forgets records: delivered, dropped or cleared. A removal must outlive the process at
    /// once, but may wait to outlive a power cut until `sync()`, the next `append`,
    /// `updateAttempts` or `removeAll` (which make the removals before them durable too, even
    /// when they have nothing to write), or `close()`: a record a power cut brings back is
    /// only sent again.
    func remove(_ ids: [UUID]) throws
    /// Makes the removals written so far durable. The engine calls it after every 64 removals,
    /// when its deliveries pause, and before it closes the store, so a drain pays one flush
    /// for many records. A store that wraps another must pass it on.
    func sync() throws
    /// Forgets every record (DL8's `clearQueue`).
    func removeAll() throws
    /// Lets go of the store (its lock, its files) for the next engine; later calls fail.
    func close()
    /// Where the store reports what it recovered from on its own (a torn last record, a
    /// foreign file set aside), so it reaches the engine's log. Set once, before `open()`.
    func setWarningHandler(_ handler: @escaping @Sendable (String) -> Void)
}

extension DeliveryStore {
    /// Ignores the handler, for stores that never recover from anything on their own.
    public func setWarningHandler(_ handler: @escaping @Sendable (String) -> Void) {}

    /// Nothing to do, for stores whose removals are as durable as they will be at once.
    public func sync() throws {}
}

/// Keeps the queue in memory only: for tests, and for apps that accept that a queue does not
/// outlive the process. Engines that share one instance share its records as a new engine on
/// the same file store would: the second to open it gets the records its predecessor left.
public final class InMemoryDeliveryStore: DeliveryStore {
    private struct State {
        var byID: [UUID: DeliveryRecord] = [:]
        /// Accepted order; an id removed since stays until the list is mostly such ids, so
        /// that appending and removing cost the same however many records wait.
        var order: [UUID] = []
        /// Records are refused from now on, as by a full disk (for tests of DL5's fallback).
        var failsWrites = false

        init(records: [DeliveryRecord]) {
            for record in records where byID[record.id] == nil {
                byID[record.id] = record
                order.append(record.id)
            }
        }

        var records: [DeliveryRecord] { order.compactMap { byID[$0] } }

        mutating func compactIfSparse() {
            guard order.count > 64, order.count > 2 * byID.count else { return }
            order = order.filter { byID[$0] != nil }
        }
    }

    private let state: Locked<State>

    /// Starts with `records`, as if an earlier engine had left them.
    public init(records: [DeliveryRecord] = []) { state = Locked(State(records: records)) }

    /// The records kept now, oldest first.
    public var records: [DeliveryRecord] { state.withLock { $0.records } }

    /// The records its storage has room for: for tests that a drained burst gave it back.
    var storageCapacity: Int { state.withLock { $0.byID.capacity + $0.order.capacity } }

    /// Makes every later `append` fail (or succeed again), as a full or read-only disk would.
    public func failWrites(_ fails: Bool) { state.withLock { $0.failsWrites = fails } }

    /// The records kept now.
    public func open() throws -> [DeliveryRecord] { records }

    /// Adds the records (one whose id is kept replaces it), or fails whole while writes fail.
    public func append(_ records: [DeliveryRecord]) throws {
        try state.withLock { state in
            guard !state.failsWrites else { throw DeliveryStoreError(reason: "writes are refused") }
            for record in records {
                if state.byID.updateValue(record, forKey: record.id) == nil { state.order.append(record.id) }
            }
        }
    }

    /// Keeps the new count.
    public func updateAttempts(of id: UUID, to attempts: Int) throws {
        state.withLock { $0.byID[id]?.attempts = attempts }
    }

    /// Forgets the records.
    public func remove(_ ids: [UUID]) throws {
        state.withLock { state in
            for id in ids { state.byID[id] = nil }
            state.byID.releaseSpareCapacity()
            state.compactIfSparse()
        }
    }

    /// Forgets every record.
    public func removeAll() throws {
        state.withLock { state in
            state.byID = [:]
            state.order = []
        }
    }

    /// Nothing to let go of: the records stay for the next engine on this instance.
    public func close() {}
}

/// Why a store could not do what was asked; the engine logs it (DL5).
public struct DeliveryStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, in words for the log.
    public let reason: String

    /// A failure described by `reason`.
    public init(reason: String) { self.reason = reason }

    /// The reason.
    public var description: String { reason }
}
