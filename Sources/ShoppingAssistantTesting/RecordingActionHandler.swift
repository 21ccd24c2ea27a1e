import ShoppingAssistant

/// An action handler that records every action the engine handed over, so a test asserts
/// where the app would have navigated — and, with a shared `HostCallLog`, that it navigated
/// only after the chat had closed (PR10, AC5).
public final class RecordingActionHandler: AssistantActionHandler {
    private let handled = Locked<[AssistantAction]>([])
    private let waiters = Waitlist()
    private let accepts: @Sendable (AssistantAction) -> Bool

    /// The timeline this handler writes its hand-overs to.
    public let log: HostCallLog

    /// - Parameters:
    ///   - log: shared with a `RecordingPresenter` to check close-then-navigate (PR10).
    ///   - canHandle: what `canHandle` answers; a button the host cannot handle is not
    ///     offered (AC4), so refusing one is how a test reaches that rule.
    public init(
        log: HostCallLog = HostCallLog(), canHandle: @escaping @Sendable (AssistantAction) -> Bool = { _ in true }
    ) {
        self.log = log
        self.accepts = canHandle
    }

    /// A handler that cannot handle the actions with these wire names (`open_support_chat`…).
    public convenience init(log: HostCallLog = HostCallLog(), refusing names: Set<String>) {
        self.init(log: log) { !names.contains($0.name) }
    }

    /// Every action handed over so far, in order.
    public var actions: [AssistantAction] { handled.withLock { $0 } }

    /// Suspends until at least `count` actions were handed over; `false` if the test was
    /// cancelled first, so a hand-over that never comes fails the test instead of hanging it.
    @discardableResult
    public func waitForActions(_ count: Int) async -> Bool {
        await waiters.wait { [handled] in handled.withLock { $0.count >= count } }
    }

    /// Answers as configured; synchronous and free of side effects, as the engine requires (AC4).
    public func canHandle(_ action: AssistantAction) -> Bool { accepts(action) }

    /// Records the action on `actions` and the call log.
    public func handle(_ action: AssistantAction) async {
        log.append(.handedOver(action.name))
        handled.withLock { $0.append(action) }
        waiters.recheck()
    }
}
