import DemoStore
import ShoppingAssistant

/// The REPL's commands and how a `:command argument` line reaches one. Dispatch, `:help`, Tab
/// completion and the argument hints all read the same rows, so a command cannot be listed
/// without running or run without being listed.
///
/// A command word is found as psql and redis-cli find theirs: in any case, and by any prefix
/// that names one command only (`:pro` is `:product`; `:quit` needs its full name or an alias).
/// A word that names none gets the commands it is closest to ("did you mean").
struct REPLCommandTable: Sendable {
    let commands: [REPLCommand]

    init(_ commands: [REPLCommand]) {
        self.commands = commands
    }

    /// This table with `more` commands after its own.
    func appending(_ more: [REPLCommand]) -> REPLCommandTable {
        REPLCommandTable(commands + more)
    }

    /// What a command word (without the `:`) names.
    enum Resolution {
        case command(REPLCommand)
        /// A prefix of several commands' names.
        case ambiguous([REPLCommand])
        /// No command; the names it is closest to, if any are close.
        case unknown(closest: [String])
    }

    /// The command `word` (without the `:`) names by name or alias, in any case; nil for a
    /// prefix or anything else.
    func find(_ word: String) -> REPLCommand? {
        commands.first { $0.answers(to: word) }
    }

    /// The command `word` names by name, alias or unique prefix, in any case.
    func resolve(_ word: String) -> Resolution {
        let word = word.lowercased()
        if let exact = find(word) { return .command(exact) }
        guard !word.isEmpty else { return .unknown(closest: []) }
        let prefixed = commands.filter { command in
            !command.needsFullName && command.words.contains { $0.hasPrefix(word) }
        }
        if prefixed.count == 1 { return .command(prefixed[0]) }
        if prefixed.count > 1 { return .ambiguous(prefixed) }
        return .unknown(closest: closest(to: word))
    }

    /// Names within two edits of `word` (one for a word of three letters; none for shorter words
    /// or anything that does not start with a letter, which no typo makes), nearest first.
    private func closest(to word: String) -> [String] {
        guard word.count >= 3, word.first?.isLetter == true else { return [] }
        let limit = word.count == 3 ? 1 : 2
        // Two edits from no name is a word longer than every name by more than two: a pasted
        // paragraph costs nothing here.
        let words = commands.flatMap(\.words)
        guard word.count <= (words.map(\.count).max() ?? 0) + limit else { return [] }
        let scored = words.map { ($0, EditDistance.between(word, $0)) }.filter { $0.1 <= limit }
        guard let best = scored.map(\.1).min() else { return [] }
        return scored.filter { $0.1 == best }.map(\.0).prefix(3).map { ":" + $0 }
    }

    /// Runs a line that starts with `:`; returns false to quit.
    func dispatch(_ line: String, in session: REPLSession) async -> Bool {
        let parts = line.dropFirst().split(separator: " ", maxSplits: 1).map(String.init)
        let word = parts.first ?? ""
        let argument = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        let command: REPLCommand
        switch resolve(word) {
        case .command(let found):
            command = found
        case .ambiguous(let candidates):
            let names = candidates.map { ":" + $0.name }.sorted().joined(separator: ", ")
            session.output.line(.warning, ":\(TerminalSanitizer.sanitize(word)) could be \(names) — type more of it")
            return true
        case .unknown(let closest):
            let name = word.isEmpty ? "':' alone" : ":" + TerminalSanitizer.sanitize(word)
            var text = "unknown command \(name) — "
            text += closest.isEmpty ? ":help lists them" : "did you mean \(closest.joined(separator: " or "))?"
            if await session.isChatOpen {
                text += "; a message that starts with ':' is sent as :\(TerminalSanitizer.sanitize(line))"
            }
            session.output.line(.error, text)
            return true
        }
        // A word after a command that takes none is a slip, not a wish: `:quit now` must not quit.
        let result: REPLCommand.Outcome
        if command.arguments.isEmpty, !argument.isEmpty {
            result = .usage(note: "it takes no argument")
        } else {
            result = await command.handler(session, argument)
        }
        switch result {
        case .done: return true
        case .quit: return false
        case .usage(let note):
            session.output.line(.warning, "usage: \(command.usage)" + (note.map { " (\($0))" } ?? ""))
            return true
        }
    }

