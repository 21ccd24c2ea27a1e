import Foundation

/// A command line's options as one table — name, value name, environment variable, default
/// and help — from which both the parser and `--help` are driven, so that the help can never
/// drift from what is accepted (the shape of swift-argument-parser, which the package cannot
/// depend on). `assistant`, `assistant replay` and `assistant-bench` each declare a table.
///
/// Precedence: a flag beats its environment variable, which beats the default; an empty
/// environment variable counts as unset; repeating an option keeps the last value. A value
/// follows its option (`--width 40`) or is joined to it (`--width=40`); it may start with
/// `-` when a digit follows (`--shard -1/3` is out of range, not missing).
package struct OptionTable<Options>: Sendable {
    /// Every option, in help order.
    package let declarations: [OptionDeclaration<Options>]
    /// Stores a positional argument; `nil` for a command that takes none. After `--` every
    /// argument is positional.
    package let positional: (@Sendable (inout Options, String) -> Void)?

    package init(
        _ declarations: [OptionDeclaration<Options>], positional: (@Sendable (inout Options, String) -> Void)? = nil
    ) {
        self.declarations = declarations
        self.positional = positional
    }

    /// Parses `arguments` (without the program name) into `options`, then fills what they
    /// left unset from `environment` unless `skipsEnvironment` says the result needs none
    /// (help and version work even when a variable holds a bad value).
    package func parse(
        _ arguments: [String], into options: Options, environment: [String: String] = [:],
        skipsEnvironment: (Options) -> Bool = { _ in false }
    ) throws(CommandLineError) -> Options {
        var options = options
        var given = Set<String>()
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || !argument.hasPrefix("-") || argument == "-" {
                guard let positional else { throw CommandLineError(.unexpectedArgument(argument)) }
                positional(&options, argument)
                continue
            }
            if argument == "--" {
                onlyPositional = true
                continue
            }
            let (flag, inlineValue) = Self.split(argument)
            guard let declaration = declarations.first(where: { $0.flag == flag || $0.shortFlag == flag }) else {
                throw CommandLineError(.unknownOption(flag, suggestion: suggestion(for: flag)))
            }
            let value: String
            switch declaration.value {
            case .none:
                if inlineValue != nil { throw CommandLineError(.unexpectedValue(option: declaration.flag)) }
                value = ""
            case .inlineOnly:
                value = inlineValue ?? ""
            case .required(let valueName):
                if let inlineValue {
                    value = inlineValue
                } else if index < arguments.count, !Self.looksLikeAnOption(arguments[index]) {
                    value = arguments[index]
                    index += 1
                } else {
                    throw CommandLineError(.missingValue(option: declaration.flag, valueName: valueName))
                }
            }
            if let rejection = declaration.apply(&options, value) {
                throw CommandLineError(
                    rejection.kind(source: declaration.flag, value: declaration.isSecret ? nil : value))
            }
            given.insert(declaration.name)
        }
        if skipsEnvironment(options) { return options }
        for declaration in declarations where !given.contains(declaration.name) {
            guard let variable = declaration.environment, let value = environment[variable], !value.isEmpty else {
                continue
            }
            if let rejection = declaration.apply(&options, value) {
                throw CommandLineError(
                    rejection.kind(
                        source: "\(variable) (\(declaration.flag))", value: declaration.isSecret ? nil : value))
            }
        }
        return options
    }

    /// An option, not a value: `--name`, or `-x` with a letter (`-1/3` and `-` are values).
    private static func looksLikeAnOption(_ argument: String) -> Bool {
        argument.hasPrefix("--") || (argument.hasPrefix("-") && argument.dropFirst().first?.isLetter == true)
    }

    /// `--name=value` → (`--name`, `value`); anything else → (argument, nil).
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// The declared flag closest to a mistyped one, when it is plausibly a typo.
    private func suggestion(for flag: String) -> String? {
        let candidates = declarations.map { ($0.flag, EditDistance.between(flag, $0.flag)) }
        guard let best = candidates.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return nil }
        return best.0
    }

    /// The `OPTIONS:` lines of `--help`: each label, then its help wrapped beside it (or below
    /// a long label) so that the whole fits in `width` columns.
    package func helpLines(labelColumn: Int = 26, width: Int = 80) -> [String] {
        var lines: [String] = []
        let indent = String(repeating: " ", count: labelColumn)
        for declaration in declarations {
            var label = "  " + (declaration.shortFlag.map { "\($0), " } ?? "") + declaration.flag
            switch declaration.value {
            case .none: break
            case .inlineOnly(let valueName): label += "[=\(valueName)]"
            case .required(let valueName): label += " <\(valueName)>"
            }
            // No-break spaces keep "(env: NAME)" and "(default: value)" on one line.
            var help = declaration.help
            if let environment = declaration.environment { help += " (env:\u{a0}\(environment))" }
            if let defaultValue = declaration.defaultValue { help += " (default:\u{a0}\(defaultValue))" }
            let wrapped = DisplayWidth.wrap(help, width: width - labelColumn, maxLines: Int.max)
                .map { $0.replacingOccurrences(of: "\u{a0}", with: " ") }
            if label.count + 2 <= labelColumn, let first = wrapped.first {
                lines.append(DisplayWidth.pad(label, to: labelColumn) + first)
                lines += wrapped.dropFirst().map { indent + $0 }
            } else {
                lines.append(label)
                lines += wrapped.map { indent + $0 }
            }
        }
        return lines
    }
}

