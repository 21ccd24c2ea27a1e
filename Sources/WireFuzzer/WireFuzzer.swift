import AssistantTranscripts
import Foundation
import ShoppingAssistant
import ShoppingAssistantTestSupport

// libFuzzer entry point over the wire decoders and the transcript parser. Build and run:
//   swift build -c release --product WireFuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
//   .build/release/WireFuzzer fuzz/corpus -max_total_time=600
// A plain build (as `swift build` does for every product) links without libFuzzer and only
// explains how to build it.
//
// Every input goes to every decoder (none may crash, hang or trap), and through three
// differential checks, each of which traps on a disagreement so that libFuzzer keeps the input:
// - the JSON reader against Foundation's JSONSerialization (`JSONDifferential`);
// - the reply decoder against wire.md's rules applied to a JSONValue tree (`ReplyDifferential`),
//   as a /v1/messages reply and as a history message;
// - the http(s) URL check against URL(string:): whatever it accepts, URL(string:) accepts with
//   an http(s) scheme and a host.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let bytes = [UInt8](data)
    WireFuzzing.decodeResponses(data)
    if case .mismatch(let detail) = JSONDifferential.compare(bytes) {
        fatalError("JSON reader and JSONSerialization disagree: \(detail)")
    }
    for historyMessage in [false, true] {
        if let difference = ReplyDifferential.compare(bytes, historyMessage: historyMessage) {
            fatalError("reply decoder and its reference disagree (history: \(historyMessage)): \(difference)")
        }
    }
    if count < 4_096, let text = String(validating: bytes, as: UTF8.self) {
        checkURL(text)
        checkURL("https://" + text)
    }
    if let text = String(data: data, encoding: .utf8), let transcript = try? TranscriptFormat.parse(text) {
        _ = TranscriptFormat.render(transcript)
    }
    return 0
}

/// Traps if the engine accepts `text` as an http(s) URL that `URL(string:)` does not.
private func checkURL(_ text: String) {
    guard WireFuzzing.isValidHTTPURL(text) else { return }
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
        let host = url.host, !host.isEmpty
    else { fatalError("accepted as an http(s) URL, rejected by URL(string:): \(text.debugDescription)") }
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
