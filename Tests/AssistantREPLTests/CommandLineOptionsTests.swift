import Foundation
import ShoppingAssistant
import Testing

@testable import AssistantREPL

@Suite(.timeLimit(.minutes(2))) struct CommandLineOptionsTests {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws -> CommandLineOptions {
        try CommandLineOptions.parse(arguments, environment: environment)
    }

    private func error(_ arguments: [String], _ environment: [String: String] = [:]) -> CommandLineOptions.ParseError? {
        do {
            _ = try CommandLineOptions.parse(arguments, environment: environment)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Help

    @Test func helpTextIsPinned() {
        let expected = """
            OVERVIEW: Chat with the shopping assistant from a terminal.

            Plays both sides of a mobile app: the host screens and the SDK's chat screen.
            With no --gravity-url and no --shopping-url it runs against the built-in demo
            store. Piped input gives plain, deterministic output for transcripts.
            Live services are reached over libcurl directly (CurlTransport, from the
            ShoppingAssistantCurl product: the transport to pick when embedding the engine
            on Linux), through the proxy http_proxy or https_proxy names, if any.

            USAGE: assistant [<options>]
                   assistant replay [<options>] <path>...   (see 'assistant replay --help')

            OPTIONS:
              --api-key <key>         Gravity API key. Never printed or recorded.
                                      (env: GRAVITY_API_KEY)
              --section <name>        Gravity section the assistant belongs to.
                                      (env: GRAVITY_SECTION) (default: demo)
              --gravity-url <url>     Gravity base URL, or a proxy in front of it.
                                      (env: GRAVITY_URL)
              --shopping-url <url>    Shopping API base URL. (env: SHOPPING_API_URL)
              --entry-selector <selector>
                                      Selector of the entry button on the app's screens.
                                      (default: assistant-entry)
              --assistant-selector <selector>
                                      Selector of the assistant to open.
                                      (default: shopping-assistant)
              --width <columns>       Lay out for this many columns (20-1000) instead of the
                                      terminal's width.
              --log-level <level>     Engine log level: debug, info, error or none. Errors
                                      print as [error], info and debug as notes.
                                      (default: error)
              --record <file>         Record the session into a new transcript file, written
                                      step by step; an existing file is refused. A session
                                      ended by a signal keeps every step that ended.
              --force                 Let --record replace a file that exists.
              --state-dir <dir>       Directory for the line history, the identity, the
                                      delivery queue and the conversation; created if
                                      missing. Without it $XDG_STATE_HOME/shopping-assistant
                                      or ~/.local/state/shopping-assistant.
              --new-chat              Start on a new chat: the conversation an earlier run
                                      kept in the state directory is forgotten.
              --no-color              Print without colour; a non-empty NO_COLOR does the
                                      same.
              --version               Show the version.
              -h, --help              Show help information.
            """
        #expect(CommandLineOptions.helpText() == expected)
    }

    @Test func helpMentionsEveryDeclaredOptionAndItsEnvironmentVariable() {
        let help = CommandLineOptions.helpText()
        for declaration in CommandLineOptions.declarations {
            #expect(help.contains(declaration.flag))
            if let variable = declaration.environment { #expect(help.contains("(env: \(variable))")) }
        }
        for line in help.split(separator: "\n") {
            #expect(DisplayWidth.of(String(line)) <= 80, "\(line)")
        }
    }

    // MARK: - Values

    @Test func defaultsWithNoArgumentsAndNoEnvironment() throws {
        let options = try parse([])
        #expect(options == CommandLineOptions())
        #expect(options.section == "demo")
        #expect(options.entrySelector == "assistant-entry")
        #expect(options.assistantSelector == "shopping-assistant")
        #expect(options.logLevel == .error)
        #expect(options.usesDemoStore)
    }

    @Test func acceptsBothEqualsAndSeparateValueForms() throws {
        let options = try parse([
            "--section=shoes", "--width", "100", "--log-level=debug", "--record", "out.transcript",
        ])
        #expect(options.section == "shoes")
        #expect(options.width == 100)
        #expect(options.logLevel == .debug)
        #expect(options.recordPath == "out.transcript")
    }

    @Test func valueMayContainEqualsSigns() throws {
        let options = try parse(["--api-key=abc==", "--entry-selector", "a=b"])
        #expect(options.apiKey == "abc==")
        #expect(options.entrySelector == "a=b")
    }

    @Test func environmentFillsWhatArgumentsLeaveUnset() throws {
        let environment = [
            "GRAVITY_API_KEY": "env-key", "GRAVITY_SECTION": "env-section",
            "GRAVITY_URL": "https://proxy.example/v2", "SHOPPING_API_URL": "http://localhost:8080",
        ]
        let options = try parse(["--section", "flag-section"], environment)
        #expect(options.apiKey == "env-key")
        #expect(options.section == "flag-section")
        #expect(options.gravityURL == URL(string: "https://proxy.example/v2"))
        #expect(options.shoppingURL == URL(string: "http://localhost:8080"))
        #expect(!options.usesDemoStore)
    }

    @Test func emptyEnvironmentVariableCountsAsUnset() throws {
        let options = try parse([], ["GRAVITY_SECTION": "", "GRAVITY_URL": ""])
        #expect(options.section == "demo")
        #expect(options.usesDemoStore)
    }

    @Test func anApiKeyAloneStillUsesTheDemoStore() throws {
        #expect(try parse(["--api-key", "k"]).usesDemoStore)
        #expect(try !parse(["--shopping-url", "https://shop.example"]).usesDemoStore)
    }

    @Test func lastRepeatedOptionWins() throws {
        #expect(try parse(["--width", "30", "--width", "40"]).width == 40)
    }

    @Test func flagsAndShortHelp() throws {
        #expect(try parse(["--no-color"]).noColor)
        #expect(try parse(["-h"]).showHelp)
        #expect(try parse(["--version"]).showVersion)
    }

    @Test func helpIgnoresABrokenEnvironment() throws {
        #expect(try parse(["--help"], ["GRAVITY_URL": "not a url"]).showHelp)
    }

    @Test func descriptionNeverShowsTheApiKey() throws {
        let options = try parse(["--api-key", "sk-secret-123"])
        #expect(!options.description.contains("sk-secret-123"))
        #expect(options.description.contains("<redacted>"))
    }

    // MARK: - Errors

    @Test func unknownFlagIsNamedAndExitsWithTwo() throws {
        let failure = try #require(error(["--bogus"]))
        #expect(failure.kind == .unknownOption("--bogus", suggestion: nil))
        #expect(failure.exitCode == 2)
        #expect(failure.description == "Unknown option '--bogus'.")
        #expect(failure.report.contains("Unknown option '--bogus'"))
        #expect(failure.report.contains("USAGE: assistant [<options>]"))
        #expect(failure.report.contains("assistant --help"))
    }

    @Test func misspelledFlagSuggestsTheClosestOne() {
        #expect(error(["--sectoin", "x"])?.kind == .unknownOption("--sectoin", suggestion: "--section"))
        #expect(error(["--no-colour"])?.kind == .unknownOption("--no-colour", suggestion: "--no-color"))
    }

    @Test func unknownShortFlagAndUnknownFlagWithValueAreNamed() {
        #expect(error(["-x"])?.kind == .unknownOption("-x", suggestion: nil))
        #expect(error(["--frobnicate=1"])?.kind == .unknownOption("--frobnicate", suggestion: nil))
    }

    @Test func missingValueNamesTheOption() {
        #expect(error(["--section"])?.kind == .missingValue(option: "--section", valueName: "name"))
        #expect(error(["--record", "--no-color"])?.kind == .missingValue(option: "--record", valueName: "file"))
    }

    @Test func flagGivenAValueIsRejected() {
        #expect(error(["--no-color=yes"])?.kind == .unexpectedValue(option: "--no-color"))
    }

    @Test func positionalArgumentsAreRejected() {
        #expect(error(["chat"])?.kind == .unexpectedArgument("chat"))
        #expect(error(["--", "chat"])?.kind == .unexpectedArgument("chat"))
    }

    @Test func invalidValuesExplainWhy() {
        #expect(
            error(["--width", "10"])?.kind
                == .invalidValue(source: "--width", value: "10", reason: "must be a whole number from 20 to 1000"))
        #expect(
            error(["--log-level", "loud"])?.kind
                == .invalidValue(
                    source: "--log-level", value: "loud", reason: "must be one of debug, info, error, none"))
        #expect(
            error(["--gravity-url", "ftp://x"])?.kind
                == .invalidValue(source: "--gravity-url", value: "ftp://x", reason: "must be an http or https URL"))
    }

    @Test func invalidEnvironmentValueNamesTheVariable() throws {
        let failure = try #require(error([], ["SHOPPING_API_URL": "localhost"]))
        #expect(
            failure.kind
                == .invalidValue(
                    source: "SHOPPING_API_URL (--shopping-url)", value: "localhost",
                    reason: "must be an http or https URL"))
    }
}