/// One row of an option table: everything the parser and `--help` need to know.
package struct OptionDeclaration<Options>: Sendable {
    /// Whether, and how, the option takes a value.
    package enum Value: Sendable, Hashable {
        /// A flag: `--force`.
        case none
        /// A value that must follow: `--width <columns>`.
        case required(String)
        /// A value only joined to the flag, which may come alone: `--bless[=interactive]`.
        case inlineOnly(String)
    }

    /// The long name without dashes, e.g. `api-key`.
    package let name: String
    /// A one-letter alias without the dash, e.g. `h`.
    package let shortName: Character?
    package let value: Value
    /// The environment variable used when the option is not given.
    package let environment: String?
    /// The value used when neither the option nor the variable is given, as shown in help.
    package let defaultValue: String?
    /// A value never echoed in errors or descriptions.
    package let isSecret: Bool
    /// One line (or so) of help.
    package let help: String
    /// Stores a value (`""` for a flag); returns why it is rejected, or nil when accepted.
    let apply: @Sendable (inout Options, String) -> OptionRejection?

    package init(
        _ name: String, short: Character? = nil, value: Value = .none, environment: String? = nil,
        default defaultValue: String? = nil, secret: Bool = false, help: String,
        apply: @escaping @Sendable (inout Options, String) -> OptionRejection?
    ) {
        self.name = name
        self.shortName = short
        self.value = value
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
    /// The placeholder shown in help and errors, if the option takes a value.
    package var valueName: String? {
        switch value {
        case .none: return nil
        case .required(let name), .inlineOnly(let name): return name
        }
    }
}

/// Why an option's value is rejected; a string literal is an invalid value's reason.
package enum OptionRejection: Sendable, Hashable, ExpressibleByStringLiteral {
    /// Not a value of the option's kind: `must be a whole number from 20 to 1000`.
    case invalid(String)
    /// Of the right kind but outside what is allowed: `use a number from 1 to 1024`.
    case outOfRange(String)

    package init(stringLiteral reason: String) { self = .invalid(reason) }

    fileprivate func kind(source: String, value: String?) -> CommandLineError.Kind {
        switch self {
        case .invalid(let reason): return .invalidValue(source: source, value: value, reason: reason)
        case .outOfRange(let reason): return .valueOutOfRange(source: source, value: value, reason: reason)
        }
    }
}

/// A command line a parser rejects. The command prints `message` its own way and exits with
/// `exitCode`: 2, as swift-argument-parser and most Unix tools do for usage errors.
package struct CommandLineError: Error, Sendable, Hashable, CustomStringConvertible {
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
        /// A value of the right kind outside what the option allows.
        case valueOutOfRange(source: String, value: String?, reason: String)
        /// A positional argument where the command takes none.
        case unexpectedArgument(String)
        /// The options together make no sense (`--repeat` with `--bless`, no path at all).
        case conflict(String)
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
            return "The value \(value.map { "'\($0)' " } ?? "")for \(source) is invalid: \(reason)."
        case .valueOutOfRange(let source, let value, let reason):
            return "The value \(value.map { "'\($0)' " } ?? "")for \(source) is out of range: \(reason)."
        case .unexpectedArgument(let argument):
            return "Unexpected argument '\(argument)'."
        case .conflict(let message):
            return message
        }
    }

    /// The message alone.
    package var description: String { message }
}
