/// Settings of one REPL session.
package struct REPLSettings: Sendable, Hashable {
    /// The terminal widths the chat can be laid out for, in columns.
    package static let widths = 20...1000

    package var width: Int
    package var entrySelector: String
    package var assistantSelector: String
    /// Interactive sessions print replies as they arrive and run impression timers on real
    /// time; the others wait for each command to finish, so their output is deterministic.
    package var interactive: Bool

    package init(width: Int, entrySelector: String, assistantSelector: String, interactive: Bool) {
        self.width = width
        self.entrySelector = entrySelector
        self.assistantSelector = assistantSelector
        self.interactive = interactive
    }
}
