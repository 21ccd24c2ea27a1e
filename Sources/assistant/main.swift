import AssistantREPL
import Foundation
import ShoppingAssistant

#if canImport(Glibc)
    import Glibc
#endif

// The `assistant` executable: argument parsing and wiring, nothing else.

/// Prints a usage error the way the option parser reports one, and exits with its code (2).
func fail(_ error: CommandLineOptions.ParseError) -> Never {
    FileHandle.standardError.write(Data("assistant: \(error.description)\nTry 'assistant --help'.\n".utf8))
    exit(error.exitCode)
}

// `assistant replay …` runs transcripts as tests.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "replay" {
    exit(await TranscriptRunner.main(Array(CommandLine.arguments.dropFirst(2))))
}

let environment = ProcessInfo.processInfo.environment
let options: CommandLineOptions
do {
    options = try CommandLineOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: environment)
} catch {
    fail(error)
}
if options.showHelp {
    print(CommandLineOptions.helpText())
    exit(0)
}
if options.showVersion {
    print("assistant \(AssistantEngineConfiguration.sdkVersion)")
    exit(0)
}
let stateDirectory: StateDirectory?
do {
    // An explicit --state-dir must be usable; the default is created when first written.
    if let path = options.stateDirectory {
        stateDirectory = try StateDirectory.prepare(path)
    } else {
        stateDirectory = StateDirectory.standard(environment: environment)
    }
} catch {
    fail(error)
}

let interactive = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
let width = TerminalSize.columns(
    override: options.width, measured: TerminalSize.measuredColumns(descriptor: STDOUT_FILENO), environment: environment
)
let activeReader = Locked<(any LineReader)?>(nil)
let output = REPLOutput(style: TerminalStyle.detect(noColorFlag: options.noColor)) { line in
    if interactive, let reader = activeReader.withLock({ $0 }) { reader.printAsync(line) } else { print(line) }
}
let repl = await REPLEnvironment(
    policy: .commandLine(options, interactive: interactive, width: width, stateDirectory: stateDirectory),
    output: output)
// On the demo store, Tab also completes its SKUs and categories.
let completion = REPLSession.completion
let completer = (repl.demoStore != nil ? completion.addingDemoCatalogue() : completion).completer
let reader = LineReaderFactory.standard(
    historyPath: interactive ? stateDirectory?.historyPath : nil, completer: completer)
activeReader.withLock { $0 = reader }
// Without --width the chat follows the terminal's width; :width pins it.
if options.width == nil {
    let session = repl.session
    reader.setResizeHandler { resize in Task { await session.terminalResized(resize) } }
}

await repl.session.run(reader: reader, recorder: repl.recorder)
if let recorder = repl.recorder, let path = options.recordPath {
    do {
        try recorder.write(to: path)
        print("transcript written to \(path)")
    } catch {
        FileHandle.standardError.write(Data("assistant: cannot write \(path): \(error)\n".utf8))
        exit(1)
    }
}
exit(0)
