import AssistantREPL
import DemoStore
import Foundation
import ShoppingAssistant
import ShoppingAssistantTesting

#if canImport(Glibc)
    import Glibc
#endif

// The `assistant` executable: argument parsing and wiring, nothing else.

let environment = ProcessInfo.processInfo.environment
let options: CommandLineOptions
do {
    options = try CommandLineOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: environment)
} catch {
    FileHandle.standardError.write(Data("assistant: \(error.description)\nTry 'assistant --help'.\n".utf8))
    exit(error.exitCode)
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
let style = TerminalStyle.detect(noColorFlag: options.noColor)
let width = TerminalSize.columns(
    override: options.width, measured: TerminalSize.measuredColumns(descriptor: STDOUT_FILENO), environment: environment
)

// A piped session on the demo store runs on virtual time: deterministic, and a 120 s timeout
// takes no wall time. A terminal session, or live services, run on real time.
let virtualTime: VirtualTime? = options.usesDemoStore && !interactive ? VirtualTime() : nil
let demoStore: DemoStore? =
    options.usesDemoStore
    ? DemoStore(clock: virtualTime?.clock ?? ContinuousClock(), activity: virtualTime?.activity) : nil
let configuration = AssistantEngineConfiguration(
    apiKey: options.apiKey ?? (demoStore != nil ? "demo-key" : ""), section: options.section,
    gravityBaseURL: options.gravityURL, shoppingBaseURL: options.shoppingURL,
    logLevel: options.logLevel)
var transcriptSettings = Transcript.Settings()
transcriptSettings.width = width
transcriptSettings.section = options.section
transcriptSettings.entrySelector = options.entrySelector
transcriptSettings.assistantSelector = options.assistantSelector
let recorder = options.recordPath.map { _ in
    TranscriptRecorder(
        settings: transcriptSettings, configuration: configuration,
        summary: "A session recorded \(demoStore != nil ? "on the demo store" : "against live services").",
        clock: virtualTime?.clock ?? ContinuousClock())
}
let baseTransport: any HTTPTransport = demoStore ?? URLSessionTransport()
let transport = recorder?.recording(baseTransport) ?? baseTransport
let stateDirectory = options.stateDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
let identityURL = stateDirectory?.appendingPathComponent("identity.json") ?? FileIdentityStore.defaultLocation()
// The demo store starts every session as a fresh visitor, so sessions are reproducible.
let identityStore: any IdentityStore =
    demoStore != nil ? InMemoryIdentityStore() : FileIdentityStore(fileURL: identityURL)
// With the demo store, IDs are sequential too, so a piped session prints the same bytes every run.
let sequentialUUIDs = SequentialUUIDGenerator()
let makeUUID: @Sendable () -> UUID = { demoStore != nil ? sequentialUUIDs.next() : UUID() }
let engine = AssistantEngine(
    configuration: configuration, transport: transport, clock: virtualTime?.clock ?? ContinuousClock(),
    identityStore: identityStore, uuid: makeUUID, activity: virtualTime?.activity)

let activeReader = Locked<(any LineReader)?>(nil)
let output = REPLOutput(style: style) { line in
    if interactive, let reader = activeReader.withLock({ $0 }) { reader.printAsync(line) } else { print(line) }
}

let historyPath: String? = {
    guard interactive else { return nil }
    let base = stateDirectory ?? FileIdentityStore.defaultLocation().deletingLastPathComponent()
    return base.appendingPathComponent("history").path
}()
let completion = demoStore != nil ? REPLSession.completion.addingDemoCatalogue() : REPLSession.completion
let reader = LineReaderFactory.standard(historyPath: historyPath) { completion.candidates(for: $0) }
activeReader.withLock { $0 = reader }

// A recorded session waits for each command like a piped one, so it replays step by step.
let settings = REPLSettings(
    width: width, entrySelector: options.entrySelector, assistantSelector: options.assistantSelector,
    interactive: interactive && recorder == nil)
let session = await REPLSession(
    engine: engine, demoStore: demoStore, output: output, settings: settings, time: virtualTime)
if let recorder { output.setObserver { recorder.output($0) } }
if options.width == nil { reader.setResizeHandler { resize in Task { await session.terminalResized(resize) } } }
await session.run(reader: reader, recorder: recorder)
if let recorder, let path = options.recordPath {
    do {
        try recorder.write(to: path)
        print("transcript written to \(path)")
    } catch {
        FileHandle.standardError.write(Data("assistant: cannot write \(path): \(error)\n".utf8))
        exit(1)
    }
}
exit(0)
