import Foundation
import ShoppingAssistant

/// The delivery queue at the prompt (DL2–DL8): what waits (`:queue`), a fresh attempt at it
/// (`:flush`), and the network switch (`:offline`, `:online`) that lets a user queue on
/// purpose. `:restart` is `REPLSession.restart()`.
extension REPLSession {
    /// `:queue`: one line per entry, oldest first — kind, label, age, attempts, status and when
    /// it goes next — or `queue empty`.
    func showQueue() async {
        let queue = await engine.deliveryQueue
        guard !queue.isEmpty else {
            output.line(.dim, "queue empty")
            return
        }
        let now = wallClock()
        for (index, entry) in queue.enumerated() {
            output.untrusted(Self.queueLine(entry, number: index + 1, now: now), prefix: "  ")
        }
    }

    /// One `:queue` line: `1. event purchase-v1 · age 12s · 0 server failures · queued · next try
    /// in 2s`. Only server failures count towards the drop (DL3); a network failure does not.
    static func queueLine(_ entry: PendingDelivery, number: Int, now: Date) -> String {
        let attempts = entry.attempts == 1 ? "1 server failure" : "\(entry.attempts) server failures"
        var line =
            "\(number). \(entry.kind.rawValue) \(entry.label) · age \(age(now.timeIntervalSince(entry.createdAt)))"
            + " · \(attempts) · \(entry.status.rawValue)"
        if let next = entry.nextAttempt {
            let wait = next.timeIntervalSince(now)
            line += wait > 0 ? " · next try in \(age(wait))" : " · next try now"
        }
        return line
    }

    /// A wall-clock interval in a few characters, never negative: `250ms`, `12s`, `3m 5s`,
    /// `2h 10m`, `3d 4h`.
    static func age(_ seconds: TimeInterval) -> String {
        let seconds = max(0, seconds)
        if seconds < 1 { return "\(Int((seconds * 1000).rounded()))ms" }
        let whole = Int(seconds.rounded())
        switch whole {
        case ..<60: return "\(whole)s"
        case ..<3600: return "\(whole / 60)m \(whole % 60)s"
        case ..<86_400: return "\(whole / 3600)h \(whole % 3600 / 60)m"
        default: return "\(whole / 86_400)d \(whole % 86_400 / 3600)h"
        }
    }

    /// `:flush`: one fresh attempt at everything queued, then how much is left, and why when
    /// the REPL itself cut the network.
    func flushQueue() async {
        await engine.flushQueue()
        let left = await engine.pendingDeliveries
        guard left > 0 else { return output.line(.dim, "(queue flushed: nothing left)") }
        let why = network.isOffline ? "offline: :online to reconnect" : ":queue shows the next try"
        output.line(.dim, "(queue tried: \(Self.entries(left)) still queued; \(why))")
    }

    /// At the end of a session: what is still queued stays in the store for the next start
    /// (DL8), which a user leaving offline would otherwise not know — or, with the queue in
    /// memory (a pipe without `--state-dir`), is lost with the session, which they must know.
    func sayWhatStaysQueued() async {
        let left = await engine.pendingDeliveries
        guard left > 0 else { return }
        guard queueOnDisk else {
            return output.aside(
                .warning,
                "(\(Self.entries(left)) still queued, in memory only: lost as this session ends; "
                    + "--state-dir DIR keeps the queue for the next start)")
        }
        output.aside(.dim, "(\(Self.entries(left)) still queued: kept, and sent when the assistant starts again)")
    }

    /// `:queue clear`: empties the queue (DL8); nothing cleared reaches the wire afterwards.
    func clearQueue() async {
        let had = await engine.pendingDeliveries
        await engine.clearQueue()
        output.line(.dim, had == 0 ? "(queue empty already)" : "(queue cleared: \(Self.entries(had)) forgotten)")
    }

    /// `:offline` (`true`) and `:online`.
    nonisolated func setOffline(_ offline: Bool) {
        let was = network.isOffline
        network.setOffline(offline)
        switch (offline, was) {
        case (true, false): output.line(.dim, "(offline: every request fails to connect until :online)")
        case (true, true): output.line(.dim, "(offline already)")
        case (false, true): output.line(.dim, "(online: queued entries leave on the next drain or :flush)")
        case (false, false): output.line(.dim, "(online already)")
        }
    }
}
