// What a host callback may do (H1), for every protocol below: call any public method of the
// engine and await it. None can deadlock, and none waits for the callback that made it.
//
// - A call made from inside an async callback (`presentAssistant`, `updateAssistant`,
//   `dismissAssistant`, `handle`, the in-app campaign handler) — or from a `Task { }` it
//   starts, which inherits the mark — gets its documented result as soon as the engine has
//   decided it: `openAssistant` returns `.opened` without waiting for the present,
//   `closeAssistant` and a tap return before the dismissal and the hand-over, `trackView`
//   before its campaigns are shown, `waitForReply` once the message has settled. What the call
//   causes on the host follows once the callback has returned.
// - The synchronous callbacks (`build`, `canHandle`, the lock listener) cannot await; they may
//   start a task that calls the engine.
// - Outside the promise: a callback that starts `Task.detached { }` (which inherits nothing)
//   and waits for it is an ordinary caller; if that call waits for this very callback, only
//   cancelling it (or `shutdown()`) ends the wait.
//
// Callbacks run outside the engine's ordering, each channel in order: the presenter gets one
// call at a time for the chat on screen (present, then updates, then dismiss); hand-overs come
// one at a time after the close; in-app campaigns one at a time.

/// Renders a product block for the host (PR2, PR3). The REPL returns terminal lines; a GUI
/// host would return its own view description. The engine only checks that the height is finite.
///
/// Called from the engine's actor, so implementations must be `Sendable` and must not block. A
/// builder may start a task that calls the engine back (H1).
public protocol AssistantProductBlockBuilder: Sendable {
    /// Builds the host's view of `block` at exactly `layout.availableWidth`, with a finite height
    /// (PR2, PR3). Taps are reported only when `layout.isInteractionEnabled` and the product
    /// `canOpen` (PR7).
    func build(block: AssistantProductBlock, layout: AssistantProductLayout) -> any AssistantProductBlockRendering
}

/// What a builder produced. `height` is in the host's units (lines for a terminal).
public protocol AssistantProductBlockRendering: Sendable {
    /// The rendering's height in host units; the engine rejects zero or unbounded heights (PR3).
    var height: Int { get }
}

/// Performs the navigation the assistant asks for (AC1–AC5).
///
/// `canHandle` is synchronous and must do no I/O and no navigation (AC4). `handle` is called
/// exactly once per accepted action, and only after the chat has fully closed (PR10, AC5), one
/// hand-over at a time. `handle` may call and await any engine method — navigate and report the
/// new screen's page view, open the chat again — and nothing waits on itself (H1).
public protocol AssistantActionHandler: Sendable {
    /// Whether the host can perform `action`; an action it cannot is not offered (AC4). Called
    /// synchronously from the engine's actor: no I/O, no navigation.
    func canHandle(_ action: AssistantAction) -> Bool
    /// Performs the navigation, once per accepted action and only after the chat has closed
    /// (PR10, AC5). It may call the engine back and await it (H1).
    func handle(_ action: AssistantAction) async
}

/// Whether a presenter can show the chat right now (O3).
public enum AssistantPresenterAvailability: Sendable, Hashable {
    /// The presenter can show the chat now.
    case available
    /// The presenter's screen is gone; opening returns `.invalidPresenter` (O3).
    case closed
    /// The presenter exists but is not on screen (a background app); opening returns
    /// `.invalidPresenter` (O3).
    case notVisible
    /// The presenter is showing something the chat cannot sit on; opening returns
    /// `.invalidPresenter` (O3).
    case busy
}

/// Something that can show the chat screen: the Linux stand-in for the seed's
/// `UIViewController` (§ 0). The engine owns the chat model and pushes snapshots; the
/// presenter only renders them.
///
/// The engine keeps a weak reference: a presenter that is deallocated counts as dismissed
/// (O5). The presenter gets one call at a time, in order: while a call is under way a newer
/// snapshot waits, and only the newest is delivered next; a close asked for meanwhile dismisses
/// right after it. Each call may call and await any engine method (H1): the engine never makes
/// such a call wait for the presenter.
public protocol AssistantPresenter: AnyObject, Sendable {
    /// Read by `openAssistant` before presenting (O3); must answer synchronously and cheaply.
    var availability: AssistantPresenterAvailability { get }
    /// Show the chat screen with its first snapshot.
    func presentAssistant(_ chat: AssistantChatSnapshot) async
    /// A new snapshot of the chat that is on screen.
    func updateAssistant(_ chat: AssistantChatSnapshot) async
    /// Remove the chat screen. Called once per presentation, by `closeAssistant` or a tap.
    func dismissAssistant() async
}
