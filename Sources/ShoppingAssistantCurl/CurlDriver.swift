import CLibcurl
import CLibcurlShim
import Foundation
import ShoppingAssistant

/// One libcurl multi handle and the one thread that drives it: every transfer of a
/// `CurlTransport` runs here, so connections (and HTTP/2 streams) are shared between them.
///
/// A multi handle is not thread-safe: only the driver's thread calls into it, except
/// `curl_multi_wakeup`, which exists to be called from elsewhere. Callers hand transfers over
/// (`start`) and take them back (`remove`) through a lock-guarded queue and wake the thread; the
/// thread adds and removes handles, runs `curl_multi_perform` (which calls the transfers'
/// callbacks), resumes the callers of finished transfers, and sleeps in `curl_multi_poll` until
/// a socket is ready, libcurl's next timer is due, or it is woken.
final class CurlDriver: @unchecked Sendable {
    // @unchecked: `multi` is used by the driver's thread only (and by `curl_multi_wakeup`,
    // under `queue`'s lock, while the thread has not yet cleaned it up); `active` is confined
    // to the driver's thread; `queue` is lock-guarded.

    private let multi: UnsafeMutableRawPointer?

    private struct Queue {
        var starting: [CurlTransfer] = []
        var removing: [CurlTransfer] = []
        var stopping = false
        /// The multi handle is gone: nobody may wake it any more.
        var stopped = false
        /// Easy handles of finished transfers, reset, for the next ones (`makeHandle`).
        var spare: [SpareHandle] = []
    }

    /// An easy handle nobody uses, kept by `queue`.
    private struct SpareHandle: @unchecked Sendable {
        // @unchecked: a spare handle belongs to no transfer and is only passed on under the lock.
        let easy: UnsafeMutableRawPointer
    }

    /// At most this many spare handles are kept; a chat has two or three requests at a time.
    static let maximumSpareHandles = 4

    private let queue = Locked(Queue())
    /// Transfers whose handles are in the multi handle, by handle.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    /// How long one `curl_multi_poll` may sleep when nothing wakes it; libcurl's own timers
    /// shorten it.
    private static let pollMilliseconds: Int32 = 1000

    init(maximumConnectionsPerHost: Int) {
        CurlGlobal.initialize()
        multi = curl_multi_init()
        if let multi {
            // HTTP/2 streams share one connection per host where the server offers it.
            _ = cst_multi_set_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
            _ = cst_multi_set_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
            let thread = Thread { [self] in self.multi.map(run) }
            thread.name = "CurlTransport"
            thread.start()
        }
    }

    /// An easy handle for a new transfer: a spare one, reset after an earlier transfer (which
    /// spares the caller making one, about as costly as configuring it), or a new one. `nil`
    /// only when libcurl cannot make one.
    func makeHandle() -> UnsafeMutableRawPointer? {
        queue.withLock { $0.spare.popLast()?.easy } ?? curl_easy_init()
    }

    /// Resets the handle of a transfer that has left the multi handle and keeps it for the next
    /// one; done on the thread after the caller has been resumed, so neither waits for it.
    private func recycle(_ easy: UnsafeMutableRawPointer) {
        curl_easy_reset(easy)
        let kept = queue.withLock { queue -> Bool in
            guard !queue.stopping, queue.spare.count < Self.maximumSpareHandles else { return false }
            queue.spare.append(SpareHandle(easy: easy))
            return true
        }
        if !kept { curl_easy_cleanup(easy) }
    }

    /// Hands `transfer` to the thread, which adds its handle and, when it ends, resumes its
    /// caller. A driver without a multi handle answers at once.
    func start(_ transfer: CurlTransfer) {
        let accepted = queue.withLock { queue -> Bool in
            guard let multi, !queue.stopping else { return false }
            queue.starting.append(transfer)
            curl_multi_wakeup(multi)
            return true
        }
        if !accepted {
            transfer.finish(.failure(HTTPTransportError.cannotConnect("libcurl could not start a multi handle")))
        }
    }

    /// Takes back a transfer whose caller has been resumed already (cancelled): its handle
    /// leaves the multi handle on the thread's next turn, which closes its connection.
    func remove(_ transfer: CurlTransfer) {
        queue.withLock { queue in
            guard let multi, !queue.stopped else { return }
            queue.removing.append(transfer)
            curl_multi_wakeup(multi)
        }
    }

    /// Ends the thread once nothing is left in flight; called when the transport goes away.
    func stop() {
        queue.withLock { queue in
            queue.stopping = true
            if let multi, !queue.stopped { curl_multi_wakeup(multi) }
        }
    }

    // MARK: - The driver's thread

    private func run(_ multi: UnsafeMutableRawPointer) {
        while true {
            let (starting, removing, stopping) = queue.withLock { queue in
                defer {
                    queue.starting = []
                    queue.removing = []
                }
                return (queue.starting, queue.removing, queue.stopping)
            }
            for transfer in starting {
                guard let easy = transfer.easy, !transfer.isFinished else { continue }
                let code = curl_multi_add_handle(multi, easy)
                guard code == CURLM_OK else {
                    let reason = String(cString: curl_multi_strerror(code))
                    transfer.finish(
                        .failure(HTTPTransportError.cannotConnect("libcurl refused the transfer: \(reason)")))
                    continue
                }
                active[easy] = transfer
            }
            for transfer in removing {
                // Only while the handle is still this transfer's: one that ended meanwhile has
                // handed it back, and the next transfer may be using it already.
                guard let easy = transfer.easy, active[easy] === transfer else { continue }
                active[easy] = nil
                curl_multi_remove_handle(multi, easy)
                withExtendedLifetime(transfer) {
                    transfer.handBack()
                    recycle(easy)
                }
            }
            if stopping {
                // A transport goes away only once no call holds it, so what is left in flight
                // has answered its caller already: cancelled transfers, and answers complete at
                // their declared length that libcurl had not yet reported done.
                for (easy, transfer) in active {
                    curl_multi_remove_handle(multi, easy)
                    transfer.finish(.failure(CancellationError()))
                }
                active = [:]
                let (drained, spare) = queue.withLock { queue -> (Bool, [SpareHandle]) in
                    guard queue.starting.isEmpty, queue.removing.isEmpty else { return (false, []) }
                    queue.stopped = true
                    defer { queue.spare = [] }
                    return (true, queue.spare)
                }
                if drained {
                    for handle in spare { curl_easy_cleanup(handle.easy) }
                    break
                }
                continue
            }
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            finishDoneTransfers(multi)
            _ = curl_multi_poll(multi, nil, 0, Self.pollMilliseconds, nil)
        }
        curl_multi_cleanup(multi)
    }

    /// Removes every finished transfer's handle and resumes its caller.
    private func finishDoneTransfers(_ multi: UnsafeMutableRawPointer) {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            // The message does not survive the removal: read it first.
            let code = cst_message_result(message)
            curl_multi_remove_handle(multi, easy)
            guard let transfer = active.removeValue(forKey: easy) else { continue }
            // The handle is the driver's again before the caller resumes; the transfer is held
            // here until the handle has been reset, so nothing it points to is freed before.
            withExtendedLifetime(transfer) {
                // Its caller may have its answer already (cancelled, or complete at its declared
                // length): then there is no result to make.
                if transfer.isFinished {
                    transfer.handBack()
                } else {
                    transfer.finish(transfer.result(of: code), handingBack: true)
                }
                recycle(easy)
            }
        }
    }
}
