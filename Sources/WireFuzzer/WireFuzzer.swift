import AssistantREPL
import Foundation
@_spi(Fuzzing) import ShoppingAssistant

// libFuzzer entry point over the wire decoders and the transcript parser. Build and run:
//   swift build -c release --product WireFuzzer -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING
//   .build/release/WireFuzzer fuzz/corpus -max_total_time=600
// A plain build (as `swift build` does for every product) links without libFuzzer and only
// explains how to build it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    WireFuzzing.decodeResponses(data)
    if let text = String(data: data, encoding: .utf8), let transcript = try? TranscriptFormat.parse(text) {
        _ = TranscriptFormat.render(transcript)
    }
    return 0
}

#if FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafeRawPointer, Int) -> CInt
    ) -> CInt

    /// The package manager links executables through `<target>_main`; hand control to libFuzzer.
    @_cdecl("WireFuzzer_main")
    public func wireFuzzerMain(
        _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> CInt {
        var count = argc
        var arguments = argv
        return runFuzzerDriver(&count, &arguments) { start, size in fuzzOneInput(start, size) }
    }
#else
    /// Without libFuzzer there is nothing to drive the entry point.
    @_cdecl("WireFuzzer_main")
    public func wireFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        let message = "WireFuzzer: build with -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING (see fuzz/README.md)\n"
        FileHandle.standardError.write(Data(message.utf8))
        return 2
    }
#endif