    // MARK: - Help

    /// `:help` with no argument: the commands by group, each with its synopsis and summary, and
    /// how lines that are not commands behave. `messagesWait`: whether the session waits for a
    /// reply before the next line (a pipe, a transcript), where ` &` also applies to messages.
    func helpLines(messagesWait: Bool) -> [String] {
        let width = commands.map { $0.usage.count }.max() ?? 10
        var lines: [String] = []
        for group in REPLCommand.Group.allCases {
            let members = commands.filter { $0.group == group }
            guard !members.isEmpty else { continue }
            lines.append(group.rawValue + ":")
            lines += members.map { command in
                "  " + command.usage.padding(toLength: width, withPad: " ", startingAt: 0) + "   "
                    + Self.summary(command)
            }
        }
        return lines + [
            "Anything not starting with ':' is a chat message; '::text' sends ':text' ('::exit' sends the word).",
            messagesWait
                ? "End a line with ' &' to run it without waiting for it: a command, or a message."
                : "End a :command with ' &' to run it without waiting (a message never waits: its '&' is sent).",
            ":help COMMAND shows its syntax, an example and related commands; a unique prefix runs one (:pro).",
        ]
    }

    /// `:help COMMAND`: its synopsis, summary, example, group and related commands; for a word
    /// that names none, what it could be.
    func help(for word: String) -> [String] {
        let word = word.hasPrefix(":") ? String(word.dropFirst()) : word
        switch resolve(word) {
        case .command(let command):
            var lines = [command.usage, "  " + command.summary] + command.notes.map { "  " + $0 }
            lines.append("  example: " + command.example)
            if !command.aliases.isEmpty {
                lines.append("  also:    " + command.aliases.map { ":" + $0 }.joined(separator: ", "))
            }
            if !command.related.isEmpty {
                lines.append("  related: " + command.related.map { ":" + $0 }.joined(separator: ", "))
            }
            lines.append("  group:   " + command.group.rawValue)
            return lines
        case .ambiguous(let candidates):
            let names = candidates.map { ":" + $0.name }.sorted().joined(separator: ", ")
            return [":\(TerminalSanitizer.sanitize(word)) could be \(names)"]
        case .unknown(let closest):
            let name = ":" + TerminalSanitizer.sanitize(word)
            return closest.isEmpty
                ? ["no command \(name) — :help lists them"]
                : ["no command \(name) — did you mean \(closest.joined(separator: " or "))?"]
        }
    }

    /// The help line's text: the summary, and the aliases.
    static func summary(_ command: REPLCommand) -> String {
        guard !command.aliases.isEmpty else { return command.summary }
        return command.summary + " (also " + command.aliases.map { ":" + $0 }.joined(separator: ", ") + ")"
    }

    // MARK: - Typing

    /// Tab completion: the command names, then each command's argument words; `:help` takes
    /// the command names.
    var completion: CommandCompletion {
        let names = commands.map(\.name)
        return CommandCompletion(
            commands.map { command in
                var completion = CommandCompletion.Command(
                    ":" + command.name, positions: command.name == "help" ? [names] : command.completions)
                completion.subcommands = command.subcompletions
                return completion
            })
    }

    /// The hint for a line being typed: the arguments a command takes that are not typed yet
    /// (`N [twice]` after `:tap `, `[twice]` after `:tap 2`); empty for anything else.
    func hint(for line: String) -> String {
        guard line.hasPrefix(":"), let space = line.firstIndex(of: " ") else { return "" }
        guard case .command(let command) = resolve(String(line[line.index(after: line.startIndex)..<space])),
            !command.arguments.isEmpty
        else { return "" }
        let typed = line[space...].split(separator: " ").count
        return command.arguments.split(separator: " ").dropFirst(typed).joined(separator: " ")
    }
}

// MARK: - The commands

