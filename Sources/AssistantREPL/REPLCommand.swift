import ShoppingAssistant

/// One REPL command, declared once: its name, aliases, argument synopsis, help line, the
/// words Tab offers for its argument, and the code it runs. `REPLCommandTable` reads
/// nothing else to dispatch a line, print `:help` or complete a word.
struct REPLCommand: Sendable {
    /// What a handler asks the dispatcher to do next.
    enum Outcome: Sendable, Hashable {
        /// Read the next line.
        case done
        /// Leave the REPL.
        case quit
        /// The argument was not usable: print the usage line, with `note` in parentheses.
        case usage(note: String? = nil)
    }

    /// Runs the command in `session` with the text after the command word (trimmed; empty
    /// when there is none).
    typealias Handler = @Sendable (_ session: REPLSession, _ argument: String) async -> Outcome

    let name: String
    let aliases: [String]
    /// The arguments as `:help` shows them, e.g. `N [twice]`; empty for none.
    let arguments: String
    let summary: String
    /// What Tab offers for the first argument.
    let completions: [String]
    let handler: Handler

    init(
        _ name: String, _ arguments: String = "", _ summary: String, aliases: [String] = [],
        completions: [String] = [], handler: @escaping Handler
    ) {
        self.name = name
        self.aliases = aliases
        self.arguments = arguments
        self.summary = summary
        self.completions = completions
        self.handler = handler
    }

    /// A command that takes no argument (any text after it is ignored) and always succeeds.
    static func plain(
        _ name: String, _ summary: String, run: @escaping @Sendable (_ session: REPLSession) async -> Void
    ) -> REPLCommand {
        REPLCommand(name, "", summary) { session, _ in
            await run(session)
            return .done
        }
    }

    /// A command that goes to the app screen its required argument names.
    static func screen(
        _ name: String, _ arguments: String, _ summary: String, page: @escaping @Sendable (String) -> PageContext
    ) -> REPLCommand {
        REPLCommand(name, arguments, summary) { session, argument in
            guard !argument.isEmpty else { return .usage() }
            await session.host.show(page(argument))
            return .done
        }
    }

    /// The command as typed with its arguments: `:tap N [twice]`.
    var usage: String { ":" + name + (arguments.isEmpty ? "" : " " + arguments) }

    /// Whether `word` (without the `:`) names this command.
    func answers(to word: String) -> Bool { word == name || aliases.contains(word) }
}
