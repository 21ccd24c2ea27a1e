import ShoppingAssistant

/// One REPL command, declared once: its name, aliases, argument synopsis, help (summary, group,
/// example, related commands), the words Tab offers for each argument, and the code it runs.
/// `REPLCommandTable` reads nothing else to dispatch a line, print `:help`, complete a word or
/// hint the arguments while they are typed.
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

    /// Where `:help` lists a command, as redis-cli groups its commands.
    enum Group: String, Sendable, Hashable, CaseIterable {
        case screens = "The app's screens"
        case chat = "The chat"
        case shop = "The shop: cart, purchase, account, push permission, events, widgets"
        case host = "Identity, locks and the window"
        case inspection = "Time, inspection and the demo store"
        case delivery = "The delivery queue, the network and restarts"
        case repl = "The REPL"
    }

    /// Runs the command in `session` with the text after the command word (trimmed; empty
    /// when there is none).
    typealias Handler = @Sendable (_ session: REPLSession, _ argument: String) async -> Outcome

    let name: String
    let aliases: [String]
    /// The arguments as `:help` shows them, e.g. `N [twice]`; empty for none.
    let arguments: String
    let summary: String
    let group: Group
    /// One line as a user would type it, for `:help COMMAND`.
    let example: String
    /// Commands worth knowing next to this one, without their `:`.
    let related: [String]
    /// What Tab offers for each argument in turn: `completions[0]` for the first.
    let completions: [[String]]
    /// What Tab offers after a first argument that names a subcommand (`:cart add SKU`).
    let subcompletions: [String: [[String]]]
    /// Whether a quit could happen by accident: such a command answers only to its full name or
    /// an alias, never to a prefix.
    let needsFullName: Bool
    /// What `:help COMMAND` explains beyond the summary (the words its output uses).
    let notes: [String]
    let handler: Handler

    init(
        _ name: String, _ arguments: String = "", _ summary: String, group: Group, example: String? = nil,
        related: [String] = [], aliases: [String] = [], completions: [[String]] = [],
        subcompletions: [String: [[String]]] = [:], needsFullName: Bool = false, notes: [String] = [],
        handler: @escaping Handler
    ) {
        self.name = name
        self.aliases = aliases
        self.arguments = arguments
        self.summary = summary
        self.group = group
        self.example = example ?? ":" + name
        self.related = related
        self.completions = completions
        self.subcompletions = subcompletions
        self.needsFullName = needsFullName
        self.notes = notes
        self.handler = handler
    }

    /// A command that takes no argument (the table refuses one) and always succeeds.
    static func plain(
        _ name: String, _ summary: String, group: Group, related: [String] = [],
        run: @escaping @Sendable (_ session: REPLSession) async -> Void
    ) -> REPLCommand {
        REPLCommand(name, "", summary, group: group, related: related) { session, _ in
            await run(session)
            return .done
        }
    }

    /// A command that goes to the app screen its required argument names.
    static func screen(
        _ name: String, _ arguments: String, _ summary: String, example: String,
        page: @escaping @Sendable (String) -> PageContext
    ) -> REPLCommand {
        REPLCommand(
            name, arguments, summary, group: .screens, example: example, related: ["open", "prepare", "home"]
        ) { session, argument in
            guard !argument.isEmpty else { return .usage() }
            await session.host.show(page(argument))
            return .done
        }
    }

    /// The command as typed with its arguments: `:tap N [twice]`.
    var usage: String { ":" + name + (arguments.isEmpty ? "" : " " + arguments) }

    /// The names this command answers to, without the `:`.
    var words: [String] { [name] + aliases }

    /// Whether `word` (without the `:`) names this command, in any case.
    func answers(to word: String) -> Bool {
        let word = word.lowercased()
        return words.contains(word)
    }
}
