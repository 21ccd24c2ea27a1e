/// Settings of one REPL session.
package struct REPLSettings: Sendable, Hashable {
    /// The terminal widths the chat can be laid out for, in columns.
    package static let widths = 20...1000

    /// The width the chat is laid out for at the start.
    package var width: Int
    /// The terminal's own width when `width` was given instead (`--width` in a terminal): the
    /// chat keeps `width` until `:width auto` goes to this one and follows the terminal from
    /// then on. nil when the chat follows the terminal from the start, or there is none.
    package var terminalWidth: Int?
    package var entrySelector: String
    package var assistantSelector: String
    /// Interactive sessions print replies as they arrive and run impression timers on real
    /// time; the others wait for each command to finish, so their output is deterministic.
    package var interactive: Bool
    /// Whether the session repeats each input line after its prompt: yes when nothing else
    /// shows it (piped input); a terminal's line editor already has. A recorded terminal
    /// session waits for each command like a piped one, but does not echo.
    package var echoesInput: Bool

    package init(
        width: Int, terminalWidth: Int? = nil, entrySelector: String, assistantSelector: String, interactive: Bool,
        echoesInput: Bool? = nil
    ) {
        self.width = width
        self.terminalWidth = terminalWidth
        self.entrySelector = entrySelector
        self.assistantSelector = assistantSelector
        self.interactive = interactive
        self.echoesInput = echoesInput ?? !interactive
    }
}
