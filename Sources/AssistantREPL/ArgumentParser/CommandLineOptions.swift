import Foundation
import ShoppingAssistant

/// The `assistant` command's options, parsed from arguments with environment fallbacks.
///
/// Every option is declared once in `declarations` — name, value name, environment variable,
/// default and help — and both the parser and `--help` are driven by that table, so the help
/// can never drift from what is accepted (the shape of swift-argument-parser, which the
/// package cannot depend on). Precedence: a flag beats its environment variable, which beats
/// the default; an empty environment variable counts as unset. Repeating an option keeps the
/// last value.
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
        if noColor { parts.append("noColor") }
        return "CommandLineOptions(" + parts.joined(separator: ", ") + ")"
    }

    // MARK: - Declarations

    /// Every option, in help order.
    package static let declarations: [OptionDeclaration] = [
        OptionDeclaration(
            "api-key", value: "key", environment: "GRAVITY_API_KEY", secret: true,
            help: "Gravity API key. Never printed or recorded."
        ) { options, value in
            options.apiKey = value
            return nil
        },
        OptionDeclaration(
            "section", value: "name", environment: "GRAVITY_SECTION", default: "demo",
            help: "Gravity section the assistant belongs to."
        ) { options, value in
            options.section = value
            return nil
        },
        OptionDeclaration(
            "gravity-url", value: "url", environment: "GRAVITY_URL",
            help: "Gravity base URL, or a proxy in front of it."
        ) { options, value in
            guard let url = httpURL(value) else { return "must be an http or https URL" }
            options.gravityURL = url
            return nil
        },
        OptionDeclaration(
            "shopping-url", value: "url", environment: "SHOPPING_API_URL",
            help: "Shopping API base URL."
        ) { options, value in
            guard let url = httpURL(value) else { return "must be an http or https URL" }
            options.shoppingURL = url
            return nil
        },
        OptionDeclaration(
            "entry-selector", value: "selector", default: "assistant-entry",
            help: "Selector of the entry button on the app's screens."
        ) { options, value in
            options.entrySelector = value
            return nil
        },
        OptionDeclaration(
            "assistant-selector", value: "selector", default: "shopping-assistant",
            help: "Selector of the assistant to open."
        ) { options, value in
            options.assistantSelector = value
            return nil
        },
        OptionDeclaration(
            "width", value: "columns",
            help: "Lay out for this many columns (20-1000) instead of the terminal's width."
        ) { options, value in
            guard let columns = Int(value), (20...1000).contains(columns) else {
                return "must be a whole number from 20 to 1000"
            }
            options.width = columns
            return nil
        },
        OptionDeclaration(
            "log-level", value: "level", default: "error",
            help: "Engine log level: debug, info, error or none. Errors print as [error], info and debug as notes."
        ) { options, value in
            guard let level = AssistantLogLevel.allCases.first(where: { $0.description == value }) else {
                return "must be one of debug, info, error, none"
            }
            options.logLevel = level
            return nil
        },
        OptionDeclaration(
            "record", value: "file",
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
            "state-dir", value: "dir",
            help:
                "Directory for the line history and, against live services, the identity; created if missing. "
                + "Without it $XDG_STATE_HOME/shopping-assistant or ~/.local/state/shopping-assistant."
        ) { options, value in
            options.stateDirectory = value
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

    /// Parses `arguments` (without the program name), then fills what they left unset from
    /// `environment`. With `--help` or `--version` the environment is not validated, so
    /// help works even when a variable holds a bad value.
    package static func parse(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ParseError) -> CommandLineOptions {
        var options = CommandLineOptions()
        var given = Set<String>()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                if index < arguments.count { throw ParseError(.unexpectedArgument(arguments[index])) }
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                throw ParseError(.unexpectedArgument(argument))
            }
            let (flag, inlineValue) = split(argument)
            guard let declaration = declaration(for: flag) else {
                throw ParseError(.unknownOption(flag, suggestion: suggestion(for: flag)))
            }
            let value: String
            if declaration.valueName == nil {
                if inlineValue != nil { throw ParseError(.unexpectedValue(option: declaration.flag)) }
                value = ""
            } else if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                value = arguments[index]
                index += 1
            } else {
                throw ParseError(.missingValue(option: declaration.flag, valueName: declaration.valueName ?? ""))
            }
            if let reason = declaration.apply(&options, value) {
                throw ParseError(
                    .invalidValue(source: declaration.flag, value: declaration.isSecret ? nil : value, reason: reason))
            }
            given.insert(declaration.name)
        }
        if options.showHelp || options.showVersion { return options }

        for declaration in declarations where !given.contains(declaration.name) {
            guard let variable = declaration.environment, let value = environment[variable], !value.isEmpty else {
                continue
            }
            if let reason = declaration.apply(&options, value) {
                throw ParseError(
                    .invalidValue(
                        source: "\(variable) (\(declaration.flag))", value: declaration.isSecret ? nil : value,
                        reason: reason))
            }
        }
        return options
    }

    /// `--name=value` → (`--name`, `value`); anything else → (argument, nil).
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    private static func declaration(for flag: String) -> OptionDeclaration? {
        declarations.first { $0.flag == flag || $0.shortFlag == flag }
    }

    /// The declared flag closest to a mistyped one, when it is plausibly a typo.
    private static func suggestion(for flag: String) -> String? {
        let candidates = declarations.map { ($0.flag, EditDistance.between(flag, $0.flag)) }
        guard let best = candidates.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return nil }
        return best.0
    }

    // MARK: - Help

    /// The usage line, shared by `--help` and error messages.
    package static let usage = "USAGE: \(programName) [<options>]"

    /// The full `--help` text, generated from `declarations`, wrapped at 80 columns, without
    /// a final newline (`print` adds it).
    package static func helpText() -> String {
        let labelColumn = 26
        let helpWidth = 80 - labelColumn
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
        for declaration in declarations {
            var label = "  " + (declaration.shortFlag.map { "\($0), " } ?? "") + declaration.flag
            if let valueName = declaration.valueName { label += " <\(valueName)>" }
            // No-break spaces keep "(env: NAME)" and "(default: value)" on one line.
            var help = declaration.help
            if let environment = declaration.environment { help += " (env:\u{a0}\(environment))" }
            if let defaultValue = declaration.defaultValue { help += " (default:\u{a0}\(defaultValue))" }
            let wrapped = DisplayWidth.wrap(help, width: helpWidth, maxLines: Int.max)
                .map { $0.replacingOccurrences(of: "\u{a0}", with: " ") }
            let indent = String(repeating: " ", count: labelColumn)
            if label.count + 2 <= labelColumn, let first = wrapped.first {
                lines.append(DisplayWidth.pad(label, to: labelColumn) + first)
                lines += wrapped.dropFirst().map { indent + $0 }
            } else {
                lines.append(label)
                lines += wrapped.map { indent + $0 }
            }
        }
        return lines.joined(separator: "\n")
    }
}

