import Foundation
import ShoppingAssistant

/// The `assistant` command's options, parsed from arguments with environment fallbacks
/// through its `OptionTable`, which drives `--help` too.
package struct CommandLineOptions: Sendable, Hashable, CustomStringConvertible {
    /// The command's name in usage lines and messages.
    package static let programName = "assistant"

    /// Gravity API key (`--api-key`, `GRAVITY_API_KEY`). Never printed: `description` and
    /// error messages redact it.
    package var apiKey: String?
    /// Gravity section (`--section`, `GRAVITY_SECTION`).
    package var section = "demo"
    /// Gravity base or proxy URL (`--gravity-url`, `GRAVITY_URL`).
    package var gravityURL: URL?
    /// Shopping API base URL (`--shopping-url`, `SHOPPING_API_URL`).
    package var shoppingURL: URL?
    /// Selector of the entry button element (`--entry-selector`).
    package var entrySelector = "assistant-entry"
    /// Selector of the assistant (`--assistant-selector`).
    package var assistantSelector = "shopping-assistant"
    /// Terminal columns to lay out for instead of the measured width (`--width`).
    package var width: Int?
    /// Engine log level (`--log-level`), the engine's own type so no mapping is needed.
    package var logLevel = AssistantLogLevel.error
    /// Transcript file to record the session into (`--record`).
    package var recordPath: String?
    /// Let `--record` replace a file that exists (`--force`).
    package var force = false
    /// Directory for the history and the identity (`--state-dir`); `StateDirectory` checks it.
    package var stateDirectory: String?
    /// Start without the conversation an earlier run left (`--new-chat`, D18).
    package var newChat = false
    /// Print without colour (`--no-color`).
    package var noColor = false
    /// Print the help and exit (`--help`, `-h`).
    package var showHelp = false
    /// Print the version and exit (`--version`).
    package var showVersion = false

    /// All defaults, as if run with no arguments and an empty environment.
    package init() {}

    /// True when no service URL is configured: the REPL then talks to the built-in demo store.
    package var usesDemoStore: Bool { gravityURL == nil && shoppingURL == nil }

    /// The options with the API key redacted, safe for logs.
    package var description: String {
        var parts = ["section: \(section)"]
        if apiKey != nil { parts.append("apiKey: <redacted>") }
        if let gravityURL { parts.append("gravityURL: \(gravityURL.absoluteString)") }
        if let shoppingURL { parts.append("shoppingURL: \(shoppingURL.absoluteString)") }
        parts.append("entrySelector: \(entrySelector)")
        parts.append("assistantSelector: \(assistantSelector)")
        if let width { parts.append("width: \(width)") }
        parts.append("logLevel: \(logLevel)")
        if let recordPath { parts.append("record: \(recordPath)") }
        if force { parts.append("force") }
        if let stateDirectory { parts.append("stateDir: \(stateDirectory)") }
        if newChat { parts.append("newChat") }
        if noColor { parts.append("noColor") }
        return "CommandLineOptions(" + parts.joined(separator: ", ") + ")"
    }

    // MARK: - Declarations

    /// Every option, in help order.
    package static let declarations: [OptionDeclaration<CommandLineOptions>] = [
        OptionDeclaration(
            "api-key", value: .required("key"), environment: "GRAVITY_API_KEY", secret: true,
            help: "Gravity API key. Never printed or recorded."
        ) { options, value in
            options.apiKey = value
            return nil
        },
        OptionDeclaration(
            "section", value: .required("name"), environment: "GRAVITY_SECTION", default: "demo",
            help: "Gravity section the assistant belongs to."
        ) { options, value in
            options.section = value
            return nil
        },
        OptionDeclaration(
            "gravity-url", value: .required("url"), environment: "GRAVITY_URL",
            help: "Gravity base URL, or a proxy in front of it."
        ) { options, value in
            guard let url = httpURL(value) else { return "must be an http or https URL" }
            options.gravityURL = url
            return nil
        },
        OptionDeclaration(
            "shopping-url", value: .required("url"), environment: "SHOPPING_API_URL",
            help: "Shopping API base URL."
        ) { options, value in
            guard let url = httpURL(value) else { return "must be an http or https URL" }
            options.shoppingURL = url
            return nil
        },
        OptionDeclaration(
            "entry-selector", value: .required("selector"), default: "assistant-entry",
            help: "Selector of the entry button on the app's screens."
        ) { options, value in
            options.entrySelector = value
            return nil
        },
        OptionDeclaration(
            "assistant-selector", value: .required("selector"), default: "shopping-assistant",
            help: "Selector of the assistant to open."
        ) { options, value in
            options.assistantSelector = value
            return nil
        },
        OptionDeclaration(
            "width", value: .required("columns"),
            help: "Lay out for this many columns (20-1000) instead of the terminal's width."
        ) { options, value in
            guard let columns = Int(value), (20...1000).contains(columns) else {
                return "must be a whole number from 20 to 1000"
            }
            options.width = columns
            return nil
        },
        OptionDeclaration(
            "log-level", value: .required("level"), default: "error",
            help: "Engine log level: debug, info, error or none. Errors print as [error], info and debug as notes."
        ) { options, value in
            guard let level = AssistantLogLevel.allCases.first(where: { $0.description == value }) else {
                return "must be one of debug, info, error, none"
            }
            options.logLevel = level
            return nil
        },
        OptionDeclaration(
            "record", value: .required("file"),
            help:
                "Record the session into a new transcript file, written step by step; an existing file is "
                + "refused. A session ended by a signal keeps every step that ended."
        ) { options, value in
            options.recordPath = value
            return nil
        },
        OptionDeclaration("force", help: "Let --record replace a file that exists.") { options, _ in
            options.force = true
            return nil
        },
        OptionDeclaration(
            "state-dir", value: .required("dir"),
            help:
                "Directory for the line history, the identity, the delivery queue and the conversation; created "
                + "if missing. "
                + "Without it $XDG_STATE_HOME/shopping-assistant or ~/.local/state/shopping-assistant."
        ) { options, value in
            options.stateDirectory = value
            return nil
        },
        OptionDeclaration(
            "new-chat",
            help: "Start on a new chat: the conversation an earlier run kept in the state directory is forgotten."
        ) { options, _ in
            options.newChat = true
            return nil
        },
        OptionDeclaration("no-color", help: "Print without colour; a non-empty NO_COLOR does the same.") { options, _ in
            options.noColor = true
            return nil
        },
        OptionDeclaration("version", help: "Show the version.") { options, _ in
            options.showVersion = true
            return nil
        },
        OptionDeclaration("help", short: "h", help: "Show help information.") { options, _ in
            options.showHelp = true
            return nil
        },
    ]

    private static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        return url
    }

    // MARK: - Parsing

    /// The command's table: no positional argument.
    package static let table = OptionTable(declarations)

    /// Parses `arguments` (without the program name), then fills what they left unset from
    /// `environment`. With `--help` or `--version` the environment is not validated, so
    /// help works even when a variable holds a bad value.
    package static func parse(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ParseError) -> CommandLineOptions {
        try table.parse(arguments, into: CommandLineOptions(), environment: environment) {
            $0.showHelp || $0.showVersion
        }
    }

    // MARK: - Help

    /// The usage line, shared by `--help` and error messages.
    package static let usage = "USAGE: \(programName) [<options>]"

    /// The full `--help` text, generated from `declarations`, wrapped at 80 columns, without
    /// a final newline (`print` adds it).
    package static func helpText() -> String {
        var lines = [
            "OVERVIEW: Chat with the shopping assistant from a terminal.",
            "",
            "Plays both sides of a mobile app: the host screens and the SDK's chat screen.",
            "With no --gravity-url and no --shopping-url it runs against the built-in demo",
            "store. Piped input gives plain, deterministic output for transcripts.",
            "Live services are reached over libcurl directly (CurlTransport, from the",
            "ShoppingAssistantCurl product: the transport to pick when embedding the engine",
            "on Linux), through the proxy http_proxy or https_proxy names, if any.",
            "",
            usage,
            "       \(programName) replay [<options>] <path>...   (see 'assistant replay --help')",
            "",
            "OPTIONS:",
        ]
        lines += table.helpLines()
        return lines.joined(separator: "\n")
    }
}

// MARK: - Errors

extension CommandLineOptions {
    /// A command line `assistant` rejects.
    package typealias ParseError = CommandLineError
}

extension CommandLineError {
    /// The message, `assistant`'s usage line and a pointer to its `--help`, ready for stderr.
    package var report: String {
        let program = CommandLineOptions.programName
        return "Error: \(message)\n\(CommandLineOptions.usage)\n  See '\(program) --help' for more information.\n"
    }
}
