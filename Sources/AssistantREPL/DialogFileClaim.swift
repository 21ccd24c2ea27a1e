import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether this session is the only REPL on a state directory's conversation.
///
/// Two REPLs on one state directory share the delivery queue safely, but each saves its own
/// conversation to the same `dialog.bin`, and the one saved last is what the next start brings
/// back: the second REPL says so as it starts rather than let a conversation vanish unexplained.
/// The claim is a `flock` on `<dialog file>.lock`, held for as long as the session lives (the
/// kernel lets it go when the process ends, a kill included).
final class DialogFileClaim: Sendable {
    /// The lock's descriptor, or -1 when this session does not hold it.
    private let descriptor: Int32
    /// Whether another session held the conversation when this one started.
    let isShared: Bool

    /// Claims `file`'s conversation. A lock that cannot be taken at all (a file system without
    /// `flock`) tells nothing, and nothing is said.
    init(_ file: URL) {
        let descriptor = open(file.path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            (self.descriptor, isShared) = (-1, false)
            return
        }
        var result = flock(descriptor, LOCK_EX | LOCK_NB)
        while result != 0, errno == EINTR { result = flock(descriptor, LOCK_EX | LOCK_NB) }
        guard result != 0 else {
            (self.descriptor, isShared) = (descriptor, false)
            return
        }
        isShared = errno == EWOULDBLOCK
        close(descriptor)
        self.descriptor = -1
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// What the REPL says as it starts when another session holds the conversation.
    static let sharedWarning =
        "warning: another assistant is running on this state directory: the delivery queue is shared safely, "
        + "but each keeps its own conversation, and the next start brings back the one saved last"
}