extension REPLCommandTable {
    /// Every command of the REPL, in `:help` order within each group.
    static let standard = REPLCommandTable([
        // The host app's screens (E).
        .plain("home", "go to the home screen", group: .screens, related: ["product", "open"]) {
            await $0.host.show(REPLHost.homePage)
        },
        .screen("product", "SKU", "go to a product page", example: ":product KIT-1001", page: REPLHost.productPage),
        .screen(
            "category", "PATH", "go to a category (e.g. Посуда/Кружки)", example: ":category Посуда/Кружки",
            page: REPLHost.categoryPage),
        .screen("search", "QUERY", "go to search results", example: ":search термокружка", page: REPLHost.searchPage),
        REPLCommand(
            "other", "LOCATION", "go to any other screen", group: .screens, example: ":other app://profile",
            related: ["home"]
        ) { session, location in
            await session.host.show(REPLHost.otherPage(location))
            return .done
        },
        REPLCommand(
            "prepare", "[SELECTOR]", "call prepareAssistant on this screen directly and show the result",
            group: .screens, example: ":prepare shopping-assistant", related: ["open", "state"]
        ) { session, selector in
            await session.host.prepare(selector: selector.isEmpty ? nil : selector)
            return .done
        },
        // The chat screen.
        .plain("open", "tap the entry button: open the chat", group: .chat, related: ["close", "product"]) {
            await $0.host.tapEntry()
        },
        .plain("close", "close the chat (a sent message is not cancelled)", group: .chat, related: ["open", "new"]) {
            await $0.closeChat()
        },
        REPLCommand(
            "s", "N", "send suggest N", group: .chat, example: ":s 2", related: ["retry", "new"], aliases: ["suggest"]
        ) { session, argument in
            guard let number = Int(argument), number >= 1 else { return .usage() }
            await session.sendSuggest(number: number)
            return .done
        },
        .plain(
            "retry", "send the last failed message again (same ID)", group: .chat, related: ["s", "state"]
        ) { await $0.retry() },
        .plain("new", "start a new chat", group: .chat, related: ["close", "open"]) { await $0.startNewChat() },
        REPLCommand(
            "tap", "N [twice]", "tap product card N of the carousel on screen (twice: a double tap)", group: .chat,
            example: ":tap 2", related: ["left", "right", "b"], completions: [[], ["twice"]]
        ) { session, argument in
            let words = argument.split(separator: " ")
            guard let first = words.first, let number = Int(first),
                words.count == 1 || (words.count == 2 && words[1] == "twice"),
                await session.tap(card: number, twice: words.count == 2)
            else { return .usage(note: "a card number of the carousel on screen") }
            return .done
        },
        REPLCommand(
            "b", "N", "press reply button N of the latest reply", group: .chat, example: ":b 1", related: ["tap"],
            aliases: ["button"]
        ) { session, argument in
            guard let number = Int(argument), await session.pressButton(number: number) else {
                return .usage(note: "a button of the latest reply")
            }
            return .done
        },
        .plain("left", "scroll the latest carousel left", group: .chat, related: ["right", "tap"]) {
            await $0.scroll(by: -1)
        },
        .plain("right", "scroll the latest carousel right", group: .chat, related: ["left", "tap"]) {
            await $0.scroll(by: 1)
        },
        .plain("like", "rate the latest reply: like", group: .chat, related: ["dislike"]) { await $0.rate(.like) },
        .plain("dislike", "rate the latest reply: dislike", group: .chat, related: ["like"]) {
            await $0.rate(.dislike)
        },
        REPLCommand(
            "width", "N|auto", "lay the chat out for N columns (a resize or rotation); auto follows the terminal",
            group: .chat, example: ":width 40", related: ["right"], completions: [["auto"]]
        ) { session, argument in
            if argument.lowercased() == "auto" {
                await session.followTerminalWidth()
                return .done
            }
            guard let width = Int(argument), REPLSettings.widths.contains(width) else {
                return .usage(note: "N from \(REPLSettings.widths.lowerBound) to \(REPLSettings.widths.upperBound)")
            }
            await session.setWidth(width)
            return .done
        },
        // Identity, locks and the window: the host app again.
        REPLCommand(
            "user", "ID [SESSION]", "log in as another user (identity change; the screen shows again)", group: .host,
            example: ":user alice", related: ["logout", "state"]
        ) { session, argument in
            let ids = argument.split(separator: " ").map(String.init)
            guard let id = ids.first, ids.count <= 2 else { return .usage() }
            await session.host.logIn(id, sessionID: ids.count > 1 ? ids[1] : nil)
            return .done
        },
        .plain(
            "logout", "forget the user: a new anonymous identity (the screen shows again)", group: .host,
            related: ["user"]
        ) { await $0.host.logOut() },
        REPLCommand(
            "restore-uid", "UID", "hand back a uid the app kept elsewhere (restoreUserId; an identity change)",
            group: .host, example: ":restore-uid demo-u-7", related: ["logout", "state"]
        ) { session, argument in
            guard !argument.isEmpty, !argument.contains(" ") else { return .usage() }
            await session.host.restoreUserId(argument)
            return .done
        },
        .plain("lock", "take the app's presentation lock", group: .host, related: ["unlock", "state"]) {
            await $0.host.lockPresentation()
        },
        .plain("unlock", "release the app's presentation lock", group: .host, related: ["lock"]) {
            await $0.host.unlockPresentation()
        },
        .plain("background", "send the window to the background", group: .host, related: ["foreground"]) {
            await $0.host.setForeground(false)
        },
        .plain("foreground", "bring the window back", group: .host, related: ["background"]) {
            await $0.host.setForeground(true)
        },
        // Time, inspection and the demo store.
        REPLCommand(
            "wait", "DURATION", "let time pass (10s, 1.5s, 250ms): timers and slow replies; Ctrl-C stops it",
            group: .inspection, example: ":wait 2s", related: ["state", "log"]
        ) { session, argument in
            guard let duration = DurationText.parse(argument) else { return .usage() }
            await session.wait(duration)
            return .done
        },
        REPLCommand(
            "together", "CMD; CMD…", "run commands at one moment, in order, as an app doing several things at once",
            group: .inspection, example: ":together :widget recommendations; :logout", related: ["widget", "wait"]
        ) { session, argument in
            await session.together(argument)
        },
        .plain("state", "inspect preparation, dialog, locks and identity", group: .inspection, related: ["log"]) {
            await $0.showState()
        },
        .plain(
            "log", "show app and lifecycle events and tracking requests, with eventTime and (queued) retries",
            group: .inspection, related: ["state", "queue"]
        ) {
            await $0.showLog()
        },
        REPLCommand(
            "fault", "NAME [once|sticky]", "demo store: inject a fault (:fault alone lists them)", group: .inspection,
            example: ":fault rate-limited", related: ["clear-faults", "retry"],
            completions: [DemoFault.allCases.map(\.rawValue), DemoFaultMode.allCases.map(\.rawValue)]
        ) { session, argument in
            session.armFault(argument)
            return .done
        },
        .plain("clear-faults", "demo store: remove every fault", group: .inspection, related: ["fault"]) {
            $0.clearFaults()
        },
        // The delivery queue, the network and restarts (DL).
        REPLCommand(
            "queue", "[clear]",
            "show what waits for delivery: kind, age, server failures, status, next try; clear empties it",
            group: .delivery, example: ":queue", related: ["flush", "offline", "log"], completions: [["clear"]],
            notes: [
                "persisting: being written · waiting: for its first attempt's turn",
                "sending: its first attempt, retries included · queued: for the drain",
                "draining: on the wire from the queue",
                "only server failures (408, 429, 5xx) count; the 5th drops the entry",
            ]
        ) { session, argument in
            switch argument {
            case "": await session.showQueue()
            case "clear": await session.clearQueue()
            default: return .usage()
            }
            return .done
        },
        .plain(
            "flush", "try everything queued now, and say how much is left", group: .delivery,
            related: ["queue", "online"]
        ) { await $0.flushQueue() },
        .plain(
            "offline", "make every request of both services fail to connect, until :online", group: .delivery,
            related: ["online", "queue"]
        ) { $0.setOffline(true) },
        .plain("online", "let requests through again after :offline", group: .delivery, related: ["offline", "flush"]) {
            $0.setOffline(false)
        },
        .plain(
            "restart", "restart the engine on the same stores, as after a process restart", group: .delivery,
            related: ["queue", "flush"]
        ) { await $0.restart() },
        // The REPL itself.
        REPLCommand(
            "help", "[COMMAND]", "list commands, or explain one", group: .repl, example: ":help tap",
            related: ["quit"], aliases: ["h", "?"]
        ) { session, argument in
            session.help(argument)
            return .done
        },
        REPLCommand(
            "quit", "", "leave", group: .repl, example: ":quit", related: ["close"], aliases: ["exit", "q"],
            needsFullName: true
        ) { _, _ in .quit },
    ]).appending(shopCommands)
}
