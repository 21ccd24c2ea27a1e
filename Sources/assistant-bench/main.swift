import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// `assistant-bench`: performance figures of the engine, each measured side by side with a
// baseline in the same run. `swift run -c release assistant-bench [--quick]`.

// The baseline process of figure 7: the same binary and libraries, exiting at once.
if CommandLine.arguments.dropFirst().first == REPLStartupBench.exitAtOnceFlag { exit(0) }

let options: BenchOptions
switch BenchOptions.parse(Array(CommandLine.arguments.dropFirst())) {
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
Bench.runBlocking(options)
