#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a pthread mutex.
///
/// The package uses this instead of `Synchronization.Mutex` because on Linux the thread
/// sanitizer cannot see `Mutex`'s futex-based locking and reports every access through it as
/// a race; with a pthread mutex, `swift test --sanitize=thread` checks the real thing.
///
/// Never make a bare closure the value (`Locked<(@Sendable () -> Void)?>`): box it in a struct
/// first. Passed `inout` through the generic `withLock`, a function value is re-wrapped in a
/// pair of reabstraction thunks on every access, even a read, so each call through it gets one
/// frame deeper — quadratic cost, and a stack overflow in a long-lived process.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `value` happens inside `withLock`, under `mutex`, which is
    // also why its run-time exclusivity check can go: the mutex already makes each access the
    // only one (and `withLock` must never be re-entered).
    @exclusivity(unchecked) private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // A default mutex, which every platform has: glibc's adaptive kind is glibc's alone.
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Never call back into the same lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
