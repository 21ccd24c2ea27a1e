/// Renders a product block for the host (PR2, PR3). The REPL returns terminal lines; a GUI
/// host would return its own view description. The engine only checks that the height is finite.
///
/// Called from the engine's actor, so implementations must be `Sendable` and must not block.
public protocol AssistantProductBlockBuilder: Sendable {
    func build(block: AssistantProductBlock, layout: AssistantProductLayout) -> any AssistantProductBlockRendering
}

/// What a builder produced. `height` is in the host's units (lines for a terminal).
public protocol AssistantProductBlockRendering: Sendable {
    var height: Int { get }
}

/// Performs the navigation the assistant asks for (AC1–AC5).
///
/// `canHandle` is synchronous and must do no I/O and no navigation (AC4). `handle` is called
/// exactly once per accepted action, and only after the chat has fully closed (PR10, AC5).
public protocol AssistantActionHandler: Sendable {
    func canHandle(_ action: AssistantAction) -> Bool
    func handle(_ action: AssistantAction) async
}

/// Whether a presenter can show the chat right now (O3).
public enum AssistantPresenterAvailability: Sendable, Hashable {
    case available
    case closed
    case notVisible
    case busy
}

/// Something that can show the chat screen: the Linux stand-in for the seed's
/// `UIViewController` (§ 0). The engine owns the chat model and pushes snapshots; the
/// presenter only renders them.
///
/// The engine keeps a weak reference: a presenter that is deallocated counts as dismissed
/// (O5). Calls come from the engine's actor, in order, and are awaited, so a presenter sees
/// every snapshot in the order the engine produced it.
public protocol AssistantPresenter: AnyObject, Sendable {
    var availability: AssistantPresenterAvailability { get }
    /// Show the chat screen with its first snapshot.
    func presentAssistant(_ chat: AssistantChatSnapshot) async
    /// A new snapshot of the chat that is on screen.
    func updateAssistant(_ chat: AssistantChatSnapshot) async
    /// Remove the chat screen. Called once per presentation, by `closeAssistant` or a tap.
    func dismissAssistant() async
}