// MARK: - Declaration

/// One row of the option table: everything the parser and `--help` need to know.
package struct OptionDeclaration: Sendable {
    /// The long name without dashes, e.g. `api-key`.
    package let name: String
    /// A one-letter alias without the dash, e.g. `h`.
    package let shortName: Character?
    /// The placeholder shown in help (`<key>`); nil for a flag that takes no value.
    package let valueName: String?
    /// The environment variable used when the option is not given.
    package let environment: String?
    /// The value used when neither the option nor the variable is given, as shown in help.
    package let defaultValue: String?
    /// A value never echoed in errors or descriptions.
    package let isSecret: Bool
    /// One line (or so) of help.
    package let help: String
    /// Stores a value; returns why it is invalid, or nil when accepted.
    let apply: @Sendable (inout CommandLineOptions, String) -> String?

    init(
        _ name: String, short: Character? = nil, value: String? = nil, environment: String? = nil,
        default defaultValue: String? = nil, secret: Bool = false, help: String,
        apply: @escaping @Sendable (inout CommandLineOptions, String) -> String?
    ) {
        self.name = name
        self.shortName = short
        self.valueName = value
        self.environment = environment
        self.defaultValue = defaultValue
        self.isSecret = secret
        self.help = help
        self.apply = apply
    }

    /// `--name`.
    package var flag: String { "--" + name }
    /// `-x` when there is a short name.
    package var shortFlag: String? { shortName.map { "-\($0)" } }
}

// MARK: - Errors

extension CommandLineOptions {
    /// A command line the parser rejects. The caller prints `description` (one sentence) or
    /// `report` (with usage) to stderr and exits with `exitCode`: 2, as swift-argument-parser and
    /// most Unix tools do for usage errors.
    package struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What went wrong; every case names the offending flag or argument.
        package enum Kind: Sendable, Hashable {
            /// A flag nobody declared, with the closest declared one if it looks like a typo.
            case unknownOption(String, suggestion: String?)
            /// An option that needs a value came last or was followed by another option.
            case missingValue(option: String, valueName: String)
            /// A flag that takes no value got one (`--no-color=yes`).
            case unexpectedValue(option: String)
            /// A value the option does not accept. `value` is nil for secrets.
            case invalidValue(source: String, value: String?, reason: String)
            /// A positional argument; the command takes none.
            case unexpectedArgument(String)
        }

        /// What went wrong.
        package let kind: Kind

        /// Wraps a kind.
        package init(_ kind: Kind) {
            self.kind = kind
        }

        /// The process exit code for a usage error.
        package var exitCode: Int32 { 2 }

        /// One sentence naming the problem.
        package var message: String {
            switch kind {
            case .unknownOption(let flag, let suggestion):
                return "Unknown option '\(flag)'." + (suggestion.map { " Did you mean '\($0)'?" } ?? "")
            case .missingValue(let option, let valueName):
                return "Missing value for '\(option) <\(valueName)>'."
            case .unexpectedValue(let option):
                return "The option '\(option)' does not take a value."
            case .invalidValue(let source, let value, let reason):
                let shown = value.map { "'\($0)' " } ?? ""
                return "The value \(shown)for \(source) is invalid: \(reason)."
            case .unexpectedArgument(let argument):
                return "Unexpected argument '\(argument)'."
            }
        }

        /// The message alone.
        package var description: String { message }

        /// The message, the usage line and a pointer to `--help`, ready for stderr.
        package var report: String {
            let program = CommandLineOptions.programName
            return "Error: \(message)\n\(CommandLineOptions.usage)\n  See '\(program) --help' for more information.\n"
        }
    }
}
