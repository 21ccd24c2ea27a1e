// swift-tools-version: 6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "ShoppingAssistant",
    // The floors of actors, `Duration` and `any Clock`; nothing newer is used without an
    // `#available` fallback (`.ci/check-portable`).
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "ShoppingAssistant", targets: ["ShoppingAssistant"]),
        .library(name: "ShoppingAssistantCurl", targets: ["ShoppingAssistantCurl"]),
        .library(name: "ShoppingAssistantTesting", targets: ["ShoppingAssistantTesting"]),
        .library(name: "DemoStore", targets: ["DemoStore"]),
        .executable(name: "assistant", targets: ["assistant"]),
        .executable(name: "assistant-bench", targets: ["assistant-bench"]),
    ],
    targets: [
        // The engine: no terminal code, embeddable by any Swift tool, no system library.
        .target(name: "ShoppingAssistant", swiftSettings: swiftSettings),
        // libcurl, linked from the system (`apt-get install libcurl4-openssl-dev`).
        .systemLibrary(
            name: "CLibcurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Fixed-argument wrappers around libcurl's variadic calls, which Swift cannot call.
        .target(name: "CLibcurlShim", dependencies: ["CLibcurl"]),
        // `CurlTransport`: the engine's HTTP on libcurl directly, a product of its own so that
        // depending on the engine alone needs no -dev package.
        .target(
            name: "ShoppingAssistantCurl",
            dependencies: ["ShoppingAssistant", "CLibcurl", "CLibcurlShim"],
            swiftSettings: swiftSettings
        ),
        // Manual clock and scripted transport, public so embedders can test their hosts too.
        .target(
            name: "ShoppingAssistantTesting",
            dependencies: ["ShoppingAssistant"],
            swiftSettings: swiftSettings
        ),
        // The package's own test harness, Linux only: a loopback HTTP server on raw sockets,
        // child processes, the JSON and reply differentials, console-sized reports. Not a
        // product, so an embedder's build never compiles it.
        .target(
            name: "ShoppingAssistantTestSupport",
            dependencies: ["ShoppingAssistant"],
            swiftSettings: swiftSettings
        ),
        // The built-in backend: answers both services at the transport seam.
        .target(name: "DemoStore", dependencies: ["ShoppingAssistant"], swiftSettings: swiftSettings),
        // libedit, linked from the system (`apt-get install libedit-dev`).
        .systemLibrary(
            name: "CLibedit",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]
        ),
        // Fixed-argument wrappers around libedit's variadic calls, which Swift cannot call.
        .target(name: "CLibeditShim", dependencies: ["CLibedit"]),
        // The REPL core: screens, chat presenter, carousel, commands; reads lines via a protocol.
        // Production code: it runs on the engine's own virtual clock, never on the test library.
        .target(
            name: "AssistantREPL",
            dependencies: ["ShoppingAssistant", "ShoppingAssistantCurl", "DemoStore", "CLibeditShim"],
            swiftSettings: swiftSettings
        ),
        // Transcripts: the format, matching, diff, recorder, replayer and runner, on the hooks
        // the REPL exposes (wrap the transport, observe the output, drive the steps and the clock).
        // Not a product: the `assistant` executable is how anyone outside runs it.
        .target(
            name: "AssistantTranscripts",
            dependencies: ["AssistantREPL", "ShoppingAssistant"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "assistant",
            dependencies: ["AssistantREPL", "AssistantTranscripts", "ShoppingAssistant"],
            swiftSettings: swiftSettings
        ),
        // Benchmarks that print ratios measured side by side: `swift run -c release assistant-bench`.
        .executableTarget(
            name: "assistant-bench",
            dependencies: [
                "ShoppingAssistant", "ShoppingAssistantCurl", "ShoppingAssistantTestSupport", "DemoStore",
                "AssistantREPL", "AssistantTranscripts",
            ],
            swiftSettings: swiftSettings
        ),
        // libFuzzer target over the wire decoders and the transcript parser (see fuzz/README.md).
        .executableTarget(
            name: "WireFuzzer",
            dependencies: ["ShoppingAssistant", "ShoppingAssistantTestSupport", "AssistantTranscripts"],
            swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])]
        ),
        // glibc's count of the bytes in use on the heap, for the soak's memory curve.
        .target(name: "CHeapStatistics"),
        .testTarget(
            name: "ShoppingAssistantTests",
            dependencies: [
                "ShoppingAssistant", "ShoppingAssistantCurl", "ShoppingAssistantTesting",
                "ShoppingAssistantTestSupport", "CHeapStatistics",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DemoStoreTests",
            dependencies: ["DemoStore", "ShoppingAssistant", "ShoppingAssistantTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AssistantREPLTests",
            dependencies: [
                "AssistantREPL", "AssistantTranscripts", "ShoppingAssistant", "ShoppingAssistantTesting",
                "ShoppingAssistantTestSupport", "DemoStore",
            ],
            swiftSettings: swiftSettings
        ),
        // One test case per file in transcripts/.
        .testTarget(
            name: "TranscriptTests",
            dependencies: [
                "AssistantTranscripts", "AssistantREPL", "ShoppingAssistant", "ShoppingAssistantTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
