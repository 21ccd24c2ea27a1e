import AssistantREPL
import AssistantTranscripts
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
let interactive = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
let measured = TerminalSize.measuredColumns(descriptor: STDOUT_FILENO)
let width = TerminalSize.columns(override: options.width, measured: measured, environment: environment)
let stateDirectory: StateDirectory?
do {
    // An explicit --state-dir must be usable; the default is created when first written, and
    // one that cannot be is left out with one warning (history, and live identity, in memory).
    let resolved = try StateDirectory.resolve(
        explicit: options.stateDirectory, environment: environment, history: interactive,
        identity: !options.usesDemoStore)
    stateDirectory = resolved.directory
    if let warning = resolved.warning {
        let lines = TextLayout.fit(warning, width: width).joined(separator: "\n")
        FileHandle.standardError.write(Data((lines + "\n").utf8))
    }
} catch {
    fail(error)
}

// With --width in a terminal, `:width auto` goes back to the terminal's own width.
let terminalWidth =
    options.width != nil && measured != nil
    ? TerminalSize.columns(override: nil, measured: measured, environment: environment) : nil
// On the demo store, Tab also completes its SKUs and categories.
let completion = REPLSession.completion
let reader = LineReaderFactory.standard(
    historyPath: interactive ? stateDirectory?.historyPath : nil,
    completer: (options.usesDemoStore ? completion.addingDemoCatalogue() : completion).completer,
    hinter: { REPLSession.hint(for: $0) })
// A terminal without cursor control (TERM=dumb) gets no escape byte at all: no colour either.
let plainTerminal = (reader as? LibeditLineReader)?.hasCursorControl == false
let output = REPLOutput(style: TerminalStyle.detect(noColorFlag: options.noColor || plainTerminal)) {
    (lines: [String]) in
    if interactive { reader.printAsync(lines.joined(separator: "\n")) } else { for line in lines { print(line) } }
}
// A recording's file is created before anything else happens: one that exists is refused
// (unless --force), one that cannot be written is said at once, in one line.
var recordFile: RecordingFile?
if let path = options.recordPath {
    do {
        recordFile = try RecordingFile.create(path, replacing: options.force)
    } catch {
        FileHandle.standardError.write(Data("assistant: \(error)\n".utf8))
        exit(2)
    }
}
let policy = REPLEnvironment.Policy.commandLine(
    options, interactive: interactive, width: width, terminalWidth: terminalWidth, stateDirectory: stateDirectory)
let repl: REPLEnvironment
let recorder: TranscriptRecorder?
if options.recordPath != nil {
    (repl, recorder) = await TranscriptRecorder.recordedEnvironment(
        policy: policy, output: output, summary: TranscriptRecorder.summary(onDemoStore: options.usesDemoStore),
        file: recordFile)
} else {
    (repl, recorder) = (await REPLEnvironment(policy: policy, output: output), nil)
}
// The chat follows the terminal's width unless --width or :width fixed it (until :width auto);
// a recording follows none, as its transcript knows only its %width.
if options.recordPath == nil {
    let session = repl.session
    reader.setResizeHandler { resize in Task { await session.terminalResized(resize) } }
}

// A signal ends a recorded session with the steps that ended written out. In a terminal,
// Ctrl-C belongs to the line editor (it ends a wait), so SIGINT is left to it.
if let recorder {
    RecordingSignals.install(interactive ? [SIGTERM, SIGHUP] : [SIGTERM, SIGHUP, SIGINT], finishing: recorder) {
        FileHandle.standardError.write(Data("assistant: \($0)\n".utf8))
    }
}

await repl.session.run(reader: reader, observer: recorder)
if let recorder, let path = options.recordPath {
    do {
        try recorder.finish()
        print("transcript written to \(path)")
    } catch {
        FileHandle.standardError.write(Data("assistant: \(error)\n".utf8))
        exit(1)
    }
}
exit(0)
