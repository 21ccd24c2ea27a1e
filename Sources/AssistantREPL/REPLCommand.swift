import DemoStore

/// The REPL's commands, declared once: parsing, `:help` and tab completion all read this table.
struct REPLCommand: Sendable, Hashable {
    let name: String
    let arguments: String
    let summary: String
    let aliases: [String]

    init(_ name: String, _ arguments: String = "", _ summary: String, aliases: [String] = []) {
        self.name = name
        self.arguments = arguments
        self.summary = summary
        self.aliases = aliases
    }

    static let all: [REPLCommand] = [
        REPLCommand("help", "[COMMAND]", "list commands, or explain one"),
        REPLCommand("home", "", "go to the home screen"),
        REPLCommand("product", "SKU", "go to a product page"),
        REPLCommand("category", "PATH", "go to a category (e.g. Посуда/Кружки)"),
        REPLCommand("search", "QUERY", "go to search results"),
        REPLCommand("cart", "SKU…", "go to the cart"),
        REPLCommand("other", "LOCATION", "go to any other screen"),
        REPLCommand("open", "", "tap the entry button: open the chat"),
        REPLCommand("close", "", "close the chat (a sent message is not cancelled)"),
        REPLCommand("prepare", "[SELECTOR]", "call prepareAssistant on this screen directly and show the result"),
        REPLCommand("s", "N", "send suggest N", aliases: ["suggest"]),
        REPLCommand("retry", "", "send the last failed message again (same ID)"),
        REPLCommand("new", "", "start a new chat"),
        REPLCommand("tap", "N [twice]", "tap product card N of the carousel on screen (twice: a double tap)"),
        REPLCommand("b", "N", "press reply button N of the latest reply", aliases: ["button"]),
        REPLCommand("left", "", "scroll the latest carousel left"),
        REPLCommand("right", "", "scroll the latest carousel right"),
        REPLCommand("like", "", "rate the latest reply: like"),
        REPLCommand("dislike", "", "rate the latest reply: dislike"),
        REPLCommand("user", "ID [SESSION]", "log in as another user (identity change)"),
        REPLCommand("logout", "", "forget the user: a new anonymous identity"),
        REPLCommand("lock", "", "take the app's presentation lock"),
        REPLCommand("unlock", "", "release the app's presentation lock"),
        REPLCommand("width", "N", "lay the chat out for N columns (a resize or rotation)"),
        REPLCommand("background", "", "send the window to the background"),
        REPLCommand("foreground", "", "bring the window back"),
        REPLCommand("wait", "DURATION", "let time pass (10s, 1.5s, 250ms): timers and slow replies"),
        REPLCommand("state", "", "inspect preparation, dialog, locks and identity"),
        REPLCommand("log", "", "show lifecycle events and tracking requests"),
        REPLCommand("fault", "NAME [once|sticky]", "demo store: inject a fault (:fault alone lists them)"),
        REPLCommand("clear-faults", "", "demo store: remove every fault"),
        REPLCommand("quit", "", "leave", aliases: ["exit", "q"]),
    ]

    static func find(_ word: String) -> REPLCommand? {
        all.first { $0.name == word || $0.aliases.contains(word) }
    }

    static var helpText: String {
        let width = all.map { $0.name.count + $0.arguments.count + 2 }.max() ?? 10
        let rows = all.map { command -> String in
            let usage = ":" + command.name + (command.arguments.isEmpty ? "" : " " + command.arguments)
            return "  " + usage.padding(toLength: width + 1, withPad: " ", startingAt: 0) + "  " + command.summary
        }
        let notes = [
            "Anything not starting with ':' is a chat message. End a line with ' &' to run it without waiting."
        ]
        return (["Commands:"] + rows + notes).joined(separator: "\n")
    }
}

extension REPLSession {
    /// Tab completion from the command table.
    public static var completion: CommandCompletion {
        CommandCompletion(
            REPLCommand.all.map { command in
                CommandCompletion.Command(
                    ":" + command.name,
                    arguments: command.name == "fault" ? DemoFault.allCases.map(\.rawValue) : [])
            })
    }
}
