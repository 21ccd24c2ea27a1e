import ShoppingAssistant

/// One timeline of what the host was asked to do, shared by a `RecordingPresenter` and a
/// `RecordingActionHandler`, so a test can assert the order the engine promises: the chat has
/// fully closed before the app navigates (PR10, AC5).
public final class HostCallLog: Sendable {
    /// One point on the timeline.
    public enum Entry: Sendable, Hashable, CustomStringConvertible {
        /// `dismissAssistant` was called; the chat starts closing.
        case dismissStarted
        /// `dismissAssistant` returned; the chat is gone (later than `dismissStarted` when the
        /// presenter holds the dismissal).
        case dismissEnded
        /// The handler was given the action with this name.
        case handedOver(String)

        /// Short text for failure messages.
        public var description: String {
            switch self {
            case .dismissStarted: "dismiss started"
            case .dismissEnded: "dismiss ended"
            case .handedOver(let name): "handed over \(name)"
            }
        }
    }

    private let log = Locked<[Entry]>([])

    /// An empty timeline; give the same one to the presenter and the handler.
    public init() {}

    /// Everything recorded so far, in order.
    public var entries: [Entry] { log.withLock { $0 } }

    func append(_ entry: Entry) { log.withLock { $0.append(entry) } }
}
