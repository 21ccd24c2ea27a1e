import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// `assistant-bench`: performance figures of the engine, each measured side by side with a
// baseline in the same run. `swift run -c release assistant-bench [--quick]`.

let arguments = Array(CommandLine.arguments.dropFirst())
// Internal modes of figure 7: the baseline process, and the spawn-and-measure helper.
switch arguments.first {
case REPLStartupBench.exitAtOnceFlag?: exit(0)
case REPLStartupBench.measureFlag?: exit(REPLStartupBench.measureSpawn(Array(arguments.dropFirst())))
default: break
}

let options: BenchOptions
switch BenchOptions.parse(arguments) {
case .success(let parsed):
    options = parsed
case .failure(.help):
    print(BenchOptions.usage)
    exit(0)
case .failure(.invalid(let message)):
    FileHandle.standardError.write(Data("assistant-bench: \(message)\n\n\(BenchOptions.usage)\n".utf8))
    exit(2)
}

// Synchronous on purpose: the main thread waits instead of parking in `dispatch_main`, which
// lets the bench run under valgrind (3.19 crashes on libdispatch's main-thread `sigsuspend`).
exit(Bench.runBlocking(options))
