import DemoStore
import ShoppingAssistant

/// The REPL's commands and how a `:command argument` line reaches one. Dispatch, `:help` and
/// Tab completion all read the same rows, so a command cannot be listed without running or
/// run without being listed.
struct REPLCommandTable: Sendable {
    let commands: [REPLCommand]

    init(_ commands: [REPLCommand]) {
        self.commands = commands
    }

    /// The command `word` (without the `:`) names, by name or alias.
    func find(_ word: String) -> REPLCommand? {
        commands.first { $0.answers(to: word) }
    }

    /// Runs a line that starts with `:`; returns false to quit.
    func dispatch(_ line: String, in session: REPLSession) async -> Bool {
        let parts = line.dropFirst().split(separator: " ", maxSplits: 1).map(String.init)
        let word = parts.first ?? ""
        let argument = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        guard let command = find(word) else {
            let name = word.isEmpty ? "':' alone" : ":" + TerminalSanitizer.sanitize(word)
            session.output.line(.error, "unknown command \(name) — :help lists them")
            return true
        }
        switch await command.handler(session, argument) {
        case .done: return true
        case .quit: return false
        case .usage(let note):
            session.output.line(.warning, "usage: \(command.usage)" + (note.map { " (\($0))" } ?? ""))
            return true
        }
    }

    /// `:help` with no argument: every command with its synopsis and summary.
    var helpLines: [String] {
        let width = commands.map { $0.usage.count }.max() ?? 10
        let rows = commands.map { command in
            "  " + command.usage.padding(toLength: width, withPad: " ", startingAt: 0) + "   " + Self.summary(command)
        }
        let notes = [
            "Anything not starting with ':' is a chat message. End a line with ' &' to run it without waiting."
        ]
        return ["Commands:"] + rows + notes
    }

    /// `:help COMMAND`: one command, or nil when `word` names none.
    func help(for word: String) -> String? {
        let word = word.hasPrefix(":") ? String(word.dropFirst()) : word
        return find(word).map { "\($0.usage) — \(Self.summary($0))" }
    }

    /// The help line's text: the summary, and the aliases.
    static func summary(_ command: REPLCommand) -> String {
        guard !command.aliases.isEmpty else { return command.summary }
        return command.summary + " (also " + command.aliases.map { ":" + $0 }.joined(separator: ", ") + ")"
    }

    /// Tab completion: the command names, then each command's argument words.
    var completion: CommandCompletion {
        CommandCompletion(commands.map { CommandCompletion.Command(":" + $0.name, arguments: $0.completions) })
    }
}

// MARK: - The commands

extension REPLCommandTable {
    /// Every command of the REPL, in `:help` order.
    static let standard = REPLCommandTable([
        REPLCommand("help", "[COMMAND]", "list commands, or explain one") { session, argument in
            session.help(argument)
            return .done
        },
        // The host app's screens (E).
        .plain("home", "go to the home screen") { await $0.host.show(REPLHost.homePage) },
        .screen("product", "SKU", "go to a product page", page: REPLHost.productPage),
        .screen("category", "PATH", "go to a category (e.g. Посуда/Кружки)", page: REPLHost.categoryPage),
        .screen("search", "QUERY", "go to search results", page: REPLHost.searchPage),
        REPLCommand("cart", "SKU…", "go to the cart") { session, skus in
            await session.host.show(REPLHost.cartPage(skus.split(separator: " ").map(String.init)))
            return .done
        },
        REPLCommand("other", "LOCATION", "go to any other screen") { session, location in
            await session.host.show(REPLHost.otherPage(location))
            return .done
        },
        .plain("open", "tap the entry button: open the chat") { await $0.host.tapEntry() },
        // The chat screen.
        .plain("close", "close the chat (a sent message is not cancelled)") { await $0.closeChat() },
        REPLCommand("prepare", "[SELECTOR]", "call prepareAssistant on this screen directly and show the result") {
            session, selector in
            await session.host.prepare(selector: selector.isEmpty ? nil : selector)
            return .done
        },
        REPLCommand("s", "N", "send suggest N", aliases: ["suggest"]) { session, argument in
            guard let number = Int(argument), number >= 1 else { return .usage() }
            await session.sendSuggest(number: number)
            return .done
        },
        .plain("retry", "send the last failed message again (same ID)") { await $0.retry() },
        .plain("new", "start a new chat") { await $0.startNewChat() },
        REPLCommand(
            "tap", "N [twice]", "tap product card N of the carousel on screen (twice: a double tap)",
            completions: ["twice"]
        ) { session, argument in
            let words = argument.split(separator: " ")
            guard let first = words.first, let number = Int(first),
                words.count == 1 || (words.count == 2 && words[1] == "twice"),
                await session.tap(card: number, twice: words.count == 2)
            else { return .usage(note: "a card number of the carousel on screen") }
            return .done
        },
        REPLCommand("b", "N", "press reply button N of the latest reply", aliases: ["button"]) { session, argument in
            guard let number = Int(argument), await session.pressButton(number: number) else {
                return .usage(note: "a button of the latest reply")
            }
            return .done
        },
        .plain("left", "scroll the latest carousel left") { await $0.scroll(by: -1) },
        .plain("right", "scroll the latest carousel right") { await $0.scroll(by: 1) },
        .plain("like", "rate the latest reply: like") { await $0.rate(.like) },
        .plain("dislike", "rate the latest reply: dislike") { await $0.rate(.dislike) },
        // Identity, locks and the window: the host app again.
        REPLCommand("user", "ID [SESSION]", "log in as another user (identity change; the screen shows again)") {
            session, argument in
            let ids = argument.split(separator: " ").map(String.init)
            guard let id = ids.first, ids.count <= 2 else { return .usage() }
            await session.host.logIn(id, sessionID: ids.count > 1 ? ids[1] : nil)
            return .done
        },
        .plain("logout", "forget the user: a new anonymous identity (the screen shows again)") {
            await $0.host.logOut()
        },
        .plain("lock", "take the app's presentation lock") { await $0.host.lockPresentation() },
        .plain("unlock", "release the app's presentation lock") { await $0.host.unlockPresentation() },
        REPLCommand("width", "N", "lay the chat out for N columns (a resize or rotation)") { session, argument in
            guard let width = Int(argument), REPLSettings.widths.contains(width) else {
                return .usage(note: "N from \(REPLSettings.widths.lowerBound) to \(REPLSettings.widths.upperBound)")
            }
            await session.setWidth(width)
            return .done
        },
        .plain("background", "send the window to the background") { await $0.host.setForeground(false) },
        .plain("foreground", "bring the window back") { await $0.host.setForeground(true) },
        // Time, inspection and the demo store.
        REPLCommand("wait", "DURATION", "let time pass (10s, 1.5s, 250ms): timers and slow replies") {
            session, argument in
            guard let duration = TranscriptFormat.parseDuration(argument) else { return .usage() }
            await session.wait(duration)
            return .done
        },
        .plain("state", "inspect preparation, dialog, locks and identity") { await $0.showState() },
        .plain("log", "show lifecycle events and tracking requests") { await $0.showLog() },
        REPLCommand(
            "fault", "NAME [once|sticky]", "demo store: inject a fault (:fault alone lists them)",
            completions: DemoFault.allCases.map(\.rawValue)
        ) { session, argument in
            session.armFault(argument)
            return .done
        },
        .plain("clear-faults", "demo store: remove every fault") { $0.clearFaults() },
        REPLCommand("quit", "", "leave", aliases: ["exit", "q"]) { _, _ in .quit },
    ])
}
