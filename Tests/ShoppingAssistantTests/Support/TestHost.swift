import Foundation
import ShoppingAssistant

/// A presenter that records what the engine asked of it. `holdDismiss` makes dismissal wait
/// until the test releases it, to observe what happens while a close is under way.
final class RecordingPresenter: AssistantPresenter {
    enum Call: Equatable {
        case present(AssistantChatSnapshot)
        case update(AssistantChatSnapshot)
        case dismiss
    }

    private struct State {
        var availability: AssistantPresenterAvailability = .available
        var calls: [Call] = []
        var holdDismiss = false
        var dismissGate: CheckedContinuation<Void, Never>?
        var dismissStarted = false
    }

    private let state = Locked(State())
    /// Tests waiting for a dismissal or a snapshot; cancellation-aware, so a time limit ends them.
    private let waiters = Waitlist()
    /// Shared order log with the handler, to assert close-then-handle (PR10, AC5).
    let order: OrderLog

    init(order: OrderLog = OrderLog(), availability: AssistantPresenterAvailability = .available) {
        self.order = order
        state.withLock { $0.availability = availability }
    }

    var availability: AssistantPresenterAvailability { state.withLock { $0.availability } }
    func setAvailability(_ value: AssistantPresenterAvailability) { state.withLock { $0.availability = value } }
    var calls: [Call] { state.withLock { $0.calls } }
    var latest: AssistantChatSnapshot? {
        state.withLock { state in
            for call in state.calls.reversed() {
                switch call {
                case .present(let snapshot), .update(let snapshot): return snapshot
                case .dismiss: continue
                }
            }
            return nil
        }
    }
    var presentCount: Int { calls.filter { if case .present = $0 { return true } else { return false } }.count }
    var dismissCount: Int { calls.filter { $0 == .dismiss }.count }

    func holdDismissals() { state.withLock { $0.holdDismiss = true } }

    /// Suspends until `dismissAssistant` has been called (and is being held).
    func waitForDismissStarted() async {
        await waiters.wait { [state] in state.withLock { $0.dismissStarted } }
    }

    func releaseDismiss() {
        let gate = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.holdDismiss = false
            defer { state.dismissGate = nil }
            return state.dismissGate
        }
        gate?.resume()
    }

    /// Suspends until the latest presented snapshot satisfies `condition`; returns it (or the
    /// latest one if the test was cancelled first).
    @discardableResult
    func waitForSnapshot(_ condition: @escaping @Sendable (AssistantChatSnapshot) -> Bool) async
        -> AssistantChatSnapshot?
    {
        await waiters.wait { [self] in latest.map(condition) ?? false }
        return latest
    }

    func presentAssistant(_ chat: AssistantChatSnapshot) async { record(.present(chat), snapshot: chat) }
    func updateAssistant(_ chat: AssistantChatSnapshot) async { record(.update(chat), snapshot: chat) }

    func dismissAssistant() async {
        order.append("dismiss")
        let hold = state.withLock { state -> Bool in
            state.calls.append(.dismiss)
            state.dismissStarted = true
            return state.holdDismiss
        }
        waiters.recheck()
        if hold {
            await withCheckedContinuation { continuation in
                let released = state.withLock { state -> Bool in
                    if !state.holdDismiss { return true }
                    state.dismissGate = continuation
                    return false
                }
                if released { continuation.resume() }
            }
        }
        order.append("dismissed")
    }

    private func record(_ call: Call, snapshot: AssistantChatSnapshot) {
        state.withLock { $0.calls.append(call) }
        waiters.recheck()
    }
}

/// An append-only log of host-side events, shared between presenter and handler.
final class OrderLog: Sendable {
    private let entries = Locked<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// An action handler that records calls; `refuse` lists action names it cannot handle.
final class RecordingHandler: AssistantActionHandler {
    private let handled = Locked<[AssistantAction]>([])
    private let refused: Set<String>
    let order: OrderLog

    init(order: OrderLog = OrderLog(), refuse: Set<String> = []) {
        self.order = order
        self.refused = refuse
    }

    var actions: [AssistantAction] { handled.withLock { $0 } }

    func canHandle(_ action: AssistantAction) -> Bool { !refused.contains(action.name) }

    func handle(_ action: AssistantAction) async {
        order.append("handle \(action.name)")
        handled.withLock { $0.append(action) }
    }
}

/// A builder whose rendering is one line per product plus a title line.
struct LineCountBuilder: AssistantProductBlockBuilder {
    struct Rendering: AssistantProductBlockRendering {
        let height: Int
    }

    func build(block: AssistantProductBlock, layout: AssistantProductLayout) -> any AssistantProductBlockRendering {
        Rendering(height: 1 + max(1, block.products.count))
    }
}
